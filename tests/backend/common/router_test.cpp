#include "backend/common/router.h"

#include <gtest/gtest.h>

namespace podium::http {
namespace {

Handler named(std::string name) {
  return [name](RequestContext&) { return Response::text(200, name); };
}

TEST(Router, MatchesLiteralBeforeParameterWhenAddedFirst) {
  Router r;
  r.add("POST", "/api/v1/runs/import", Access::writer, named("import"));
  r.add("GET", "/api/v1/runs/{id}", Access::reader, named("get"));
  auto m = r.match("POST", "/api/v1/runs/import");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.route->pattern, "/api/v1/runs/import");
  auto g = r.match("GET", "/api/v1/runs/abc");
  ASSERT_NE(g.route, nullptr);
  EXPECT_EQ(g.params.at("id"), "abc");
}

TEST(Router, ReportsAllowedMethodsForKnownPath) {
  Router r;
  r.add("GET", "/api/v1/clusters", Access::reader, named("list"));
  r.add("POST", "/api/v1/clusters", Access::writer, named("create"));
  auto m = r.match("DELETE", "/api/v1/clusters");
  EXPECT_EQ(m.route, nullptr);
  EXPECT_EQ(m.allowed_methods, (std::vector<std::string>{"GET", "POST"}));
}

TEST(Router, UnknownPathHasNoAllowedMethods) {
  Router r;
  r.add("GET", "/api/v1/clusters", Access::reader, named("list"));
  auto m = r.match("GET", "/api/v1/nothing");
  EXPECT_EQ(m.route, nullptr);
  EXPECT_TRUE(m.allowed_methods.empty());
}

TEST(Router, EncodedSlashStaysInsideOneParameter) {
  Router r;
  r.add("GET", "/api/v1/clusters/{id}", Access::reader, named("get"));
  auto m = r.match("GET", "/api/v1/clusters/..%2F..%2Fetc%2Fpasswd");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.params.at("id"), "../../etc/passwd");
  // A literal traversal changes the segment count and matches nothing.
  EXPECT_EQ(r.match("GET", "/api/v1/clusters/../../etc/passwd").route, nullptr);
}

TEST(Router, MalformedEscapeIsReported) {
  Router r;
  r.add("GET", "/api/v1/clusters/{id}", Access::reader, named("get"));
  auto m = r.match("GET", "/api/v1/clusters/%zz");
  EXPECT_EQ(m.route, nullptr);
  EXPECT_TRUE(m.bad_encoding);
}

TEST(Router, HeadIsServedByGet) {
  Router r;
  r.add("GET", "/healthz", Access::open, named("health"));
  EXPECT_NE(r.match("HEAD", "/healthz").route, nullptr);
}

TEST(Router, TraitsAreTheMatchedRoutesAndDefaultsElsewhere) {
  Router r;
  r.add("POST", "/api/v1/agent/heartbeat", Access::agent, named("beat"), liveness_lane());
  r.add("PUT", "/api/v1/bundles/{digest}", Access::writer, named("put"),
        large_body(4096, std::chrono::seconds(60)));
  r.add("GET", "/api/v1/bundles/{digest}", Access::reader, named("get"));
  EXPECT_EQ(r.traits("POST", "/api/v1/agent/heartbeat?x=1").lane, Lane::liveness);
  const auto put = r.traits("PUT", "/api/v1/bundles/sha256%3Aab");
  ASSERT_TRUE(put.large_body.has_value());
  EXPECT_EQ(put.large_body->max_bytes, 4096u);
  EXPECT_EQ(put.lane, Lane::standard);
  // Another method on the same path, an unknown path: the defaults.
  EXPECT_FALSE(r.traits("GET", "/api/v1/bundles/sha256%3Aab").large_body.has_value());
  EXPECT_EQ(r.traits("GET", "/api/v1/agent/heartbeat").lane, Lane::standard);
  EXPECT_FALSE(r.traits("PUT", "/api/v1/bundles/a/b").large_body.has_value());
}

TEST(HttpMessage, DecodesQueryStrings) {
  auto q = parse_query("a=1&b=hello+world&c=%27%3B%20DROP&empty=&flag");
  ASSERT_TRUE(q.has_value());
  ASSERT_EQ(q->size(), 5u);
  EXPECT_EQ((*q)[1].second, "hello world");
  EXPECT_EQ((*q)[2].second, "'; DROP");
  EXPECT_EQ((*q)[3].second, "");
  EXPECT_EQ((*q)[4].first, "flag");
}

TEST(HttpMessage, RejectsMalformedAndNulEscapes) {
  EXPECT_FALSE(parse_query("a=%2").has_value());
  EXPECT_FALSE(parse_query("a=%G0").has_value());
  EXPECT_FALSE(decode_percent("x%00y", false).has_value());
  EXPECT_EQ(decode_percent("a+b", false).value(), "a+b");
}

TEST(HttpMessage, SplitsAnOriginFormTargetIntoPathAndQuery) {
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;
  ASSERT_TRUE(parse_target("/api/v1/runs/a%20b?state=queued&q=x+y", path, query));
  EXPECT_EQ(path, "/api/v1/runs/a b");
  ASSERT_EQ(query.size(), 2u);
  EXPECT_EQ(query[1], (std::pair<std::string, std::string>{"q", "x y"}));
  ASSERT_TRUE(parse_target("/healthz", path, query));
  EXPECT_EQ(path, "/healthz");
  EXPECT_TRUE(query.empty());
  // Not origin form, a bad escape in the path or the query, an encoded NUL: refused, untouched.
  EXPECT_FALSE(parse_target("", path, query));
  EXPECT_FALSE(parse_target("*", path, query));
  EXPECT_FALSE(parse_target("http://example.com/healthz", path, query));
  EXPECT_FALSE(parse_target("/runs/%zz", path, query));
  EXPECT_FALSE(parse_target("/runs?a=%2", path, query));
  EXPECT_FALSE(parse_target("/runs/%00", path, query));
  EXPECT_EQ(path, "/healthz");
}

TEST(HttpMessage, HeaderLookupIsCaseInsensitive) {
  Request req;
  req.headers.emplace_back("content-type", "application/json");
  EXPECT_EQ(req.header("Content-Type").value(), "application/json");
  Response res;
  res.set_header("X-A", "1");
  res.set_header("x-a", "2");
  EXPECT_EQ(res.headers.size(), 1u);
  EXPECT_EQ(res.header("X-A").value(), "2");
}

}  // namespace
}  // namespace podium::http
