// The client's Server-Sent Events parser, fed the bytes in chunks of every size the input
// chooses (the first byte).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/client/http_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 64;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  podium::client::SseParser parser;
  size_t events = 0;
  for (size_t at = 0; at < bytes.size(); at += chunk) {
    if (!parser.feed(bytes.substr(at, chunk), [&](const std::string&, const std::string&) {
          return ++events < 1000;
        }))
      break;
  }
  return 0;
}
