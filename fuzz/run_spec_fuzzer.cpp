// Run spec validation and planning inputs: any JSON value gives a spec or field errors.
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "engine/core/executors/executor.h"
#include "engine/core/spec/run_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  auto r = podium::core::parse_run_spec(j);
  if (r.value)
    (void)podium::core::to_json(*r.value).dump(-1, ' ', false,
                                               nlohmann::json::error_handler_t::replace);
  auto e = podium::core::parse_executor(j);
  if (e.value) (void)podium::core::to_json(*e.value);
  return 0;
}
