// The compile check's decision (backend/sched/dispatch/compile_checks.h) from the rows it reads:
// a run waiting on its compile check, the compile check run that ended, and the compiler's
// figure in that run's log facts.
#include "backend/sched/dispatch/compile_checks.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "tests/integration/sched/lifecycle/lifecycle_database.h"

namespace podium::sched {
namespace {

class CompileChecks : public testing::LifecycleDatabase {
 protected:
  // A queued run on a cluster of `accelerator` whose compile check run ended in `child_state`
  // with the compiler's total `used_gib`; returns the queued run's id.
  std::string run_checked_on(const std::string& accelerator, const std::string& child_state,
                             double used_gib) {
    const std::string cluster = "clu_" + accelerator;
    db_->exec_alone(
        "INSERT INTO clusters (id, name, accelerator, num_slices, capacity) "
        "VALUES ($1, $1, $2, 1, 'on_demand') ON CONFLICT DO NOTHING",
        {cluster, accelerator});
    const std::string child = add_run(child_state);
    db_->exec_alone(
        "UPDATE runs SET log_facts = jsonb_build_object('hbm', jsonb_build_object('source', "
        "'compiler_total', 'used_gib', $2::float8)) WHERE id = $1",
        {child, std::to_string(used_gib)});
    const std::string run = add_run("queued");
    db_->exec_alone(
        "UPDATE runs SET cluster_id = $2, preflight_run_id = $3, preflight_state = 'pending', "
        "plan = '{}'::jsonb WHERE id = $1",
        {run, cluster, child});
    return run;
  }
  int decide() {
    auto log = std::make_shared<spdlog::logger>("compile-checks-test",
                                                std::make_shared<spdlog::sinks::null_sink_mt>());
    return db_->transact([&](db::Transaction& tx) { return check_compile_preflights(tx, log); });
  }
  std::string of(const std::string& run, const std::string& expression) {
    return value("SELECT (" + expression + ")::text FROM runs WHERE id = $1", {run});
  }
};

TEST_F(CompileChecks, ASuccessfulCompileForATpuSliceFitsEvenAboveTheUsableFigure) {
  // v5e: 15.75 GiB usable. XLA compiled this step for the slice (it rematerializes to fit),
  // and memory_analysis() counted 18.29 GiB: the compile is the verdict.
  const std::string run = run_checked_on("v5e-8", "succeeded", 18.29);
  EXPECT_EQ(decide(), 1);
  EXPECT_EQ(of(run, "preflight_state"), "passed");
  EXPECT_EQ(of(run, "state"), "queued");
  EXPECT_EQ(of(run, "plan->'memory'->>'verdict'"), "fits");
  EXPECT_EQ(of(run, "plan->'memory'->>'basis'"), "compiled");
  EXPECT_EQ(of(run, "(plan->'memory'->>'per_device_gib')::float8"), "18.29");
}

TEST_F(CompileChecks, AFigureAboveTheUsableHbmRefusesWhereTheCompileHadNoLimit) {
  // An H100 compile check has no HBM limit of the target in it (60 GiB usable of 80 at JAX's
  // default preallocation): its figure decides.
  const std::string run = run_checked_on("h100-8", "succeeded", 75.0);
  EXPECT_EQ(decide(), 1);
  EXPECT_EQ(of(run, "preflight_state"), "failed");
  EXPECT_EQ(of(run, "state"), "failed");
  EXPECT_EQ(of(run, "plan->'memory'->>'verdict'"), "does_not_fit");
}

}  // namespace
}  // namespace podium::sched
