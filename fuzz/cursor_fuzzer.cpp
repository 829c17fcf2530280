// Pagination cursors come from clients: any text decodes to a position only with a valid MAC.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "backend/common/cursor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string_view key = "0123456789abcdef0123456789abcdef";
  auto position = podium::http::decode_cursor(key, text);
  // A forged cursor must never decode; one this key made must round-trip.
  if (position) {
    const auto again = podium::http::encode_cursor(key, *position);
    if (!podium::http::decode_cursor(key, again)) std::abort();
  }
  return 0;
}
