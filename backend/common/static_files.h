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

// Everything the dashboard loads comes from this server: no inline script, no external origin,
// no framing. Styles set through the CSSOM (uPlot, Preact) are not inline style elements, so
// style-src needs no 'unsafe-inline'; the data: images are the favicon and uPlot's none.
inline constexpr const char* kDashboardContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'";

}  // namespace podium::http
