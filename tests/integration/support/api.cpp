#include "tests/integration/support/api.h"

#include <algorithm>

#include "engine/client/http_client.h"
#include "tests/integration/support/openapi_contract.h"

namespace podium::it {

using Clock = std::chrono::steady_clock;

std::optional<std::string> Reply::header(const std::string& lower_name) const {
  for (const auto& [k, v] : headers)
    if (k == lower_name) return v;
  return std::nullopt;
}

std::string Reply::describe() const {
  std::string out = method + " " + path + " -> ";
  if (status == 0) return out + "no response: " + error;
  out += std::to_string(status) + " (" + std::to_string(elapsed.count()) + " ms)";
  if (!body.empty()) out += " " + (body.size() > 2000 ? body.substr(0, 2000) + "..." : body);
  return out;
}

std::ostream& operator<<(std::ostream& os, const Reply& r) {
  return os << r.describe();
}

Api::Api(std::string base_url, std::string token)
    : base_url_(std::move(base_url)), token_(std::move(token)) {}

Reply Api::call(const std::string& method, const std::string& path, const nlohmann::json& body,
                const std::vector<std::pair<std::string, std::string>>& headers) const {
  return raw(method, path, body.is_null() ? std::string() : body.dump(), headers);
}

Reply Api::raw(const std::string& method, const std::string& path, const std::string& body,
               const std::vector<std::pair<std::string, std::string>>& headers) const {
  client::HttpClient http(base_url_, token_);
  client::RequestOptions o;
  o.timeout = timeout_;
  o.headers = headers;
  Reply r;
  r.method = method;
  r.path = path;
  const auto started = Clock::now();
  auto res = http.request(method, path, body, o);
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  if (!res.ok()) {
    r.error = res.error ? res.error->message : "unknown error";
    return r;
  }
  r.status = res.response->status;
  r.headers = res.response->headers;
  r.body = res.response->body;
  r.json = nlohmann::json::parse(r.body, nullptr, false);
  check_against_contract(r);
  return r;
}

void check_against_contract(const Reply& r) {
  const auto verdict =
      OpenApiContract::shared().check(r.method, r.path, r.status, r.content_type(), r.body);
  count_contract_verdict(verdict);
  if (verdict.errors.empty()) return;
  std::string why;
  for (const auto& e : verdict.errors) why += "\n  " + e;
  ADD_FAILURE() << "the response does not conform to docs/openapi.yaml (" << verdict.operation
                << "):" << why << "\n"
                << r.describe();
}

void check_event_against_contract(const std::string& path, const std::string& event,
                                  const std::string& data) {
  const auto verdict = OpenApiContract::shared().check_event(path, event, data);
  count_contract_verdict(verdict);
  if (verdict.errors.empty()) return;
  std::string why;
  for (const auto& e : verdict.errors) why += "\n  " + e;
  ADD_FAILURE() << "an event of GET " << path << " does not conform to docs/openapi.yaml ("
                << verdict.operation << "):" << why << "\n  data: " << data.substr(0, 2000);
}

std::string enc(const std::string& s) {
  return client::percent_encode(s);
}

::testing::AssertionResult is_problem(const Reply& r, int status) {
  if (r.status != status)
    return ::testing::AssertionFailure() << "expected status " << status << ": " << r.describe();
  const std::string ct = r.content_type();
  if (ct.rfind("application/problem+json", 0) != 0)
    return ::testing::AssertionFailure()
           << "Content-Type is '" << ct << "', not application/problem+json: " << r.describe();
  if (!r.json.is_object())
    return ::testing::AssertionFailure() << "body is not a JSON object: " << r.describe();
  for (const char* k : {"type", "title", "detail"})
    if (!r.json.contains(k) || !r.json[k].is_string())
      return ::testing::AssertionFailure()
             << "problem has no string '" << k << "': " << r.describe();
  if (!r.json.contains("status") || !r.json["status"].is_number_integer() ||
      r.json["status"].get<int>() != status)
    return ::testing::AssertionFailure()
           << "problem's status is not " << status << ": " << r.describe();
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult has_field_error(const Reply& r, const std::string& field) {
  if (r.status != 400 && r.status != 422)
    return ::testing::AssertionFailure()
           << "expected 400/422 naming '" << field << "': " << r.describe();
  if (auto p = is_problem(r, r.status); !p) return p;
  if (!r.json.contains("errors") || !r.json["errors"].is_array())
    return ::testing::AssertionFailure() << "no errors[] array: " << r.describe();
  for (const auto& e : r.json["errors"]) {
    if (!e.is_object() || !e.contains("field") || !e.contains("message") ||
        !e["message"].is_string())
      return ::testing::AssertionFailure()
             << "malformed errors[] entry " << e.dump() << ": " << r.describe();
    if (!e["field"].is_string()) continue;
    const std::string f = e["field"].get<std::string>();
    // "command" is named by "command" itself or by an element or member: "command[1]", "labels.a".
    if (f == field || (f.size() > field.size() && f.compare(0, field.size(), field) == 0 &&
                       (f[field.size()] == '[' || f[field.size()] == '.')))
      return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "errors[] does not name '" << field << "': " << r.describe();
}

PageWalk walk_pages(const Api& api, const std::string& path, int limit, int max_pages,
                    const std::string& start_cursor) {
  PageWalk w;
  std::string cursor = start_cursor;
  const std::string sep = path.find('?') == std::string::npos ? "?" : "&";
  for (;;) {
    std::string url = path + sep + "limit=" + std::to_string(limit);
    if (!cursor.empty()) url += "&cursor=" + enc(cursor);
    auto r = api.get(url);
    ++w.pages;
    if (r.status != 200 || !r.json.is_object() || !r.json.contains("items") ||
        !r.json["items"].is_array() || !r.json.contains("next_cursor")) {
      ADD_FAILURE() << "page " << w.pages << " of " << path << ": " << r;
      w.ok = false;
      return w;
    }
    if (static_cast<int>(r.json["items"].size()) > limit) {
      ADD_FAILURE() << "page " << w.pages << " of " << path << " has " << r.json["items"].size()
                    << " items, more than limit=" << limit;
      w.ok = false;
    }
    for (const auto& item : r.json["items"]) w.items.push_back(item);
    const auto& next = r.json["next_cursor"];
    if (next.is_null()) return w;
    if (!next.is_string() || next.get<std::string>().empty()) {
      ADD_FAILURE() << "next_cursor is neither null nor a string: " << r;
      w.ok = false;
      return w;
    }
    if (r.json["items"].empty()) {
      ADD_FAILURE() << "an empty page with a next_cursor: " << r;
      w.ok = false;
      return w;
    }
    cursor = next.get<std::string>();
    if (w.pages >= max_pages) {
      ADD_FAILURE() << path << ": still a next_cursor after " << max_pages << " pages";
      w.ok = false;
      return w;
    }
  }
}

std::vector<std::string> ids_of(const std::vector<nlohmann::json>& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.value("id", std::string("<no id>")));
  return out;
}

std::string format_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < rows[r].size(); ++c) {
      out += rows[r][c];
      if (c + 1 < rows[r].size()) out += std::string(width[c] - rows[r][c].size() + 2, ' ');
    }
    out += "\n";
    if (r == 0) {
      size_t total = 0;
      for (size_t c = 0; c < width.size(); ++c) total += width[c] + (c + 1 < width.size() ? 2 : 0);
      out += std::string(total, '-') + "\n";
    }
  }
  return out;
}

}  // namespace podium::it
