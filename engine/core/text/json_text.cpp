#include "engine/core/text/json_text.h"

namespace podium::core {

std::string json_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace podium::core
