#include "engine/core/launch/attach_identity.h"

#include <gtest/gtest.h>

#include <map>

namespace podium::core {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& k) -> std::optional<std::string> {
    auto it = vars.find(k);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(AttachIdentity, SlurmRankFromProcIdOneTaskPerNode) {
  // 2 slices of 4 hosts: the 7th task (procid 6) is slice 1, host 2.
  auto r = identify_rank(env_of({{"PODIUM_ENGINE", "slurm"},
                                 {"PODIUM_HOSTS_PER_SLICE", "4"},
                                 {"PODIUM_NUM_SLICES", "2"},
                                 {"SLURM_PROCID", "6"},
                                 {"SLURM_NTASKS", "8"},
                                 {"SLURM_NODEID", "6"},
                                 {"SLURM_JOB_ID", "4711"},
                                 {"SLURM_JOB_NODELIST", "a3mega-[001-008]"},
                                 {"SLURMD_NODENAME", "a3mega-007"}}));
  ASSERT_TRUE(r.identity) << r.error;
  EXPECT_EQ(r.identity->engine, "slurm");
  EXPECT_EQ(r.identity->rank, 6);
  EXPECT_EQ(r.identity->world, 8);
  EXPECT_EQ(r.identity->slice, 1);
  EXPECT_EQ(r.identity->host, 2);
  EXPECT_EQ(r.identity->engine_job, "4711");
  EXPECT_EQ(r.identity->node, "a3mega-007");
}

TEST(AttachIdentity, SlurmDetectedWithoutPodiumEngine) {
  auto r = identify_rank(env_of({{"PODIUM_HOSTS_PER_SLICE", "2"},
                                 {"PODIUM_NUM_SLICES", "1"},
                                 {"SLURM_PROCID", "1"},
                                 {"SLURM_NTASKS", "2"}}));
  ASSERT_TRUE(r.identity) << r.error;
  EXPECT_EQ(r.identity->engine, "slurm");
  EXPECT_EQ(r.identity->rank, 1);
}

TEST(AttachIdentity, SlurmWorldMustMatchTheGang) {
  auto r = identify_rank(env_of({{"PODIUM_HOSTS_PER_SLICE", "2"},
                                 {"PODIUM_NUM_SLICES", "1"},
                                 {"SLURM_PROCID", "0"},
                                 {"SLURM_NTASKS", "16"}}));
  ASSERT_FALSE(r.identity);
  EXPECT_NE(r.error.find("SLURM_NTASKS is 16"), std::string::npos) << r.error;
}

TEST(AttachIdentity, JobSetRankFromJobIndexAndCompletionIndex) {
  // tpu7x-64 x 2: 8 hosts per slice; the pod of job index 1, completion index 3 is rank 11.
  auto r = identify_rank(env_of({{"PODIUM_ENGINE", "kubernetes"},
                                 {"PODIUM_HOSTS_PER_SLICE", "8"},
                                 {"PODIUM_NUM_SLICES", "2"},
                                 {"PODIUM_SLICE", "1"},
                                 {"JOB_COMPLETION_INDEX", "3"},
                                 {"PODIUM_ENGINE_RESTART", "0"},
                                 {"HOSTNAME", "podium-abc-1-slice-job-1-3"}}));
  ASSERT_TRUE(r.identity) << r.error;
  EXPECT_EQ(r.identity->rank, 11);
  EXPECT_EQ(r.identity->slice, 1);
  EXPECT_EQ(r.identity->host, 3);
  EXPECT_EQ(r.identity->world, 16);
  EXPECT_EQ(r.identity->engine_restart, "0");
}

TEST(AttachIdentity, TpuWorkerIdStandsInForTheCompletionIndex) {
  auto r = identify_rank(env_of(
      {{"PODIUM_HOSTS_PER_SLICE", "4"}, {"PODIUM_NUM_SLICES", "1"}, {"TPU_WORKER_ID", "2"}}));
  ASSERT_TRUE(r.identity) << r.error;
  EXPECT_EQ(r.identity->engine, "kubernetes");
  EXPECT_EQ(r.identity->rank, 2);
}

TEST(AttachIdentity, ClearErrorsForMissingOrOutOfRangeValues) {
  EXPECT_NE(identify_rank(env_of({})).error.find("no engine environment"), std::string::npos);
  EXPECT_NE(identify_rank(env_of({{"SLURM_PROCID", "0"}})).error.find("PODIUM_HOSTS_PER_SLICE"),
            std::string::npos);
  auto outside = identify_rank(env_of({{"PODIUM_HOSTS_PER_SLICE", "4"},
                                       {"PODIUM_NUM_SLICES", "1"},
                                       {"JOB_COMPLETION_INDEX", "4"}}));
  EXPECT_NE(outside.error.find("outside the gang"), std::string::npos) << outside.error;
  auto garbage = identify_rank(env_of({{"PODIUM_HOSTS_PER_SLICE", "4"},
                                       {"PODIUM_NUM_SLICES", "1"},
                                       {"SLURM_PROCID", "-1"},
                                       {"SLURM_NTASKS", "4"}}));
  EXPECT_NE(garbage.error.find("SLURM_PROCID"), std::string::npos) << garbage.error;
  EXPECT_FALSE(identify_rank(env_of({{"PODIUM_ENGINE", "ray"},
                                     {"PODIUM_HOSTS_PER_SLICE", "1"},
                                     {"PODIUM_NUM_SLICES", "1"}}))
                   .identity);
}

}  // namespace
}  // namespace podium::core

