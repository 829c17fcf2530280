#include "backend/notify/event_types.h"

#include <algorithm>

namespace podium::notify {

bool is_event_type(std::string_view name) {
  return std::find(kEventTypes.begin(), kEventTypes.end(), name) != kEventTypes.end();
}

}  // namespace podium::notify
