#pragma once
// Method + path-pattern routing with "{param}" segments. Matching works on the raw path so that
// an encoded "/" (%2F) inside a parameter stays inside that parameter and can never walk the tree.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/common/http_message.h"
#include "backend/common/principal.h"

namespace podium::http {

// Who may call a route. Finer rules (members manage only their own runs) live in handlers.
enum class Access {
  open,    // no credentials: /healthz, login, static files
  reader,  // any signed-in user: admin, member, viewer
  writer,  // admin or member
  admin,   // admin only
  agent,   // worker tokens only (for their own cluster)
};

struct RequestContext {
  const Request& request;
  std::map<std::string, std::string> params;
  std::optional<Principal> principal;
  std::string route;  // the pattern, e.g. "/api/v1/runs/{id}" (a low-cardinality metrics label)

  const std::string& param(const std::string& name) const { return params.at(name); }
};

using Handler = std::function<Response(RequestContext&)>;

// The handler threads a route's requests run on. Liveness (agent heartbeats) has a small pool
// of its own and database connections reserved for it, so it never waits behind other work and
// is never refused for a full queue.
enum class Lane { standard, liveness };

// A body larger than the server's limit (code bundle uploads): its own limit, and a deadline
// for the whole request instead of the read deadline.
struct LargeBody {
  size_t max_bytes = 0;
  std::chrono::seconds deadline{0};
};

// What the HTTP layer reads from the route table once a request's head has arrived, before it
// reads the body or picks a handler thread.
struct RouteTraits {
  Lane lane = Lane::standard;
  std::optional<LargeBody> large_body;  // nullopt: the server's body limit and read deadline
};

// The route table's words for the two exceptions to the defaults.
inline RouteTraits liveness_lane() {
  return {Lane::liveness, std::nullopt};
}
inline RouteTraits large_body(size_t max_bytes, std::chrono::seconds deadline) {
  return {Lane::standard, LargeBody{max_bytes, deadline}};
}

struct Route {
  std::string method;
  std::string pattern;
  Access access;
  Handler handler;
  RouteTraits traits;
  std::vector<std::string> segments;  // pattern split on '/'
};

class Router {
 public:
  void add(std::string method, std::string pattern, Access access, Handler handler,
           RouteTraits traits = {});

  struct Match {
    const Route* route = nullptr;
    std::map<std::string, std::string> params;
    std::vector<std::string> allowed_methods;  // when the path exists but not for this method
    bool bad_encoding = false;                 // a parameter with a malformed %-escape
  };
  // raw_path: the request target before '?', not decoded.
  Match match(std::string_view method, std::string_view raw_path) const;
  // The traits of the route a request target (query included) reaches; defaults when none.
  RouteTraits traits(std::string_view method, std::string_view target) const;
  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
};

std::vector<std::string> split_path(std::string_view path);

}  // namespace podium::http
