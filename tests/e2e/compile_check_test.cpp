// Issue 9 acceptance: a compile-check preflight through a real worker. The run's training step
// is compiled on a CPU host (the reference workload's --compile-only, MaxText.train_compile's
// counterpart) before the run may be placed; the compiler's figure becomes the plan's memory
// basis "compiled", and a run whose compiled step does not fit its accelerator's HBM is refused
// with that figure.

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

class CompileCheck : public E2eTest {};

json spec_on(const std::string& cluster, const std::string& compile_cluster,
             const std::string& dataset, const std::string& model, int batch, int length) {
  return {{"name", unique_name("cc")},
          {"cluster", cluster},
          {"dataset", dataset},
          {"model", model},
          {"workload", "reference"},
          {"steps", 10},
          {"per_device_batch_size", batch},
          {"max_target_length", length},
          {"preflight", "compile"},
          {"compile_cluster", compile_cluster}};
}

TEST_F(CompileCheck, CompiledFigureBecomesTheBasisAndAnOverBudgetRunIsRefused) {
  const auto compile_hosts = create_cluster("cpu-1", 1);
  start_worker(compile_hosts, 0, 0);
  // The runs' own accelerator: a v5e-8 host (8 chips of 16 GiB), with no agent: only the
  // compile checks run anywhere.
  const auto tpu = create_cluster("v5e-8", 1);
  const auto ds = dataset();

  // Fits: reference-tiny at 4 x 128 needs about 0.01 GiB per device.
  const json small = submit(spec_on(tpu, compile_hosts, ds, "reference-tiny", 4, 128));
  const std::string small_id = small["id"];
  ASSERT_TRUE(small["preflight"].is_object()) << small.dump();
  EXPECT_EQ(small["preflight"]["state"], "pending");
  const std::string child = small["preflight"]["run_id"];
  json passed;
  ASSERT_TRUE(wait_for_run(
      small_id, "compile check passed",
      [](const json& r) {
        return r["preflight"].is_object() && r["preflight"]["state"] == "passed";
      },
      180s, &passed));
  const json& memory = passed["plan"]["memory"];
  EXPECT_EQ(memory["basis"], "compiled") << memory.dump();
  EXPECT_EQ(memory["verdict"], "fits") << memory.dump();
  EXPECT_EQ(memory["source"]["run"], child);
  EXPECT_GT(memory["per_device_gib"].get<double>(), 0.0);
  EXPECT_LT(memory["per_device_gib"].get<double>(), 1.0);
  EXPECT_EQ(passed["state"], "queued");  // placed once the v5e host has an agent
  // The child ran the reference workload's --compile-only on the CPU host and succeeded.
  const json child_run = get_run(child);
  EXPECT_EQ(child_run["state"], "succeeded") << child_run.dump();
  EXPECT_EQ(child_run["compile_check_for"], small_id);
  // Compiled for the target's own slice from the CPU host (jax[tpu]'s libtpu topology).
  const auto cmd = child_run["spec"]["command"];
  const auto has = [&](const std::string& arg) {
    return std::find(cmd.begin(), cmd.end(), json(arg)) != cmd.end();
  };
  EXPECT_TRUE(has("--compile-only")) << cmd.dump();
  EXPECT_TRUE(has("compile_topology=v5litepod-8")) << cmd.dump();
  EXPECT_TRUE(has("compile_topology_num_slices=1")) << cmd.dump();

  // Does not fit: reference-small at 16 x 4096 keeps, in each of its 4 layers, 16 x 4 x 4096 x
  // 4096 attention scores and probabilities for the backward pass: the TPU compile for v5e
  // fails with RESOURCE_EXHAUSTED (about 21 GiB of temporaries against 15.75 GiB), where the
  // pure estimate (flash attention, as MaxText) says 0.5 GiB. That figure refuses the run.
  json big_spec = spec_on(tpu, compile_hosts, dataset("2M"), "reference-small", 16, 4096);
  big_spec["steps"] = 2;
  const json big = submit(big_spec);
  const std::string big_id = big["id"];
  json refused;
  ASSERT_TRUE(wait_for_state(big_id, "failed", 180s, &refused));
  EXPECT_EQ(refused["failure_class"], "oom") << refused.dump();
  EXPECT_EQ(refused["preflight"]["state"], "failed");
  EXPECT_EQ(refused["plan"]["memory"]["basis"], "compiled");
  EXPECT_EQ(refused["plan"]["memory"]["verdict"], "does_not_fit");
  const double needed = refused["plan"]["memory"]["per_device_gib"].get<double>();
  EXPECT_GT(needed, 16.0);
  bool quoted = false;
  for (const auto& e : refused["plan"]["errors"])
    if (e["code"] == "hbm_exceeded" &&
        e["message"].get<std::string>().find("compiled by run") != std::string::npos)
      quoted = true;
  EXPECT_TRUE(quoted) << refused["plan"]["errors"].dump();
  bool cause = false;
  for (const auto& ev : events(big_id))
    if (ev.value("cause", "").find("refused by its compile check: needs") != std::string::npos)
      cause = true;
  EXPECT_TRUE(cause) << diagnostics(big_id);
  EXPECT_TRUE(attempts(big_id).empty()) << "a refused run must never have been placed";

  // podium plan --compile: the same check from the command line; the run it used is cancelled.
  const auto spec_file = dir() / "plan.yaml";
  std::ofstream(spec_file) << spec_on(tpu, compile_hosts, ds, "reference-tiny", 4, 128).dump(2);
  const std::string cli = "PODIUM_SERVER='" + podium().url() + "' PODIUM_TOKEN='" +
                          podium().server().admin_token() + "' '" + it::binary("podium").string() +
                          "' plan --compile -f '" + spec_file.string() + "' 2>&1";
  std::string out;
  FILE* p = popen(cli.c_str(), "r");
  ASSERT_TRUE(p);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0) << out;
  EXPECT_NE(out.find("compiled"), std::string::npos) << out;
  EXPECT_NE(out.find("compile check of run_"), std::string::npos) << out;
  const auto at = out.find("compile check of ");
  const std::string planned = out.substr(at + 17, out.find(' ', at + 17) - at - 17);
  EXPECT_TRUE(wait_for_state(planned, "cancelled", 30s)) << out;
}

}  // namespace
}  // namespace podium::e2e
