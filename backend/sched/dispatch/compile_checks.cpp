#include "backend/sched/dispatch/compile_checks.h"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "backend/sched/dispatch/attempt_lifecycle.h"
#include "engine/core/text/json_text.h"
#include "engine/core/topology/accelerator.h"

namespace podium::sched {

namespace {

using nlohmann::json;

std::string gib_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

int check_compile_preflights(db::Transaction& tx, const std::shared_ptr<spdlog::logger>& log) {
  auto r = tx.exec(
      "SELECT p.id, p.state, p.plan::text AS plan, p.preflight_run_id AS child, c.accelerator, "
      "ch.state AS child_state, ch.failure_class AS child_class, "
      "(ch.log_facts->'hbm')::text AS hbm FROM runs p JOIN runs ch ON ch.id = p.preflight_run_id "
      "LEFT JOIN clusters c ON c.id = p.cluster_id WHERE p.preflight_state = 'pending' AND "
      "ch.state IN ('succeeded', 'failed', 'cancelled') FOR UPDATE OF p SKIP LOCKED");
  int changed = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    const std::string id = r.at(i, "id");
    const std::string state = r.at(i, "state");
    const std::string child = r.at(i, "child");
    json plan = json::parse(r.at(i, "plan"), nullptr, false);
    if (!plan.is_object()) plan = json::object();
    json hbm = r.is_null(i, "hbm") ? json(nullptr) : json::parse(r.at(i, "hbm"), nullptr, false);
    // The compiler's figure: the compiled step's total when the compile succeeded, or what an
    // out-of-memory compile for the target said it needs (XLA fails a TPU compile from a CPU
    // host exactly as on the target: "Used X of Y hbm" / "required for ... (X) exceeds ...").
    const std::string source = hbm.is_object() ? hbm.value("source", "") : std::string();
    const bool succeeded = r.at(i, "child_state") == "succeeded";
    const bool compile_oom = r.at(i, "child_state") == "failed" &&
                             r.opt(i, "child_class").value_or("") == "oom" &&
                             source == "oom_required";
    const bool compiled = hbm.is_object() && hbm.contains("used_gib") &&
                          hbm["used_gib"].is_number() &&
                          ((succeeded && source == "compiler_total") || compile_oom);
    ++changed;
    if (state != "queued") {
      // Cancelled (or otherwise moved on) meanwhile: nothing left to decide.
      record_preflight_decision(tx, id, "failed", std::nullopt, std::nullopt, false);
      continue;
    }
    if (!compiled) {
      record_preflight_decision(tx, id, "failed", std::nullopt, std::string("config"), true);
      transition_run(tx, id, "queued", "failed",
                     "compile check run " + child + " ended " + r.at(i, "child_state") +
                         (r.is_null(i, "child_class") ? "" : " (" + r.at(i, "child_class") + ")") +
                         " without a compiler memory figure; see its log");
      continue;
    }
    const double needed = hbm["used_gib"].get<double>();
    const auto acc = core::parse_accelerator(r.at(i, "accelerator"));
    const double usable = acc.value ? acc.value->usable_hbm_gib_per_device : 0.0;
    // A compile for a TPU slice (libtpu's topology, from any host) runs XLA's memory assignment
    // against the slice's HBM and fails when the step does not fit, as on the target: one that
    // succeeded fits, also where memory_analysis()'s total is above the usable figure (v5e-8:
    // 18.29 GiB compiled within 15.75; XLA rematerialized under the limit, bench/fidelity).
    // Without such a limit in the compile the figure is compared with the usable HBM.
    const bool tpu_target = acc.value && acc.value->kind == core::AcceleratorKind::tpu;
    const bool fits = !compile_oom && (tpu_target || !(usable > 0) || needed <= usable);
    json memory = plan.value("memory", json::object());
    if (!memory.is_object()) memory = json::object();
    memory["per_device_gib"] = needed;
    memory["low_gib"] = needed;
    memory["high_gib"] = needed;
    memory["capacity_gib"] = usable;
    memory["basis"] = "compiled";
    memory["source"] = {
        {"kind", source}, {"gib_per_device", needed}, {"oom", compile_oom}, {"run", child}};
    memory["verdict"] = fits ? (usable > 0 ? "fits" : "uncertain") : "does_not_fit";
    memory["fits"] = fits && usable > 0;
    plan["memory"] = memory;
    const std::string figure = gib_text(needed) + " GiB per device (compiled by run " + child +
                               ")" + (usable > 0 ? ", " + gib_text(usable) + " GiB usable" : "");
    if (fits) {
      record_preflight_decision(tx, id, "passed", core::json_text(plan), std::nullopt, true);
      record_run_note(tx, id, "queued", "compile check passed: " + figure);
      notify_runs(tx, id);
    } else {
      json errors = plan.value("errors", json::array());
      if (!errors.is_array()) errors = json::array();
      errors.push_back({{"code", "hbm_exceeded"},
                        {"message", "the compiled training step needs " + figure},
                        {"hint",
                         "lower per_device_batch_size or max_target_length, shard more "
                         "(ici_fsdp_parallelism), or rematerialize (remat_policy=full)"}});
      plan["errors"] = errors;
      plan["ok"] = false;
      record_preflight_decision(tx, id, "failed", core::json_text(plan), std::string("oom"), true);
      transition_run(tx, id, "queued", "failed", "refused by its compile check: needs " + figure);
    }
    log->info(core::json_text({{"msg", "compile check decided"},
                               {"run", id},
                               {"child", child},
                               {"needed_gib", needed},
                               {"usable_gib", usable},
                               {"fits", fits}}));
  }
  return changed;
}

}  // namespace podium::sched
