// The server's YAML configuration: any file gives a configuration or one error line.
#include <cstddef>
#include <cstdint>
#include <string>

#include "backend/common/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  podium::ConfigSources s;
  s.yaml_text = std::string(reinterpret_cast<const char*>(data), size);
  (void)podium::load_config(s);
  return 0;
}
