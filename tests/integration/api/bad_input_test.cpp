// Hostile and broken input: malformed bodies, oversized requests, slow clients, injection-looking
// strings, path traversal, forged cursors, unknown routes and methods. After each, the stored
// data is unchanged (where the request must not store anything), the error is problem+json, and
// the server still answers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "tests/integration/support/podium.h"
#include "tests/integration/support/raw_http.h"

namespace podium::it {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Everything the API lists, for before/after comparisons.
json snapshot(const Api& admin) {
  json out;
  for (const char* path : {"/api/v1/clusters?limit=500", "/api/v1/datasets?limit=500",
                           "/api/v1/runs?limit=500", "/api/v1/users?limit=500"}) {
    auto r = admin.get(path);
    EXPECT_EQ(r.status, 200) << r;
    // waiting_reason is the scheduler's running commentary on a queued run (it writes it on its
    // own clock, whatever the requests do): not data a request could have damaged.
    if (r.json.contains("items") && r.json["items"].is_array())
      for (auto& item : r.json["items"]) item.erase("waiting_reason");
    out[path] = r.json;
  }
  return out;
}

class BadInput : public PodiumTest {
 protected:
  Podium::Options options() const override {
    // A short read deadline for the slow-client tests; the body and header limits are the
    // defaults (8 MiB, 16 KiB).
    return {{"limits.read_timeout_seconds=2"}, "server"};
  }
  void SetUp() override {
    PodiumTest::SetUp();
    if (IsSkipped()) return;
    admin_ = podium().admin();
    member_ = podium().create_user("member");
    podium().create_cluster("base", "cpu-1", {{"labels", {{"k", "v"}}}});
    podium().create_dataset(member_.api, "base-ds");
    podium().submit_run(member_.api, "base", "base-run");
    before_ = snapshot(admin_);
  }
  // The data is as SetUp left it, and the server is alive.
  void expect_unchanged() {
    EXPECT_EQ(podium().anonymous().get("/healthz").status, 200) << "the server stopped answering";
    EXPECT_EQ(snapshot(admin_), before_) << "a rejected request changed the stored data";
  }
  Api admin_;
  User member_;
  json before_;
};

TEST_F(BadInput, MalformedJsonIs400) {
  const std::vector<std::string> bodies = {"{\"name\": \"x\",",
                                           "{name: 'x'}",
                                           "[1, 2",
                                           "\"just a string\"",
                                           "[]",
                                           "null",
                                           "{\"a\":1}{\"b\":2}",
                                           std::string(100, '['),
                                           "{\"name\": \"\xff\xfe\"}"};
  for (const char* path :
       {"/api/v1/clusters", "/api/v1/datasets", "/api/v1/runs", "/api/v1/users"}) {
    for (const auto& body : bodies) {
      SCOPED_TRACE(std::string(path) + " <- " + body.substr(0, 40));
      auto r = admin_.raw("POST", path, body, {{"Content-Type", "application/json"}});
      EXPECT_TRUE(is_problem(r, 400)) << r;
    }
    // An empty body, and a body that is not JSON at all by its Content-Type.
    EXPECT_TRUE(is_problem(admin_.raw("POST", path, ""), 400));
    auto xml = admin_.raw("POST", path, "<cluster/>", {{"Content-Type", "application/xml"}});
    EXPECT_TRUE(xml.status == 400 || xml.status == 415) << xml;
    EXPECT_TRUE(is_problem(xml, xml.status));
  }
  expect_unchanged();
}

TEST_F(BadInput, WrongTypesNameTheField) {
  auto r = admin_.post(
      "/api/v1/clusters",
      {{"name", 5}, {"accelerator", "cpu-1"}, {"num_slices", "two"}, {"labels", {{"a", 1}}}});
  EXPECT_TRUE(is_problem(r, 400)) << r;
  EXPECT_TRUE(has_field_error(r, "name"));
  EXPECT_TRUE(has_field_error(r, "num_slices"));
  EXPECT_TRUE(has_field_error(r, "labels.a"));

  auto ds = member_.api.post(
      "/api/v1/datasets",
      {{"name", "ds"}, {"uri", json::array()}, {"format", "jsonl"}, {"records", -1}});
  EXPECT_TRUE(has_field_error(ds, "uri"));
  EXPECT_TRUE(has_field_error(ds, "records"));

  auto run = member_.api.post("/api/v1/runs", {{"name", "typed"},
                                               {"cluster", "base"},
                                               {"workload", "command"},
                                               {"command", {"true", 7}},
                                               {"steps", 1.5},
                                               {"max_restarts", "3"},
                                               {"tags", "not-a-list"},
                                               {"parallelism", {{"ici_fsdp", "four"}}},
                                               {"restart_on_exit_codes", {300}}});
  EXPECT_TRUE(is_problem(run, 400)) << run;
  for (const char* f : {"command", "steps", "max_restarts", "tags", "parallelism.ici_fsdp",
                        "restart_on_exit_codes"})
    EXPECT_TRUE(has_field_error(run, f));

  auto user = admin_.post("/api/v1/users", {{"username", true}, {"role", 3}});
  EXPECT_TRUE(has_field_error(user, "username"));
  EXPECT_TRUE(has_field_error(user, "role"));

  auto patch = admin_.patch("/api/v1/clusters/base", {{"num_slices", 0}, {"zone", 12}});
  EXPECT_TRUE(has_field_error(patch, "num_slices"));
  EXPECT_TRUE(has_field_error(patch, "zone"));
  expect_unchanged();
}

TEST_F(BadInput, UnknownFieldsAreReported) {
  auto r = admin_.post("/api/v1/clusters",
                       {{"name", "fine"}, {"accelerator", "cpu-1"}, {"colour", "red"}});
  EXPECT_TRUE(is_problem(r, 400)) << r;
  EXPECT_TRUE(has_field_error(r, "colour"));
  auto run = Podium::run_spec("base", "typo");
  run["stpes"] = 10;
  auto rr = member_.api.post("/api/v1/runs", run);
  EXPECT_TRUE(has_field_error(rr, "stpes"));
  auto ds = member_.api.post(
      "/api/v1/datasets",
      {{"name", "x"}, {"uri", "gs://x"}, {"format", "text"}, {"compression", "gzip"}});
  EXPECT_TRUE(has_field_error(ds, "compression"));
  EXPECT_TRUE(has_field_error(admin_.patch("/api/v1/clusters/base", {{"nme", "x"}}), "nme"));
  EXPECT_TRUE(has_field_error(
      admin_.post("/api/v1/users", {{"username", "u1"}, {"role", "viewer"}, {"admin", true}}),
      "admin"));
  expect_unchanged();
}

TEST_F(BadInput, OversizedBodyIs413AndTheClientReadsIt) {
  // 20 MB against the default limit of 8 MiB: the answer must arrive as a response, not a reset.
  std::string big = "{\"name\":\"big\",\"uri\":\"gs://x\",\"format\":\"text\",\"pad\":\"" +
                    std::string(20 << 20, 'x') + "\"}";
  auto r = member_.api.raw("POST", "/api/v1/datasets", big, {{"Content-Type", "application/json"}});
  EXPECT_TRUE(is_problem(r, 413)) << r;
  // Just over the limit too (the limit is exact, not approximate).
  std::string over((8 << 20) + 1, ' ');
  over[0] = '{';
  over.back() = '}';
  EXPECT_TRUE(is_problem(member_.api.raw("POST", "/api/v1/datasets", over), 413));
  expect_unchanged();
}

TEST_F(BadInput, OversizedHeaderIs431) {
  // 64 KiB in one header, on the wire as is (the project's client refuses to build such a
  // request: Beast caps a field value below 64 KiB).
  const std::string big_header =
      "GET /api/v1/clusters HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Authorization: Bearer " +
      podium().server().admin_token() + "\r\nX-Padding: " + std::string(64 * 1024, 'h') +
      "\r\nConnection: close\r\n\r\n";
  auto raw = raw_exchange(podium().server().port(), big_header);
  EXPECT_TRUE(is_problem(raw, 431)) << raw;
  // Through the client: a 60 KiB header, and many small headers adding up.
  auto r =
      admin_.call("GET", "/api/v1/clusters", nullptr, {{"X-Padding", std::string(60 * 1024, 'h')}});
  EXPECT_TRUE(is_problem(r, 431)) << r;
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 400; ++i) many.emplace_back("X-H" + std::to_string(i), std::string(100, 'v'));
  EXPECT_TRUE(is_problem(admin_.call("GET", "/api/v1/clusters", nullptr, many), 431));
  // A long URL is part of the head as well.
  auto url = admin_.get("/api/v1/runs?q=" + std::string(40 * 1024, 'q'));
  EXPECT_TRUE(url.status == 414 || url.status == 431) << url;
  EXPECT_TRUE(is_problem(url, url.status));
  // Just under the limit is fine.
  EXPECT_EQ(
      admin_.call("GET", "/api/v1/clusters", nullptr, {{"X-Padding", std::string(8 * 1024, 'h')}})
          .status,
      200);
  expect_unchanged();
}

