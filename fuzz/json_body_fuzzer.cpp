// The JSON body reader every POST goes through: any bytes give an object or a Problem (400,
// 413), never a crash, a hang or another exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "backend/common/json_input.h"
#include "backend/common/problem.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  podium::http::Request req;
  req.method = "POST";
  req.body.assign(reinterpret_cast<const char*>(data), size);
  req.headers.emplace_back("content-type", "application/json");
  try {
    auto j = podium::http::parse_json_object(req);
    podium::http::ObjectReader in(j);
    in.string("name", false, 128);
    in.integer("steps", false, 0, 1000000);
    in.number("price", false, 0, 1e6);
    in.object("labels", false, true);
    in.string_array("tags", false, 10);
    in.reject_unknown_fields();
    in.finish();
  } catch (const podium::http::Problem&) {
  }
  return 0;
}
