// Webhook URLs: parsing and the scheme/name rules (backend/notify/target_url.h).
#include "backend/notify/target_url.h"

#include <gtest/gtest.h>

namespace podium::notify {
namespace {

TEST(TargetUrl, ParsesHttpsWithDefaults) {
  std::string error;
  auto t = parse_target_url("https://Hooks.Slack.com/services/T0/B0/x?y=1", &error);
  ASSERT_TRUE(t) << error;
  EXPECT_TRUE(t->tls);
  EXPECT_EQ(t->host, "hooks.slack.com");
  EXPECT_EQ(t->port, "443");
  EXPECT_EQ(t->target, "/services/T0/B0/x?y=1");
  EXPECT_EQ(t->host_header, "Hooks.Slack.com");
}

TEST(TargetUrl, ParsesPortsAndIpv6) {
  auto t = parse_target_url("http://127.0.0.1:9000", nullptr);
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->tls);
  EXPECT_EQ(t->port, "9000");
  EXPECT_EQ(t->target, "/");
  auto v6 = parse_target_url("https://[fd00:ec2::254]:8443/x", nullptr);
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "fd00:ec2::254");
  EXPECT_EQ(v6->port, "8443");
  EXPECT_EQ(v6->host_header, "[fd00:ec2::254]:8443");
}

TEST(TargetUrl, RefusesWhatIsNoWebhookUrl) {
  for (const char* url :
       {"ftp://example.com/", "example.com", "https://", "https://user:pw@example.com/",
        "https://example.com:0/", "https://example.com:70000/", "https://exa mple.com/",
        "https://example.com/#frag", "https://[::1/", "https://ex%61mple.com/",
        "file:///etc/passwd"}) {
    std::string error;
    EXPECT_FALSE(parse_target_url(url, &error)) << url;
    EXPECT_FALSE(error.empty()) << url;
  }
  EXPECT_FALSE(parse_target_url("https://e.com/" + std::string(kMaxUrlLength, 'a'), nullptr));
}

TEST(TargetUrl, PlainHttpAndMetadataNamesOnlyWhenAllowed) {
  const AllowList none;
  const AllowList local({"127.0.0.1", "metadata.google.internal"});
  auto http = parse_target_url("http://127.0.0.1:1/", nullptr);
  ASSERT_TRUE(http);
  EXPECT_TRUE(target_policy_error(*http, none).has_value());
  EXPECT_FALSE(target_policy_error(*http, local).has_value());
  auto meta = parse_target_url("https://metadata.google.internal/computeMetadata/v1/", nullptr);
  ASSERT_TRUE(meta);
  EXPECT_TRUE(target_policy_error(*meta, none).has_value());
  EXPECT_FALSE(target_policy_error(*meta, local).has_value());
  auto ok = parse_target_url("https://hooks.example.com/x", nullptr);
  ASSERT_TRUE(ok);
  EXPECT_FALSE(target_policy_error(*ok, none).has_value());
}

}  // namespace
}  // namespace podium::notify
