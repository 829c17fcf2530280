// Request targets: percent-decoding, query parsing and route matching on any bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "backend/common/http_message.h"
#include "backend/common/router.h"

namespace {

podium::http::Router& router() {
  static podium::http::Router r = [] {
    podium::http::Router out;
    auto ok = [](podium::http::RequestContext&) { return podium::http::Response{}; };
    for (const char* p : {"/api/v1/runs", "/api/v1/runs/{id}", "/api/v1/runs/{id}/logs/stream",
                          "/api/v1/clusters/{id}/workers", "/api/v1/agent/attempts/{id}/status"})
      out.add("GET", p, podium::http::Access::reader, ok);
    return out;
  }();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view target(reinterpret_cast<const char*>(data), size);
  const size_t q = target.find('?');
  auto path = podium::http::decode_percent(target.substr(0, q), false);
  if (q != std::string_view::npos) (void)podium::http::parse_query(target.substr(q + 1));
  if (path) {
    (void)router().match("GET", *path);
    (void)router().match("POST", *path);
  }
  (void)router().match("GET", target);
  return 0;
}