namespace podium::core {
namespace {

// xpk's parallel containers on tpu7x-64 x 2: 8 VMs per slice, 2 containers each, 32 ranks. The
// second container (PODIUM_RANK_IN_HOST 1) of slice 1's VM 3 is rank 1*16 + 3*2 + 1 = 23, the
// 8th process of its slice.
TEST(AttachIdentity, ParallelContainersAreRanksOfTheirOwn) {
  std::map<std::string, std::string> vars = {
      {"PODIUM_ENGINE", "kubernetes"}, {"PODIUM_HOSTS_PER_SLICE", "8"}, {"PODIUM_NUM_SLICES", "2"},
      {"PODIUM_RANKS_PER_HOST", "2"},  {"PODIUM_RANK_IN_HOST", "1"},    {"PODIUM_SLICE", "1"},
      {"JOB_COMPLETION_INDEX", "3"}};
  auto r = identify_rank(env_of(vars));
  ASSERT_TRUE(r.identity) << r.error;
  EXPECT_EQ(r.identity->rank, 23);
  EXPECT_EQ(r.identity->world, 32);
  EXPECT_EQ(r.identity->slice, 1);
  EXPECT_EQ(r.identity->host, 7);
  // The first container of the last VM of the last slice is rank 30; its neighbour 31.
  vars["JOB_COMPLETION_INDEX"] = "7";
  vars["PODIUM_RANK_IN_HOST"] = "0";
  EXPECT_EQ(identify_rank(env_of(vars)).identity->rank, 30);
  vars["PODIUM_RANK_IN_HOST"] = "1";
  EXPECT_EQ(identify_rank(env_of(vars)).identity->rank, 31);
  // A VM index past the slice is refused, as is a container index past the VM's.
  vars["JOB_COMPLETION_INDEX"] = "8";
  EXPECT_NE(identify_rank(env_of(vars)).error.find("outside the gang"), std::string::npos);
  vars["JOB_COMPLETION_INDEX"] = "0";
  vars["PODIUM_RANK_IN_HOST"] = "2";
  EXPECT_NE(identify_rank(env_of(vars)).error.find("PODIUM_RANK_IN_HOST"), std::string::npos);
  vars["PODIUM_RANKS_PER_HOST"] = "0";
  EXPECT_NE(identify_rank(env_of(vars)).error.find("PODIUM_RANKS_PER_HOST"), std::string::npos);
  // Without the variables, one rank per VM as before.
  vars.erase("PODIUM_RANKS_PER_HOST");
  vars.erase("PODIUM_RANK_IN_HOST");
  vars["JOB_COMPLETION_INDEX"] = "3";
  auto one = identify_rank(env_of(vars));
  ASSERT_TRUE(one.identity) << one.error;
  EXPECT_EQ(one.identity->rank, 11);
  EXPECT_EQ(one.identity->world, 16);
}

}  // namespace
}  // namespace podium::core
