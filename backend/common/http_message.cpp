#include "backend/common/http_message.h"

#include <algorithm>
#include <cctype>

namespace podium::http {
namespace {
bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<std::string_view> Request::header(std::string_view lower_name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, lower_name)) return std::string_view(v);
  return std::nullopt;
}

std::optional<std::string> Request::query_param(std::string_view name) const {
  for (const auto& [k, v] : query)
    if (k == name) return v;
  return std::nullopt;
}

void Response::set_header(std::string name, std::string value) {
  for (auto& [k, v] : headers) {
    if (iequals(k, name)) {
      v = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::move(name), std::move(value));
}

std::optional<std::string_view> Response::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return std::string_view(v);
  return std::nullopt;
}

Response Response::json(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  r.set_header("Content-Type", "application/json");
  return r;
}

Response Response::text(int status, std::string body, std::string content_type) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  r.set_header("Content-Type", std::move(content_type));
  return r;
}

Response Response::empty(int status) {
  Response r;
  r.status = status;
  return r;
}

std::optional<std::string> decode_percent(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      int hi = hex_value(in[i + 1]);
      int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      char decoded = static_cast<char>(hi * 16 + lo);
      if (decoded == '\0') return std::nullopt;
      out.push_back(decoded);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view q) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view part = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    auto key = decode_percent(part.substr(0, eq), true);
    auto value = decode_percent(
        eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1), true);
    if (!key || !value) return std::nullopt;
    out.emplace_back(std::move(*key), std::move(*value));
  }
  return out;
}

bool parse_target(std::string_view target, std::string& path,
                  std::vector<std::pair<std::string, std::string>>& query) {
  if (target.empty() || target.front() != '/') return false;
  const size_t q = target.find('?');
  auto decoded_path = decode_percent(target.substr(0, q), false);
  auto decoded_query = q == std::string_view::npos
                           ? std::make_optional<std::vector<std::pair<std::string, std::string>>>()
                           : parse_query(target.substr(q + 1));
  if (!decoded_path || !decoded_query) return false;
  path = std::move(*decoded_path);
  query = std::move(*decoded_query);
  return true;
}

}  // namespace podium::http
