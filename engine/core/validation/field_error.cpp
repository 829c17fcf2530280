#include "engine/core/validation/field_error.h"

namespace podium::core {

nlohmann::json to_json(const FieldError& error) {
  return {{"field", error.field}, {"message", error.message}};
}

}  // namespace podium::core
