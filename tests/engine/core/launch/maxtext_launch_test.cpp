#include "engine/core/launch/maxtext_launch.h"

#include <gtest/gtest.h>

namespace podium::core {
namespace {

TEST(MaxTextLaunch, DeclaredVersionsAreReleasesCommitsOrWords) {
  for (const char* ok : {"auto", "fork", "legacy", "0.2.0", "v0.2.0", "maxtext-v0.2.0", "0.1.0rc1",
                         "0.2.5.post1", "1a2b3c4", "0123456789abcdef0123456789abcdef01234567"})
    EXPECT_FALSE(maxtext_version_problem(ok).has_value()) << ok;
  for (const char* bad : {"", "latest", "0", "2025", "0.2.0 ; rm", "1a2b3c", "v", "..", "0..2"})
    EXPECT_TRUE(maxtext_version_problem(bad).has_value()) << bad;
}

TEST(MaxTextLaunch, TheRunsDeclarationWinsThenTheClustersThenTheHosts) {
  using L = MaxTextLayout;
  // Nothing declared: what rank 0's agent found, else today's package.
  EXPECT_EQ(choose_maxtext_layout("", "", std::nullopt), L::package);
  EXPECT_EQ(choose_maxtext_layout("auto", "auto", L::legacy), L::legacy);
  // A release is the package layout (0.2.0 has both modules; only the package one lasts).
  EXPECT_EQ(choose_maxtext_layout("0.2.0", "", L::legacy), L::package);
  EXPECT_EQ(choose_maxtext_layout("", "legacy", L::package), L::legacy);
  EXPECT_EQ(choose_maxtext_layout("0.2.0", "legacy", std::nullopt), L::package);
  EXPECT_EQ(choose_maxtext_layout("legacy", "0.2.0", std::nullopt), L::legacy);
  // A fork or a commit says nothing about the layout: the hosts decide.
  EXPECT_EQ(choose_maxtext_layout("fork", "0.2.0", L::legacy), L::legacy);
  EXPECT_EQ(choose_maxtext_layout("1a2b3c4d", "", L::legacy), L::legacy);
  EXPECT_EQ(choose_maxtext_layout("fork", "", std::nullopt), L::package);
}

TEST(MaxTextLaunch, EachFormHasItsCompileModule) {
  EXPECT_EQ(maxtext_train_module(MaxTextLayout::package), "maxtext.trainers.pre_train.train");
  EXPECT_EQ(maxtext_train_module(MaxTextLayout::legacy), "MaxText.train");
  EXPECT_EQ(compile_module_for("maxtext.trainers.pre_train.train"),
            "maxtext.trainers.pre_train.train_compile");
  EXPECT_EQ(compile_module_for("MaxText.train"), "MaxText.train_compile");
  EXPECT_EQ(compile_module_for("my.train"), "");
  EXPECT_EQ(parse_maxtext_layout("legacy"), MaxTextLayout::legacy);
  EXPECT_EQ(parse_maxtext_layout("package"), MaxTextLayout::package);
  EXPECT_FALSE(parse_maxtext_layout("other").has_value());
}

TEST(MaxTextLaunch, CpuEnvironmentIsWhatMaxTextsCpuInitialisationReads) {
  // process_id = JOB_INDEX * PROCESSES_IN_JOB + JOB_COMPLETION_INDEX must be the rank, and the
  // coordinator a bare host (MaxText resolves it and adds its own port).
  const auto env = maxtext_cpu_environment("10.0.0.7", 3, 8);
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"JAX_COORDINATOR_ADDRESS", "10.0.0.7"},
                                                     {"JOB_INDEX", "0"},
                                                     {"JOB_COMPLETION_INDEX", "3"},
                                                     {"PROCESSES_IN_JOB", "8"}}));
  EXPECT_EQ(std::stoi(env.at("JOB_INDEX")) * std::stoi(env.at("PROCESSES_IN_JOB")) +
                std::stoi(env.at("JOB_COMPLETION_INDEX")),
            3);
  EXPECT_EQ(kMaxTextCpuCoordinatorPort, 1234);
  // hardware=cpu picks that initialisation; the persistent compilation cache stays off.
  EXPECT_EQ(maxtext_cpu_arguments(), (std::vector<std::pair<std::string, std::string>>{
                                         {"hardware", "cpu"}, {"jax_cache_dir", ""}}));
}

}  // namespace
}  // namespace podium::core
