#pragma once
// A JSON-speaking wrapper around podium::client::HttpClient for tests.
//
//   Api admin(server.url(), server.admin_token());
//   auto r = admin.post("/api/v1/clusters", {{"name", "c1"}, {"accelerator", "cpu-1"}});
//   ASSERT_EQ(r.status, 201) << r;               // prints method, path, status and body
//   std::string id = r.json["id"];
//   EXPECT_TRUE(is_problem(admin.get("/api/v1/nope"), 404));
//
// A transport failure (connection refused, reset, timeout) is status 0 with `error` set.

#include <chrono>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace podium::it {

struct Reply {
  std::string method;
  std::string path;
  int status = 0;  // 0: no response (see error)
  std::string error;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-case
  std::string body;
  nlohmann::json json;  // parsed body; discarded (is_discarded()) when not JSON
  std::chrono::milliseconds elapsed{0};

  std::optional<std::string> header(const std::string& lower_name) const;
  std::string content_type() const { return header("content-type").value_or(""); }
  // "POST /api/v1/x -> 400 (12 ms) {body...}" with the body cut at 2000 bytes.
  std::string describe() const;
};
std::ostream& operator<<(std::ostream& os, const Reply& r);

class Api {
 public:
  Api() = default;
  Api(std::string base_url, std::string token = {});

  // body: a JSON value sent as application/json; a null json sends no body.
  Reply call(const std::string& method, const std::string& path,
             const nlohmann::json& body = nullptr,
             const std::vector<std::pair<std::string, std::string>>& headers = {}) const;
  // The body sent byte for byte (malformed JSON, huge bodies).
  Reply raw(const std::string& method, const std::string& path, const std::string& body,
            const std::vector<std::pair<std::string, std::string>>& headers = {}) const;

  Reply get(const std::string& path) const { return call("GET", path); }
  Reply post(const std::string& path, const nlohmann::json& body = nullptr) const {
    return call("POST", path, body);
  }
  Reply patch(const std::string& path, const nlohmann::json& body) const {
    return call("PATCH", path, body);
  }
  Reply del(const std::string& path) const { return call("DELETE", path); }

  const std::string& base_url() const { return base_url_; }
  const std::string& token() const { return token_; }
  Api with_token(std::string token) const { return Api(base_url_, std::move(token)); }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }

 private:
  std::string base_url_;
  std::string token_;
  std::chrono::milliseconds timeout_{30000};
};

// Fails the test (ADD_FAILURE, the test goes on) when the response does not conform to
// docs/openapi.yaml: its status, Content-Type and body schema (support/openapi_contract.h).
// Api::call and Api::raw check every response they receive; a test that reads responses another
// way calls this itself.
void check_against_contract(const Reply& r);
// The same for one event of an event stream read from GET `path` (its name and JSON data).
void check_event_against_contract(const std::string& path, const std::string& event,
                                  const std::string& data);

// Percent-encodes a path segment or query value.
std::string enc(const std::string& s);

// Every error body: status as expected, Content-Type application/problem+json, a JSON object
// with type (string), title (string), status (== the HTTP status) and detail (string).
::testing::AssertionResult is_problem(const Reply& r, int status);
// is_problem(r, 400 or 422) and errors[] has an entry whose field is `field`, or an element or
// member of it ("command[1]" and "labels.a" name "command" and "labels").
::testing::AssertionResult has_field_error(const Reply& r, const std::string& field);

// GET path?limit=N, following next_cursor to the end (from `start_cursor` when given). Fails the
// test (returns what it read) when a page is not 200, is larger than the limit, or the walk does
// not end. `path` may carry filters ("/api/v1/runs?tag=x"), not a cursor.
struct PageWalk {
  std::vector<nlohmann::json> items;
  int pages = 0;
  bool ok = true;
};
PageWalk walk_pages(const Api& api, const std::string& path, int limit, int max_pages = 1000,
                    const std::string& start_cursor = "");

// The "id" of every item.
std::vector<std::string> ids_of(const std::vector<nlohmann::json>& items);

// A readable text table (first row: header) for failure messages.
std::string format_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace podium::it
