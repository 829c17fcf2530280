// webhooks.* configuration: allow_hosts from a YAML list, the environment or --set, and the
// bounds of the numbers.
#include <gtest/gtest.h>

#include "backend/common/config.h"

namespace podium {
namespace {

TEST(ConfigWebhooks, AllowHostsFromAYamlListOrACommaSeparatedValue) {
  ConfigSources yaml;
  yaml.yaml_text = "webhooks:\n  allow_hosts: [127.0.0.1, relay.internal]\n";
  auto r = load_config(yaml);
  ASSERT_FALSE(r.error) << r.error->message;
  EXPECT_EQ(r.config.webhooks_allow_hosts,
            (std::vector<std::string>{"127.0.0.1", "relay.internal"}));

  ConfigSources env;
  env.environment = {{"PODIUM_WEBHOOKS_ALLOW_HOSTS", " a.internal , ,10.0.0.5"}};
  r = load_config(env);
  ASSERT_FALSE(r.error) << r.error->message;
  EXPECT_EQ(r.config.webhooks_allow_hosts, (std::vector<std::string>{"a.internal", "10.0.0.5"}));

  ConfigSources flag;
  flag.args = {"--set", "webhooks.allow_hosts=::1"};
  r = load_config(flag);
  ASSERT_FALSE(r.error) << r.error->message;
  EXPECT_EQ(r.config.webhooks_allow_hosts, std::vector<std::string>{"::1"});

  EXPECT_TRUE(load_config({}).config.webhooks_allow_hosts.empty()) << "nothing allowed by default";
}

TEST(ConfigWebhooks, ListsOfMapsAndBadNumbersAreRefused) {
  ConfigSources nested;
  nested.yaml_text = "webhooks:\n  allow_hosts:\n    - {host: x}\n";
  auto r = load_config(nested);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("webhooks.allow_hosts"), std::string::npos) << r.error->message;

  ConfigSources threads;
  threads.environment = {{"PODIUM_WEBHOOKS_DELIVERY_THREADS", "-1"}};
  EXPECT_TRUE(load_config(threads).error);
  ConfigSources timeout;
  timeout.environment = {{"PODIUM_WEBHOOKS_TIMEOUT_MS", "0"}};
  EXPECT_TRUE(load_config(timeout).error);
}

TEST(ConfigWebhooks, Defaults) {
  const auto c = load_config({}).config;
  EXPECT_EQ(c.webhooks_delivery_threads, 2);
  EXPECT_EQ(c.webhooks_retry_first_delay, std::chrono::milliseconds(10000));
  EXPECT_EQ(c.webhooks_give_up_after, std::chrono::hours(24));
  EXPECT_EQ(c.webhooks_max_response_bytes, 65536u);
}

}  // namespace
}  // namespace podium
