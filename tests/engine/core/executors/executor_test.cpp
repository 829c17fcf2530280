#include "engine/core/executors/executor.h"

#include <gtest/gtest.h>

namespace podium::core {
namespace {

using nlohmann::json;

bool has_error(const Parsed<Executor>& p, const std::string& field) {
  for (const auto& e : p.errors)
    if (e.field == field) return true;
  return false;
}

TEST(Executor, AgentIsTheDefaultShape) {
  auto p = parse_executor(json{{"kind", "agent"}});
  ASSERT_TRUE(p.value) << p.errors.size();
  EXPECT_EQ(p.value->kind, ExecutorKind::agent);
  EXPECT_FALSE(p.value->external());
  EXPECT_EQ(to_json(*p.value), json({{"kind", "agent"}}));
}

TEST(Executor, AgentsMayNameTheImageTheirContainersRun) {
  const json with_image = {{"kind", "agent"}, {"image", "us-docker.pkg.dev/p/r/maxtext:1"}};
  auto p = parse_executor(with_image);
  ASSERT_TRUE(p.value) << p.errors.size();
  EXPECT_EQ(p.value->agent_image, "us-docker.pkg.dev/p/r/maxtext:1");
  EXPECT_EQ(to_json(*p.value), with_image);
  auto bad = parse_executor(json{{"kind", "agent"}, {"image", "has space"}});
  EXPECT_FALSE(bad.value);
  EXPECT_TRUE(has_error(bad, "executor.image")) << bad.errors.front().field;
  EXPECT_FALSE(parse_executor(json{{"kind", "agent"}, {"queue", "q"}}).value);
}

TEST(Executor, SlurmRoundTrips) {
  json in = {{"kind", "slurm"},
             {"partition", "a3mega"},
             {"account", "llm"},
             {"qos", "high"},
             {"sbatch_args", {"--gpus-per-node=8", "--mem=0"}},
             {"env", {{"NCCL_DEBUG", "INFO"}}}};
  auto p = parse_executor(in);
  ASSERT_TRUE(p.value);
  EXPECT_TRUE(p.value->external());
  EXPECT_EQ(p.value->slurm.sbatch_args.size(), 2u);
  EXPECT_EQ(to_json(*p.value), in);
  EXPECT_EQ(to_json(*parse_executor(to_json(*p.value)).value), in);
}

TEST(Executor, KubernetesDefaultsItsNamespace) {
  auto p = parse_executor(json{{"kind", "kubernetes"},
                               {"context", "gke_proj_us-east5_tpu"},
                               {"queue", "multislice-queue"},
                               {"image", "us-docker.pkg.dev/p/r/maxtext:2026-11"},
                               {"priority_class", "medium"}});
  ASSERT_TRUE(p.value);
  EXPECT_EQ(p.value->kubernetes.namespace_name, "default");
  EXPECT_EQ(p.value->kubernetes.queue, "multislice-queue");
  // xpk's parallel containers are on unless the cluster says otherwise.
  EXPECT_TRUE(p.value->kubernetes.parallel_containers);
}

TEST(Executor, KubernetesParallelContainersRoundTrip) {
  auto off = parse_executor(json{{"kind", "kubernetes"}, {"parallel_containers", false}});
  ASSERT_TRUE(off.value);
  EXPECT_FALSE(off.value->kubernetes.parallel_containers);
  const json out = to_json(*off.value);
  EXPECT_EQ(out["parallel_containers"], false);
  EXPECT_FALSE(parse_executor(out).value->kubernetes.parallel_containers);
  EXPECT_TRUE(parse_executor(json{{"kind", "kubernetes"}, {"parallel_containers", true}})
                  .value->kubernetes.parallel_containers);
  EXPECT_TRUE(has_error(parse_executor(json{{"kind", "kubernetes"}, {"parallel_containers", "no"}}),
                        "executor.parallel_containers"));
  // A Slurm cluster has no such setting.
  EXPECT_FALSE(parse_executor(json{{"kind", "slurm"}, {"parallel_containers", true}}).value);
}

TEST(Executor, RejectsWhatWouldBreakTheGangOrTheContract) {
  EXPECT_TRUE(has_error(parse_executor(json{{"kind", "pbs"}}), "executor.kind"));
  EXPECT_TRUE(has_error(parse_executor(json::object()), "executor.kind"));
  EXPECT_FALSE(parse_executor(json::array()).value);
  // Podium sets the node count, the tasks and the job's name itself.
  auto nodes = parse_executor(json{{"kind", "slurm"}, {"sbatch_args", {"--nodes=4"}}});
  EXPECT_TRUE(has_error(nodes, "executor.sbatch_args[0]"));
  EXPECT_TRUE(has_error(parse_executor(json{{"kind", "slurm"}, {"sbatch_args", {"-N", "2"}}}),
                        "executor.sbatch_args[0]"));
  EXPECT_TRUE(has_error(parse_executor(json{{"kind", "slurm"}, {"sbatch_args", {"--a\nb"}}}),
                        "executor.sbatch_args[0]"));
  EXPECT_TRUE(has_error(parse_executor(json{{"kind", "slurm"}, {"partition", "a b"}}),
                        "executor.partition"));
  // Gang variables and Podium's own are not the cluster's to set.
  EXPECT_TRUE(has_error(
      parse_executor(json{{"kind", "slurm"}, {"env", {{"JAX_COORDINATOR_ADDRESS", "x"}}}}),
      "executor.env.JAX_COORDINATOR_ADDRESS"));
  EXPECT_TRUE(has_error(
      parse_executor(json{{"kind", "kubernetes"}, {"env", {{"PODIUM_ATTACH_TOKEN", "x"}}}}),
      "executor.env.PODIUM_ATTACH_TOKEN"));
  // ... except the CA bundle attach trusts.
  EXPECT_TRUE(
      parse_executor(json{{"kind", "slurm"}, {"env", {{"PODIUM_CA_FILE", "/etc/podium/ca.pem"}}}})
          .value);
  EXPECT_TRUE(has_error(parse_executor(json{{"kind", "kubernetes"}, {"namespace", "Bad_NS"}}),
                        "executor.namespace"));
  EXPECT_TRUE(
      has_error(parse_executor(json{{"kind", "kubernetes"}, {"image", "a b"}}), "executor.image"));
  EXPECT_TRUE(
      has_error(parse_executor(json{{"kind", "agent"}, {"partition", "x"}}), "executor.partition"));
  EXPECT_TRUE(has_error(parse_executor(json{{"kind", "slurm"}, {"sbatch_args", "--mem=0"}}),
                        "executor.sbatch_args"));
}

TEST(Executor, DnsLabels) {
  EXPECT_TRUE(is_dns_label("team-a"));
  EXPECT_TRUE(is_dns_label("a1"));
  EXPECT_FALSE(is_dns_label("-a"));
  EXPECT_FALSE(is_dns_label("a-"));
  EXPECT_FALSE(is_dns_label("A"));
  EXPECT_FALSE(is_dns_label(""));
  EXPECT_FALSE(is_dns_label(std::string(64, 'a')));
}

}  // namespace
}  // namespace podium::core
