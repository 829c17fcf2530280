#include "backend/common/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace podium {
namespace {

TEST(Config, DefaultsMatchTheContract) {
  auto r = load_config({});
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  EXPECT_EQ(r.config.listen_host, "127.0.0.1");
  EXPECT_EQ(r.config.listen_port, 8080);
  EXPECT_EQ(r.config.data_dir, "./var");
  EXPECT_EQ(r.config.max_body_bytes, 8u * 1024 * 1024);
  EXPECT_EQ(r.config.heartbeat_deadline.count(), 15);
}

// Unset, the handler threads scale with the cores and the pool gives each of them a connection
// (plus the liveness lane's and background work's); set, both are taken as they are.
TEST(Config, HandlerThreadsAndPoolScaleWithTheCoresUnlessSet) {
  ConfigSources two;
  two.cores = 2;
  auto r = load_config(two);
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  EXPECT_EQ(r.config.handler_threads, 2);
  EXPECT_EQ(r.config.db_pool_size, 6);
  ConfigSources many;
  many.cores = 96;
  r = load_config(many);
  EXPECT_EQ(r.config.handler_threads, 64);
  EXPECT_EQ(r.config.db_pool_size, 68);
  ConfigSources six;
  six.cores = 6;
  EXPECT_EQ(load_config(six).config.handler_threads, 6);
  EXPECT_GE(load_config({}).config.handler_threads, kHandlerThreadsMin);  // this machine's
  ConfigSources set;
  set.cores = 2;
  set.environment = {{"PODIUM_LIMITS_HANDLER_THREADS", "32"}, {"PODIUM_DATABASE_POOL_SIZE", "5"}};
  r = load_config(set);
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  EXPECT_EQ(r.config.handler_threads, 32);
  EXPECT_EQ(r.config.db_pool_size, 5);
  ConfigSources one;
  one.environment = {{"PODIUM_LIMITS_HANDLER_THREADS", "1"}};
  ASSERT_TRUE(load_config(one).error.has_value());
}

TEST(Config, FileThenEnvironmentThenFlags) {
  ConfigSources s;
  s.yaml_text = "listen: 0.0.0.0:9000\ndata_dir: /srv/a\nlimits:\n  max_body_bytes: 2048\n";
  s.environment = {{"PODIUM_DATA_DIR", "/srv/b"}, {"PODIUM_LIMITS_MAX_BODY_BYTES", "4096"}};
  s.args = {"--max-body-bytes", "8192"};
  auto r = load_config(s);
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  EXPECT_EQ(r.config.listen_host, "0.0.0.0");
  EXPECT_EQ(r.config.listen_port, 9000);
  EXPECT_EQ(r.config.data_dir, "/srv/b");
  EXPECT_EQ(r.config.max_body_bytes, 8192u);
}

TEST(Config, SetFlagReachesAnyKey) {
  ConfigSources s;
  s.args = {"--set", "scheduler.heartbeat_deadline_seconds=3", "--listen=127.0.0.1:0"};
  auto r = load_config(s);
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  EXPECT_EQ(r.config.heartbeat_deadline.count(), 3);
  EXPECT_EQ(r.config.listen_port, 0);
}

TEST(Config, InvalidValuesNameTheKey) {
  ConfigSources s;
  s.environment = {{"PODIUM_LIMITS_MAX_BODY_BYTES", "lots"}};
  auto r = load_config(s);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(r.error->message.find("limits.max_body_bytes"), std::string::npos);
  EXPECT_NE(r.error->message.find("lots"), std::string::npos);

  ConfigSources bad_listen;
  bad_listen.args = {"--listen", "nowhere"};
  auto l = load_config(bad_listen);
  ASSERT_TRUE(l.error.has_value());
  EXPECT_EQ(l.error->message.rfind("listen:", 0), 0u);
}

TEST(Config, UnknownKeysAndBrokenYamlAreErrors) {
  ConfigSources s;
  s.yaml_text = "limits:\n  max_bodybytes: 1\n";
  auto r = load_config(s);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(r.error->message.find("limits.max_bodybytes"), std::string::npos);

  ConfigSources broken;
  broken.yaml_text = "listen: [unclosed\n";
  EXPECT_TRUE(load_config(broken).error.has_value());

  ConfigSources flag;
  flag.args = {"--no-such-flag"};
  EXPECT_TRUE(load_config(flag).error.has_value());
}

TEST(Config, ExampleFileDocumentsEveryKeyWithItsDefault) {
  std::ifstream in(std::string(PODIUM_SOURCE_DIR) + "/deploy/podium.example.yaml");
  ASSERT_TRUE(in.good()) << "deploy/podium.example.yaml missing";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  // The example must itself load, and reproduce the defaults exactly.
  ConfigSources s;
  s.yaml_text = text;
  auto r = load_config(s);
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  auto d = load_config({});
  EXPECT_EQ(r.config.listen_port, d.config.listen_port);
  EXPECT_EQ(r.config.max_body_bytes, d.config.max_body_bytes);
  EXPECT_EQ(r.config.read_timeout, d.config.read_timeout);
  for (const auto& k : config_keys()) {
    const std::string leaf =
        k.key.substr(k.key.rfind('.') == std::string::npos ? 0 : k.key.rfind('.') + 1);
    EXPECT_NE(text.find(leaf + ":"), std::string::npos) << k.key << " is not documented";
    EXPECT_NE(text.find(k.env), std::string::npos) << k.env << " is not documented";
  }
}

}  // namespace
}  // namespace podium

namespace podium {
namespace {

TEST(Config, AdminTokenMustBeLongAndNotAWorkerToken) {
  ConfigSources short_token;
  short_token.environment = {{"PODIUM_ADMIN_TOKEN", "short"}};
  EXPECT_TRUE(load_config(short_token).error.has_value());
  ConfigSources worker_like;
  worker_like.environment = {{"PODIUM_ADMIN_TOKEN", "pdw_0123456789abcdef0123"}};
  auto r = load_config(worker_like);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->message.rfind("admin_token:", 0), 0u);
  ConfigSources good;
  good.environment = {{"PODIUM_ADMIN_TOKEN", "pdm_0123456789abcdef0123"}};
  EXPECT_FALSE(load_config(good).error.has_value());
}

}  // namespace
}  // namespace podium

namespace podium {
namespace {

// Plan against actual: a fraction of the planner's expectation, 0.1 unless configured.
TEST(Config, UnderperformingRatioIsAFractionOfThePlan) {
  EXPECT_DOUBLE_EQ(load_config({}).config.underperforming_ratio, 0.1);
  ConfigSources set;
  set.args = {"--set", "summaries.underperforming_ratio=0.5"};
  auto r = load_config(set);
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  EXPECT_DOUBLE_EQ(r.config.underperforming_ratio, 0.5);
  ConfigSources off;
  off.environment = {{"PODIUM_SUMMARIES_UNDERPERFORMING_RATIO", "0"}};
  EXPECT_DOUBLE_EQ(load_config(off).config.underperforming_ratio, 0.0);
  for (const char* bad : {"", "x", "1.5", "-0.1", "0.5x", "nan", "inf"}) {
    ConfigSources s;
    s.environment = {{"PODIUM_SUMMARIES_UNDERPERFORMING_RATIO", bad}};
    auto e = load_config(s);
    ASSERT_TRUE(e.error.has_value()) << bad;
    EXPECT_EQ(e.error->message.rfind("summaries.underperforming_ratio:", 0), 0u) << bad;
  }
}

}  // namespace
}  // namespace podium
