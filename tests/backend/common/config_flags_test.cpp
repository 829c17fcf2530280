// podium-server's command line (backend/common/config_flags.h): order, --set, --config, --help
// and the message of every kind of mistake.

#include "backend/common/config_flags.h"

#include <gtest/gtest.h>

namespace podium {
namespace {

using Values = std::vector<std::pair<std::string, std::string>>;

std::string error_of(const std::vector<std::string>& args) {
  const auto f = parse_config_flags(args);
  EXPECT_TRUE(f.error.has_value());
  return f.error ? f.error->message : "";
}

TEST(ConfigFlags, ValuesKeepTheirOrder) {
  const auto f = parse_config_flags({"--listen", "a:1", "--set", "listen=b:2", "--data-dir=/d",
                                     "--listen=c:3", "--set=log.level=debug"});
  ASSERT_FALSE(f.error) << f.error->message;
  EXPECT_EQ(f.values, (Values{{"listen", "a:1"},
                              {"listen", "b:2"},
                              {"data_dir", "/d"},
                              {"listen", "c:3"},
                              {"log.level", "debug"}}));
  EXPECT_FALSE(f.help);
  EXPECT_FALSE(f.config_file);
}

TEST(ConfigFlags, ValuesMayBeEmptyOrLookLikeFlags) {
  const auto f = parse_config_flags({"--admin-token=", "--web-root", "--odd"});
  ASSERT_FALSE(f.error) << f.error->message;
  EXPECT_EQ(f.values, (Values{{"admin_token", ""}, {"web_root", "--odd"}}));
}

TEST(ConfigFlags, ConfigFileAndHelp) {
  EXPECT_EQ(parse_config_flags({"--config", "/etc/podium.yaml"}).config_file, "/etc/podium.yaml");
  EXPECT_EQ(find_config_flag({"--listen", "x:1", "--config=/p.yaml"}), "/p.yaml");
  EXPECT_EQ(find_config_flag({"--listen", "x:1"}), std::nullopt);
  EXPECT_TRUE(parse_config_flags({"--help"}).help);
  EXPECT_TRUE(parse_config_flags({"--listen", "x:1", "-h"}).help);
  // Help even when a flag after it lacks its value.
  EXPECT_TRUE(parse_config_flags({"--help", "--listen"}).help);
  EXPECT_TRUE(load_config(ConfigSources{{}, "config", {}, {"-h"}}).show_help);
}

TEST(ConfigFlags, Mistakes) {
  EXPECT_EQ(error_of({"--no-such-flag"}), "unknown flag '--no-such-flag' (see --help)");
  EXPECT_EQ(error_of({"--no-such=1"}), "unknown flag '--no-such=1' (see --help)");
  EXPECT_EQ(error_of({"stray"}), "unknown flag 'stray' (see --help)");
  EXPECT_EQ(error_of({"--listen"}), "--listen: expects a value");
  EXPECT_EQ(error_of({"--config"}), "--config: expects a file name");
  EXPECT_EQ(error_of({"--set"}), "--set: expects key=value");
  EXPECT_EQ(error_of({"--set", "novalue"}), "--set: expects key=value");
  EXPECT_EQ(error_of({"--set", "no.such.key=1"}), "--set: unknown key 'no.such.key'");
  // load_config says the same, as an invalid configuration.
  const auto r = load_config(ConfigSources{{}, "config", {}, {"--set", "x=1"}});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->message, "--set: unknown key 'x'");
}

}  // namespace
}  // namespace podium
