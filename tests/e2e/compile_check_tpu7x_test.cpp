// Issue 26 acceptance: a run on a tpu7x cluster whose compile check runs on a CPU agent. The
// reference workload's --compile-only compiles the run's training step for the tpu7x slice from
// the CPU host (libtpu's topology devices, no TPU), and the compiler's figure decides: a step that
// fits the 94.75 GiB usable per tpu7x device is accepted (the plan's memory basis "compiled"),
// one that does not is refused with the compiler's figure, never placed.

#include <algorithm>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

class CompileCheckTpu7x : public E2eTest {};

json tpu7x_spec(const std::string& cluster, const std::string& compile_cluster,
                const std::string& dataset, const std::string& model, int batch, int length) {
  return {{"name", unique_name("cc7x")},
          {"cluster", cluster},
          {"dataset", dataset},
          {"model", model},
          {"workload", "reference"},
          {"steps", 1},
          {"per_device_batch_size", batch},
          {"max_target_length", length},
          {"preflight", "compile"},
          {"compile_cluster", compile_cluster}};
}

bool has_arg(const json& cmd, const std::string& arg) {
  return std::find(cmd.begin(), cmd.end(), json(arg)) != cmd.end();
}

TEST_F(CompileCheckTpu7x, CpuAgentCompilesForTpu7xAndTheFigureAcceptsOrRefuses) {
  const auto compile_hosts = create_cluster("cpu-1", 1);
  start_worker(compile_hosts, 0, 0);
  // tpu7x-8: 4 chips, 8 devices (two TensorCores per chip), 94.75 GiB usable per device; no
  // agent, so only the compile checks run anywhere.
  const auto tpu = create_cluster("tpu7x-8", 1);

  // Fits: reference-tiny at 4 x 128 compiles to well under 1 GiB per device.
  const json small = submit(tpu7x_spec(tpu, compile_hosts, dataset(), "reference-tiny", 4, 128));
  const std::string small_id = small["id"];
  ASSERT_TRUE(small["preflight"].is_object()) << small.dump();
  const std::string small_child = small["preflight"]["run_id"];
  json passed;
  ASSERT_TRUE(wait_for_run(
      small_id, "compile check passed",
      [](const json& r) {
        return r["preflight"].is_object() && r["preflight"]["state"] == "passed";
      },
      300s, &passed))
      << diagnostics(small_child);
  const json& memory = passed["plan"]["memory"];
  EXPECT_EQ(memory["basis"], "compiled") << memory.dump();
  EXPECT_EQ(memory["verdict"], "fits") << memory.dump();
  EXPECT_EQ(memory["source"]["run"], small_child);
  EXPECT_GT(memory["per_device_gib"].get<double>(), 0.0);
  EXPECT_LT(memory["per_device_gib"].get<double>(), 1.0);
  EXPECT_EQ(passed["state"], "queued");  // accepted: placed once the tpu7x hosts have agents
  const json child_run = get_run(small_child);
  EXPECT_EQ(child_run["state"], "succeeded") << child_run.dump();
  const json& cmd = child_run["spec"]["command"];
  EXPECT_TRUE(has_arg(cmd, "--compile-only")) << cmd.dump();
  EXPECT_TRUE(has_arg(cmd, "compile_topology=tpu7x-8")) << cmd.dump();
  EXPECT_TRUE(has_arg(cmd, "compile_topology_num_slices=1")) << cmd.dump();

  // Does not fit: reference-small at 256 x 8192. The reference workload materializes attention
  // scores: one layer's float32 scores alone are 256 x 4 heads x 8192 x 8192 x 4 bytes = 256 GiB
  // per device, which no rematerialization brings under tpu7x's 94.75 GiB usable, so the compile
  // fails with RESOURCE_EXHAUSTED. (At 32 x 8192, 32 GiB of scores per layer, XLA rematerialized
  // down to 87.43 GiB and the run was rightly accepted.) The planner's own data check would
  // refuse the shape first (2048 sequences of 8192 bytes per step): it is skipped, as the compile
  // check reads no data.
  json big_spec = tpu7x_spec(tpu, compile_hosts, dataset(), "reference-small", 256, 8192);
  big_spec["skip_checks"] = json::array({"data"});
  const json big = submit(big_spec);
  const std::string big_id = big["id"];
  const std::string big_child = big["preflight"]["run_id"];
  json refused;
  ASSERT_TRUE(wait_for_state(big_id, "failed", 300s, &refused)) << diagnostics(big_child);
  EXPECT_EQ(refused["failure_class"], "oom") << refused.dump();
  EXPECT_EQ(refused["preflight"]["state"], "failed");
  const json& over = refused["plan"]["memory"];
  EXPECT_EQ(over["basis"], "compiled") << over.dump();
  EXPECT_EQ(over["verdict"], "does_not_fit") << over.dump();
  EXPECT_EQ(over["source"]["run"], big_child);
  const double needed = over["per_device_gib"].get<double>();
  EXPECT_GT(needed, 94.75);
  // The refusal quotes the compiler's figure and the check that produced it.
  bool quoted = false;
  for (const auto& e : refused["plan"]["errors"]) {
    const std::string message = e.value("message", "");
    if (e["code"] == "hbm_exceeded" &&
        message.find("compiled by run " + big_child) != std::string::npos)
      quoted = true;
  }
  EXPECT_TRUE(quoted) << refused["plan"]["errors"].dump();
  EXPECT_TRUE(has_arg(get_run(big_child)["spec"]["command"], "compile_topology=tpu7x-8"));
  EXPECT_TRUE(attempts(big_id).empty()) << "a refused run must never have been placed";
}

}  // namespace
}  // namespace podium::e2e
