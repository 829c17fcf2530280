#include <gtest/gtest.h>

#include "engine/client/http_client.h"

namespace podium::client {
namespace {

TEST(ParseBaseUrl, HostAndPort) {
  const auto u = parse_base_url("http://127.0.0.1:8080");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, "8080");
  EXPECT_EQ(u->prefix, "");
}

TEST(ParseBaseUrl, DefaultPortIs80) {
  const auto u = parse_base_url("http://podium.internal");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->host, "podium.internal");
  EXPECT_EQ(u->port, "80");
}

TEST(ParseBaseUrl, PrefixKeptWithoutTrailingSlash) {
  const auto u = parse_base_url("http://example.com:81/podium/");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->port, "81");
  EXPECT_EQ(u->prefix, "/podium");
  EXPECT_EQ(parse_base_url("http://example.com/")->prefix, "");
  EXPECT_EQ(parse_base_url("http://example.com/a/b//")->prefix, "/a/b");
}

TEST(ParseBaseUrl, SchemeIsCaseInsensitiveAndOptional) {
  EXPECT_TRUE(parse_base_url("HTTP://h:1"));
  const auto u = parse_base_url("localhost:9000");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->host, "localhost");
  EXPECT_EQ(u->port, "9000");
}

TEST(ParseBaseUrl, Ipv6InBrackets) {
  const auto u = parse_base_url("http://[::1]:8080/x");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, "8080");
  EXPECT_EQ(u->prefix, "/x");
  std::string error;
  EXPECT_FALSE(parse_base_url("http://::1:8080", &error));
  EXPECT_NE(error.find("brackets"), std::string::npos);
  EXPECT_FALSE(parse_base_url("http://[::1", &error));
}

TEST(ParseBaseUrl, Rejections) {
  std::string error;
  EXPECT_FALSE(parse_base_url("", &error));
  EXPECT_FALSE(parse_base_url("ftp://h", &error));
  EXPECT_NE(error.find("ftp"), std::string::npos);
  EXPECT_FALSE(parse_base_url("http://user:pw@h", &error));
  EXPECT_NE(error.find("--token"), std::string::npos);
  EXPECT_FALSE(parse_base_url("http://h?x=1", &error));
  EXPECT_FALSE(parse_base_url("http://h#frag", &error));
  EXPECT_FALSE(parse_base_url("http://", &error));
  EXPECT_FALSE(parse_base_url("http://:80", &error));
  EXPECT_FALSE(parse_base_url("http://h:", &error));
  EXPECT_FALSE(parse_base_url("http://h:0", &error));
  EXPECT_FALSE(parse_base_url("http://h:65536", &error));
  EXPECT_FALSE(parse_base_url("http://h:80a", &error));
  EXPECT_FALSE(parse_base_url("http://h:123456", &error));
  EXPECT_FALSE(parse_base_url("http://bad host", &error));
  EXPECT_TRUE(parse_base_url("http://h:65535"));
  EXPECT_EQ(parse_base_url("http://h:0080")->port, "80");
}

TEST(ParseBaseUrl, ErrorPointerIsOptional) {
  EXPECT_FALSE(parse_base_url("ftp://h"));
}

TEST(ParseBaseUrl, HttpsDefaultsToPort443) {
  auto u = parse_base_url("https://podium.example.com");
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->port, "443");
  auto v = parse_base_url("HTTPS://10.0.0.5:8443/podium");
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->tls);
  EXPECT_EQ(v->port, "8443");
  EXPECT_EQ(v->prefix, "/podium");
  EXPECT_FALSE(parse_base_url("http://h")->tls);
  EXPECT_FALSE(parse_base_url("h:1")->tls);
}

TEST(PercentEncode, KeepsUnreservedOnly) {
  EXPECT_EQ(percent_encode("run-1_a.b~c"), "run-1_a.b~c");
  EXPECT_EQ(percent_encode("a b/c?d&e=f"), "a%20b%2Fc%3Fd%26e%3Df");
  EXPECT_EQ(percent_encode("\xC3\xA9"), "%C3%A9");
  EXPECT_EQ(percent_encode(""), "");
}

TEST(ClientVersion, NotEmpty) {
  EXPECT_FALSE(client_version().empty());
}

TEST(HttpClient, InvalidBaseUrlFailsEveryRequestWithoutNetwork) {
  HttpClient c("ftp://example.com");
  const auto r = c.get("/api/v1/runs");
  ASSERT_FALSE(r.ok());
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("ftp"), std::string::npos);
  const auto s = c.stream_events("/x", [](const std::string&, const std::string&) { return true; });
  ASSERT_TRUE(s);
  EXPECT_EQ(s->status, 0);
}

TEST(HttpResponse, HeaderLookup) {
  HttpResponse r;
  r.headers = {{"content-type", "application/json"}, {"x-a", "1"}};
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.header("missing"), std::nullopt);
}

}  // namespace
}  // namespace podium::client
