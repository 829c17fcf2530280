#include "backend/common/router.h"

#include <algorithm>

namespace podium::http {

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) out.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

void Router::add(std::string method, std::string pattern, Access access, Handler handler,
                 RouteTraits traits) {
  Route r{std::move(method),  pattern,           access,
          std::move(handler), std::move(traits), split_path(pattern)};
  routes_.push_back(std::move(r));
}

RouteTraits Router::traits(std::string_view method, std::string_view target) const {
  const auto m = match(method, target.substr(0, target.find('?')));
  return m.route ? m.route->traits : RouteTraits{};
}

Router::Match Router::match(std::string_view method, std::string_view raw_path) const {
  Match result;
  const auto segments = split_path(raw_path);
  // HEAD is served by GET routes (the HTTP layer drops the body).
  const std::string_view effective = method == "HEAD" ? std::string_view("GET") : method;
  for (const auto& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    std::map<std::string, std::string> params;
    bool ok = true;
    bool bad = false;
    for (size_t i = 0; i < segments.size() && ok; ++i) {
      const std::string& p = route.segments[i];
      if (p.size() > 2 && p.front() == '{' && p.back() == '}') {
        auto decoded = decode_percent(segments[i], false);
        if (!decoded) {
          bad = true;
          continue;
        }
        params[p.substr(1, p.size() - 2)] = std::move(*decoded);
      } else if (p != segments[i]) {
        ok = false;
      }
    }
    if (!ok) continue;
    if (route.method != effective) {
      if (std::find(result.allowed_methods.begin(), result.allowed_methods.end(), route.method) ==
          result.allowed_methods.end())
        result.allowed_methods.push_back(route.method);
      continue;
    }
    if (bad) {
      result.bad_encoding = true;
      return result;
    }
    result.route = &route;
    result.params = std::move(params);
    return result;
  }
  return result;
}

}  // namespace podium::http
