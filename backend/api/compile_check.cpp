#include "backend/api/compile_check.h"

#include "backend/api/resolve.h"
#include "backend/api/sql_util.h"
#include "backend/common/problem.h"
#include "backend/sched/launch_spec.h"
#include "backend/sched/lifecycle/run_writes.h"
#include "engine/core/text/json_text.h"
#include "engine/core/topology/accelerator.h"

namespace podium::api {

namespace {

using nlohmann::json;

}  // namespace

void create_compile_check(ApiContext& ctx, db::Transaction& tx, const std::string& run_id,
                          const Submission& s, const std::string& owner_id) {
  const std::string compile_cluster_key = s.spec.compile_cluster.value_or(s.spec.cluster);
  auto compile_cluster = find_cluster_id(tx, compile_cluster_key);
  if (!compile_cluster)
    throw http::unprocessable("no cluster " + compile_cluster_key + " to run the compile check on",
                              {{"compile_cluster", "unknown cluster"}});
  auto target =
      tx.exec("SELECT accelerator, num_slices, maxtext_version FROM clusters WHERE id = $1",
              {s.cluster_id});
  auto parsed = core::parse_accelerator(target.at(0, "accelerator"));
  const int slices = s.spec.num_slices.value_or(static_cast<int>(target.int64(0, "num_slices")));

  // Rank 0's command of the run itself, as a one-host launch would build it.
  sched::LaunchInput in;
  in.run_id = run_id;
  in.run_name = run_id + "-compile";
  in.attempt_id = "compile";
  in.spec = s.spec_json;
  if (s.dataset_id) {
    auto d = tx.exec("SELECT uri FROM datasets WHERE id = $1", {*s.dataset_id});
    if (!d.empty()) in.dataset_uri = d.at(0, "uri");
  }
  in.settings = ctx.engine.launch;
  sched::GangMember only;
  only.address = "127.0.0.1";
  in.members = {only};
  if (parsed.value) in.accelerator_kind = std::string(core::kind_name(parsed.value->kind));
  in.maxtext_layout = core::choose_maxtext_layout(s.spec.maxtext_version,
                                                  target.at(0, "maxtext_version"), std::nullopt);
  std::vector<sched::RankLaunch> launch;
  try {
    launch = sched::build_launch(in);
  } catch (const std::invalid_argument& e) {
    throw http::unprocessable(std::string("no compile check can be built: ") + e.what(),
                              {{"preflight", e.what()}});
  }
  const std::string topology =
      parsed.value
          ? (parsed.value->cloud_type.empty() ? parsed.value->type : parsed.value->cloud_type)
          : target.at(0, "accelerator");
  // MaxText's train_compile always names its target. The reference workload compiles a TPU
  // target for its topology from the compile host's CPU (jax[tpu]), and a CPU target for the
  // compile host itself.
  const bool reference = s.spec.workload == core::Workload::reference;
  const bool tpu_target = parsed.value && parsed.value->kind == core::AcceleratorKind::tpu;
  const auto argv =
      sched::compile_check_command(launch.front().command, reference,
                                   !reference || tpu_target ? topology : std::string(), slices);

  const std::string child = new_id("run");
  json spec = {{"name", s.spec.name + "-compile-check"},
               {"cluster", compile_cluster_key},
               {"workload", "command"},
               {"command", argv},
               {"env", s.spec_json.value("env", json::object())},
               {"max_restarts", 0},
               {"tags", {"compile-check"}}};
  if (s.spec.workdir) spec["workdir"] = *s.spec.workdir;
  // The check compiles the run's own code: the same bundle, unpacked the same way.
  if (s.spec.code_bundle) spec["code_bundle"] = *s.spec.code_bundle;
  json plan = {{"ok", true},
               {"errors", json::array()},
               {"warnings", json::array()},
               {"compile_check_for", run_id}};
  sched::create_queued_run(tx, {.id = child,
                                .name = spec["name"].get<std::string>(),
                                .owner_id = owner_id,
                                .cluster_id = *compile_cluster,
                                .dataset_id = std::nullopt,
                                .model = s.spec.model.value_or(""),
                                .workload = "command",
                                .spec = core::json_text(spec),
                                .plan = core::json_text(plan),
                                .forced = false,
                                .priority = s.spec.priority,
                                .tags = {"compile-check"},
                                .code_bundle = s.spec.code_bundle,
                                .skipped_checks = {},
                                .compile_check_for = run_id,
                                .cause = "compile check of run " + run_id});
  sched::record_preflight_pending(tx, run_id, child);
}

}  // namespace podium::api
