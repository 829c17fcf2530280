// Accelerator and topology names, then the MaxText/JAX mesh check with arbitrary axis sizes:
// first line the accelerator, then "axis=value" lines (ici_ or dcn_), then "slices=N".
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/core/topology/accelerator.h"
#include "engine/core/topology/mesh.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t nl = text.find('\n');
  const auto parsed = podium::core::parse_accelerator(text.substr(0, nl));
  if (!parsed.value || nl == std::string::npos) return 0;
  (void)podium::core::summary(*parsed.value);
  int slices = 1;
  podium::core::MeshRequest req = podium::core::mesh_request_for(*parsed.value, 1);
  size_t start = nl + 1;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 >= line.size() || line.size() > 64) continue;
    long v = 0;
    try {
      v = std::stol(line.substr(eq + 1));
    } catch (...) {
      continue;
    }
    if (v < -4 || v > 1 << 20) continue;
    const std::string key = line.substr(0, eq);
    if (key == "slices") {
      slices = static_cast<int>(v < 1 ? 1 : (v > 4096 ? 4096 : v));
    } else if (key.rfind("dcn_", 0) == 0) {
      req.dcn[key.substr(4)] = static_cast<int>(v);
    } else {
      req.ici[key.rfind("ici_", 0) == 0 ? key.substr(4) : key] = static_cast<int>(v);
    }
  }
  req.num_slices = slices;
  auto r = podium::core::check_mesh(req);
  // As the server serializes (invalid UTF-8 from a hand-made request is replaced, not thrown).
  (void)podium::core::to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  (void)podium::core::propose_mesh_alternatives(req, 3);
  return 0;
}
