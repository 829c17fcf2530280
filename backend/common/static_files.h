#pragma once
// Serves the built dashboard. Unknown paths outside /api fall back to index.html (client-side
// routing); a path that resolves outside the web root is refused, whatever its encoding.

#include <optional>
#include <string>

#include "backend/common/http_message.h"

namespace podium::http {

class StaticFiles {
 public:
  explicit StaticFiles(std::string root);  // "" or a missing directory: nothing is served
  bool enabled() const { return !root_.empty(); }
  // nullopt: not a static path (caller answers 404).
  std::optional<Response> serve(const Request& req) const;

 private:
  std::string root_;  // canonical, no trailing slash
};

std::string content_type_for(const std::string& path);

}  // namespace podium::http