TEST_F(BadInput, SlowHeadersAreCutOffByTheReadDeadline) {
  RawSocket slow(podium().server().port());
  ASSERT_TRUE(slow.ok());
  const std::string request =
      "GET /api/v1/clusters HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(60, 's');
  const auto started = Clock::now();
  bool closed = false;
  size_t sent = 0;
  while (Clock::now() - started < 12s && sent < request.size()) {
    if (!slow.send_all(request.substr(sent, 1))) {
      closed = true;  // EPIPE / ECONNRESET: the server closed it
      break;
    }
    ++sent;
    if (slow.wait_closed(1000ms)) {
      closed = true;
      break;
    }
    // Meanwhile, other clients are served normally.
    if (sent == 2) {
      auto h = podium().anonymous().get("/healthz");
      EXPECT_EQ(h.status, 200) << h;
      EXPECT_LT(h.elapsed.count(), 2000) << h;
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  EXPECT_TRUE(closed) << "the server kept a client that sends one byte per second for " << seconds
                      << " s (" << sent << " bytes)";
  EXPECT_GE(seconds, 1.5) << "closed before the 2 s read deadline";
  EXPECT_LE(seconds, 5.0) << "the 2 s read deadline was not enforced";
  EXPECT_EQ(slow.received().find("200 OK"), std::string::npos) << slow.received();
  expect_unchanged();
}

TEST_F(BadInput, SlowBodyIsCutOffByTheReadDeadline) {
  RawSocket slow(podium().server().port());
  ASSERT_TRUE(slow.ok());
  const std::string head = "POST /api/v1/clusters HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                           podium().server().admin_token() +
                           "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{";
  ASSERT_TRUE(slow.send_all(head));
  const auto started = Clock::now();
  bool closed = false;
  while (Clock::now() - started < 12s) {
    if (!slow.send_all(" ") || slow.wait_closed(1000ms)) {
      closed = true;
      break;
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  EXPECT_TRUE(closed) << "a body trickling in at one byte per second was not cut off";
  EXPECT_LE(seconds, 5.0);
  expect_unchanged();
}

TEST_F(BadInput, IdleConnectionsDoNotBlockOthers) {
  // Connections that send nothing at all, then a normal client: still served at once.
  std::vector<std::unique_ptr<RawSocket>> idle;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(std::make_unique<RawSocket>(podium().server().port()));
    ASSERT_TRUE(idle.back()->ok());
  }
  auto h = podium().anonymous().get("/healthz");
  EXPECT_EQ(h.status, 200) << h;
  EXPECT_LT(h.elapsed.count(), 2000) << h;
  expect_unchanged();
}

TEST_F(BadInput, SqlLookingStringsAreStoredLiterally) {
  const std::string drop_clusters = "'; DROP TABLE clusters; --";
  const std::string bobby = "Robert'); DROP TABLE runs;--";
  const std::string quotes = "\"\\' OR 1=1; -- $1 %s \\x00 ";

  auto ds =
      member_.api.post("/api/v1/datasets",
                       {{"name", drop_clusters}, {"uri", "gs://b/" + bobby}, {"format", "text"}});
  ASSERT_EQ(ds.status, 201) << ds;
  EXPECT_EQ(ds.json["name"], drop_clusters);
  EXPECT_EQ(ds.json["uri"], "gs://b/" + bobby);
  auto ds_by_name = member_.api.get("/api/v1/datasets/" + enc(drop_clusters));
  ASSERT_EQ(ds_by_name.status, 200) << ds_by_name;
  EXPECT_EQ(ds_by_name.json["id"], ds.json["id"]);

  // Run names are identifiers (letters, digits, - _ .): the SQL-looking one is refused as a
  // validation error naming the field, and nothing is stored.
  auto bad_name = member_.api.post("/api/v1/runs", Podium::run_spec("base", bobby));
  EXPECT_TRUE(is_problem(bad_name, 400)) << bad_name;
  EXPECT_TRUE(has_field_error(bad_name, "name"));
  // Free-text fields of a run keep such strings literally.
  auto run = member_.api.post("/api/v1/runs",
                              {{"name", "literal-strings"},
                               {"cluster", "base"},
                               {"workload", "command"},
                               {"command", {"sh", "-c", "echo '" + drop_clusters + "'", bobby}},
                               {"config", {{"note", bobby}}},
                               {"tags", {drop_clusters, quotes, bobby}}});
  ASSERT_EQ(run.status, 201) << run;
  const std::string run_id = run.json["id"];
  auto got = member_.api.get("/api/v1/runs/" + run_id);
  ASSERT_EQ(got.status, 200) << got;
  EXPECT_EQ(got.json["tags"], json({drop_clusters, quotes, bobby}));
  EXPECT_EQ(got.json["spec"]["command"], json({"sh", "-c", "echo '" + drop_clusters + "'", bobby}));
  EXPECT_EQ(got.json["spec"]["config"]["note"], bobby);
  // Filters take the same strings as plain values.
  auto by_tag = member_.api.get("/api/v1/runs?tag=" + enc(quotes));
  ASSERT_EQ(by_tag.status, 200) << by_tag;
  ASSERT_EQ(by_tag.json["items"].size(), 1u) << by_tag;
  EXPECT_EQ(by_tag.json["items"][0]["id"], run_id);
  auto by_bobby = member_.api.get("/api/v1/runs?tag=" + enc(bobby));
  ASSERT_EQ(by_bobby.json["items"].size(), 1u) << by_bobby;
  for (const std::string& q :
       {bobby, drop_clusters, std::string("' OR '1'='1"), std::string("%"), std::string("_")}) {
    auto r = member_.api.get("/api/v1/runs?q=" + enc(q));
    ASSERT_EQ(r.status, 200) << r;
    EXPECT_TRUE(r.json["items"].empty()) << "q=" << q << " matched: " << r;
  }
  EXPECT_EQ(podium().anonymous().get("/healthz").status, 200);
  auto by_cluster = member_.api.get("/api/v1/runs?cluster=" + enc(drop_clusters));
  ASSERT_EQ(by_cluster.status, 200) << by_cluster;
  EXPECT_TRUE(by_cluster.json["items"].empty()) << by_cluster;
  EXPECT_EQ(member_.api.get("/api/v1/runs?owner=" + enc(bobby)).json["items"].size(), 0u);

  auto patched =
      admin_.patch("/api/v1/clusters/base",
                   {{"labels", {{"note", drop_clusters}, {bobby, quotes}}}, {"zone", bobby}});
  ASSERT_EQ(patched.status, 200) << patched;
  auto cluster = admin_.get("/api/v1/clusters/base");
  EXPECT_EQ(cluster.json["labels"], json({{"note", drop_clusters}, {bobby, quotes}}));
  EXPECT_EQ(cluster.json["zone"], bobby);

  auto user = admin_.post("/api/v1/users", {{"username", "x'--"}, {"role", "viewer"}});
  EXPECT_TRUE(has_field_error(user, "username")) << user;

  // Nothing was dropped: every table still answers, with everything in it.
  auto clusters = admin_.get("/api/v1/clusters");
  ASSERT_EQ(clusters.status, 200) << clusters;
  EXPECT_EQ(clusters.json["items"].size(), 1u);
  auto runs = admin_.get("/api/v1/runs");
  ASSERT_EQ(runs.status, 200) << runs;
  EXPECT_EQ(runs.json["items"].size(), 2u);
  EXPECT_EQ(admin_.get("/api/v1/datasets").json["items"].size(), 2u);
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM clusters"), "1");
}

TEST_F(BadInput, PathTraversalNeverServesAFile) {
  const std::vector<std::string> paths = {
      "/api/v1/clusters/..%2F..%2Fetc%2Fpasswd",
      "/api/v1/clusters/..%2f..%2f..%2f..%2fetc%2fpasswd",
      "/api/v1/runs/%2e%2e",
      "/api/v1/runs/%2e%2e/checkpoints",
      "/api/v1/datasets/..%2F..%2F..%2Fetc%2Fpasswd",
      "/api/v1/models/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
      "/api/v1/models/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
      "/../../etc/passwd",
      "/%2e%2e/%2e%2e/etc/passwd",
      "/..%2F..%2F..%2Fetc%2Fpasswd",
      "/assets/../../../../etc/passwd",
      "/api/v1/../../../etc/passwd",
      "/api/v1/clusters/%00",
      "/api/v1/clusters/%zz",
  };
  for (const auto& p : paths) {
    SCOPED_TRACE(p);
    auto r = admin_.get(p);
    EXPECT_TRUE(r.status == 404 || r.status == 400) << r;
    EXPECT_TRUE(is_problem(r, r.status));
    EXPECT_EQ(r.body.find("root:"), std::string::npos) << "served /etc/passwd: " << r;
    EXPECT_EQ(podium().anonymous().get("/healthz").status, 200);
  }
  expect_unchanged();
}

TEST_F(BadInput, InvalidUtf8InPathParametersAndQueryIsRejectedAsMalformed) {
  // %-escapes that decode to bytes which are not UTF-8. The request is malformed (400), or names
  // nothing (404); it is not "semantically invalid" (422), and the database is no judge of it.
  const std::vector<std::string> paths = {
      "/api/v1/clusters/%ff",   "/api/v1/clusters/%c3%28/workers",
      "/api/v1/runs/%ff",       "/api/v1/datasets/%c3%28",
      "/api/v1/users/%fe%ff",   "/api/v1/runs?q=%ff",
      "/api/v1/runs?tag=%ff",   "/api/v1/runs?cluster=%c3%28",
      "/api/v1/runs?owner=%ff", "/api/v1/runs?model=%e2%82"};
  std::vector<std::string> wrong;
  for (const auto& p : paths) {
    auto r = admin_.get(p);
    if (!(r.status == 400 || r.status == 404) || !is_problem(r, r.status))
      wrong.push_back(r.describe());
  }
  EXPECT_TRUE(wrong.empty()) << "expected 400 (or 404) problem+json:\n"
                             << ::testing::PrintToString(wrong);
  expect_unchanged();
}

TEST_F(BadInput, Rfc3629ForbiddenSequencesInPathAndQueryAre400BeforeAnySql) {
  // Bytes a lax check takes for UTF-8 and PostgreSQL refuses (it answered 422 once the request
  // had reached it): overlong forms, UTF-16 surrogates, code points above U+10FFFF.
  const std::vector<std::string> paths = {
      "/api/v1/runs/%C0%AF",           "/api/v1/runs/%c1%bf",          "/api/v1/clusters/%e0%80%af",
      "/api/v1/datasets/%f0%80%80%af", "/api/v1/users/%ed%a0%80",      "/api/v1/runs/%f4%90%80%80",
      "/api/v1/runs/%f5%80%80%80",     "/api/v1/runs/%C0%AF/attempts", "/api/v1/runs?q=%C0%AF",
      "/api/v1/runs?tag=%ed%bf%bf",    "/api/v1/runs?%c0%af=x"};
  std::vector<std::string> wrong;
  for (const auto& p : paths) {
    auto r = admin_.get(p);
    if (!is_problem(r, 400) ||
        r.json["detail"].get<std::string>().find("not valid UTF-8") == std::string::npos)
      wrong.push_back(r.describe());
  }
  EXPECT_TRUE(wrong.empty()) << "expected 400 \"... is not valid UTF-8\":\n"
                             << ::testing::PrintToString(wrong);
  // Well-formed multi-byte text is a name like any other: the run does not exist.
  for (const std::string p :
       {"/api/v1/runs/%C3%A9t%C3%A9", "/api/v1/runs/%F0%9F%98%80", "/api/v1/runs/%F4%8F%BF%BF"})
    EXPECT_TRUE(is_problem(admin_.get(p), 404)) << p;
  expect_unchanged();
}

TEST_F(BadInput, TamperedCursorsAre400) {
  for (int i = 0; i < 3; ++i) podium().create_cluster("page-" + std::to_string(i));
  before_ = snapshot(admin_);
  auto first = admin_.get("/api/v1/clusters?limit=1");
  ASSERT_EQ(first.status, 200) << first;
  ASSERT_TRUE(first.json["next_cursor"].is_string()) << first;
  const std::string cursor = first.json["next_cursor"];
  ASSERT_EQ(admin_.get("/api/v1/clusters?limit=1&cursor=" + enc(cursor)).status, 200);

  std::vector<std::string> forged;
  for (size_t i : {size_t{0}, cursor.size() / 2, cursor.size() - 1}) {
    std::string f = cursor;
    f[i] = f[i] == 'A' ? 'B' : 'A';  // flip one character: payload or MAC
    forged.push_back(f);
  }
  forged.push_back("garbage");
  forged.push_back("eyJzIjo5OTk5OTl9");  // base64url of {"s":999999} without a MAC
  forged.push_back("eyJzIjo5OTk5OTl9." + std::string(32, '0'));
  forged.push_back(cursor + "x");
  forged.push_back(".");
  forged.push_back(std::string(5000, 'c'));
  {
    // A cursor another server (another database, another key) issued.
    Podium elsewhere({{}, "server-elsewhere"});
    for (int i = 0; i < 2; ++i) elsewhere.create_cluster("other-" + std::to_string(i));
    auto theirs = elsewhere.admin().get("/api/v1/clusters?limit=1");
    ASSERT_TRUE(theirs.json["next_cursor"].is_string()) << theirs;
    forged.push_back(theirs.json["next_cursor"].get<std::string>());
  }
  for (const auto& f : forged) {
    SCOPED_TRACE(f.substr(0, 60));
    for (const char* path : {"/api/v1/clusters", "/api/v1/runs", "/api/v1/datasets",
                             "/api/v1/users", "/api/v1/tokens"}) {
      auto r = admin_.get(std::string(path) + "?limit=1&cursor=" + enc(f));
      EXPECT_TRUE(is_problem(r, 400)) << r;
    }
  }
  expect_unchanged();
}

TEST_F(BadInput, UnknownRoutesAre404AndWrongMethods405) {
  for (const char* p :
       {"/api/v1/nope", "/api/v1/clusters/base/nope", "/api/v1/clusters/base/workers/x/y",
        "/api/v2/clusters", "/api/v1", "/api/v1/"}) {
    SCOPED_TRACE(p);
    auto r = admin_.get(p);
    EXPECT_TRUE(is_problem(r, 404)) << r;
  }
  EXPECT_TRUE(is_problem(podium().anonymous().get("/api/v1/nope"), 404));

  struct Case {
    std::string method, path;
    std::vector<std::string> allowed;
  };
  const std::vector<Case> cases = {
      {"PUT", "/api/v1/clusters", {"GET", "POST"}},
      {"DELETE", "/api/v1/clusters", {"GET", "POST"}},
      {"PUT", "/api/v1/clusters/base", {"GET", "PATCH", "DELETE"}},
      {"POST", "/healthz", {"GET"}},
      {"GET", "/api/v1/auth/login", {"POST"}},
      {"PATCH", "/api/v1/runs", {"GET", "POST"}},
      {"GET", "/api/v1/runs/x/cancel", {"POST"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.method + " " + c.path);
    auto r = admin_.call(c.method, c.path, c.method == "GET" ? json(nullptr) : json::object());
    EXPECT_TRUE(is_problem(r, 405)) << r;
    auto allow = r.header("allow");
    ASSERT_TRUE(allow.has_value()) << "405 without an Allow header: " << r;
    for (const auto& m : c.allowed)
      EXPECT_NE(allow->find(m), std::string::npos) << "Allow: " << *allow;
  }
  expect_unchanged();
}

TEST_F(BadInput, ErrorsOfEveryKindAreProblemJson) {
  // A sample of every status the API produces, each checked for the problem+json shape.
  auto anon = podium().anonymous();
  EXPECT_TRUE(is_problem(anon.get("/api/v1/clusters"), 401));
  EXPECT_TRUE(is_problem(
      member_.api.post("/api/v1/clusters", {{"name", "x"}, {"accelerator", "cpu-1"}}), 403));
  EXPECT_TRUE(is_problem(admin_.get("/api/v1/clusters/missing"), 404));
  EXPECT_TRUE(is_problem(
      admin_.post("/api/v1/clusters", {{"name", "base"}, {"accelerator", "cpu-1"}}), 409));
  EXPECT_TRUE(is_problem(
      admin_.post("/api/v1/clusters", {{"name", "y"}, {"accelerator", "tpu99-1"}}), 422));
  EXPECT_TRUE(is_problem(
      admin_.raw("POST", "/api/v1/clusters", "{", {{"Content-Type", "application/json"}}), 400));
  // Requests the HTTP layer answers itself: the same shape.
  auto junk = raw_exchange(podium().server().port(), "THIS IS NOT HTTP\r\n\r\n");
  EXPECT_TRUE(is_problem(junk, 400)) << junk;
  auto no_host_version = raw_exchange(podium().server().port(), "GET /healthz HTTP/9.9\r\n\r\n");
  EXPECT_GE(no_host_version.status, 400) << no_host_version;
  EXPECT_TRUE(is_problem(no_host_version, no_host_version.status));
  auto bad_length = raw_exchange(podium().server().port(),
                                 "POST /api/v1/clusters HTTP/1.1\r\nHost: x\r\nContent-Length: "
                                 "abc\r\n\r\n");
  EXPECT_TRUE(is_problem(bad_length, 400)) << bad_length;
  expect_unchanged();
}

}  // namespace
}  // namespace podium::it
