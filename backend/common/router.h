#pragma once
// Method + path-pattern routing with "{param}" segments. Matching works on the raw path so that
// an encoded "/" (%2F) inside a parameter stays inside that parameter and can never walk the tree.

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

struct Route {
  std::string method;
  std::string pattern;
  Access access;
  Handler handler;
  std::vector<std::string> segments;  // pattern split on '/'
};

class Router {
 public:
  void add(std::string method, std::string pattern, Access access, Handler handler);

  struct Match {
    const Route* route = nullptr;
    std::map<std::string, std::string> params;
    std::vector<std::string> allowed_methods;  // when the path exists but not for this method
    bool bad_encoding = false;                 // a parameter with a malformed %-escape
  };
  // raw_path: the request target before '?', not decoded.
  Match match(std::string_view method, std::string_view raw_path) const;
  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
};

std::vector<std::string> split_path(std::string_view path);

}  // namespace podium::http
