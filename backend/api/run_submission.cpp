#include "backend/api/run_submission.h"

#include "backend/api/model_store.h"
#include "backend/api/plan_history.h"

#include "backend/api/resolve.h"
#include "backend/common/problem.h"
#include "engine/core/topology/accelerator.h"

namespace podium::api {

namespace {

std::optional<double> opt_double(const db::Result& r, const char* col) {
  auto v = r.opt_double(0, col);
  return v;
}

}  // namespace

Submission prepare_submission(db::Transaction& tx, const nlohmann::json& body) {
  auto parsed = core::parse_run_spec(body);
  if (!parsed.value) throw http::bad_request("the run spec is invalid", std::move(parsed.errors));
  Submission s;
  s.spec = std::move(*parsed.value);
  s.spec_json = core::to_json(s.spec);
  s.spec_json.erase("force");

  auto cluster_id = find_cluster_id(tx, s.spec.cluster);
  if (!cluster_id)
    throw http::unprocessable("no cluster " + s.spec.cluster, {{"cluster", "no such cluster"}});
  s.cluster_id = *cluster_id;
  auto cluster = tx.exec(
      "SELECT accelerator, num_slices, executor->>'kind' AS executor, maxtext_version FROM "
      "clusters WHERE id = $1",
      {s.cluster_id});
  if (s.spec.code_bundle) {
    // Every executor runs bundles: agents unpack them, and under Slurm or Kubernetes the rank's
    // wrapper (podium-worker attach) fetches, checks and unpacks them before the rank starts.
    if (tx.exec("SELECT 1 FROM code_bundles WHERE digest = $1", {*s.spec.code_bundle}).empty())
      throw http::unprocessable(
          "no bundle " + *s.spec.code_bundle + "; upload it first (podium runs submit --code DIR)",
          {{"code_bundle", "no such bundle"}});
  }

  core::PlanInput input;
  input.spec = s.spec;
  input.accelerator_name = cluster.at(0, "accelerator");
  auto acc = core::parse_accelerator(input.accelerator_name);
  if (acc.value) input.accelerator = *acc.value;
  input.num_slices = static_cast<int>(cluster.int64(0, "num_slices"));

  if (s.spec.dataset) {
    auto dataset_id = find_dataset_id(tx, *s.spec.dataset);
    if (!dataset_id)
      throw http::unprocessable("no dataset " + *s.spec.dataset, {{"dataset", "no such dataset"}});
    s.dataset_id = *dataset_id;
    auto d = tx.exec(
        "SELECT format, records, bytes, tokens, tokens_per_record FROM datasets WHERE id = $1",
        {*dataset_id});
    core::DatasetFacts facts;
    facts.format = d.at(0, "format");
    facts.records = opt_double(d, "records");
    facts.bytes = opt_double(d, "bytes");
    facts.tokens = opt_double(d, "tokens");
    facts.tokens_per_record = opt_double(d, "tokens_per_record");
    input.dataset = facts;
  }

  if (s.spec.model) {
    input.known_models = stored_model_names(tx);
    if (auto stored = load_model(tx, *s.spec.model)) input.model = std::move(stored->spec);
  }

  if (s.spec.workload == core::Workload::maxtext) {
    // The MaxText its hosts run: the run's or the cluster's declaration, else what the agents
    // reported at registration (one entry per agent, so the most common wins).
    std::vector<std::string> reported;
    auto w = tx.exec(
        "SELECT software->>'maxtext' AS maxtext FROM workers WHERE cluster_id = $1 AND "
        "software->>'maxtext' IS NOT NULL",
        {s.cluster_id});
    for (size_t i = 0; i < w.size(); ++i) reported.push_back(w.at(i, "maxtext"));
    input.maxtext = core::resolve_maxtext_basis(
        s.spec.maxtext_version, cluster.at(0, "maxtext_version"), reported, s.spec.maxtext_fork);
  }

  if (input.accelerator && s.spec.model)
    input.history = load_plan_history(tx, *s.spec.model, input.accelerator->type,
                                      input.accelerator->peak_tflops_per_device, s.spec_json);
  auto plan = core::make_plan(input);
  // Elastic runs: every slice count from min_slices up, planned the same way; a min_slices shape
  // that cannot run refuses the submission like any other plan error.
  s.elastic = core::plan_elastic_shapes(input);
  core::add_min_slices_error(plan, s.elastic, s.spec);
  s.plan_ok = plan.ok;
  s.plan_blocked = core::has_blocking_errors(plan);
  for (const std::string& check : plan.skipped_checks) {
    std::vector<std::string> codes;
    for (const core::PlanIssue& e : plan.errors)
      if (e.skipped && (e.check == check || (e.check.empty() && s.spec.force)))
        codes.push_back(e.code);
    s.skipped.emplace_back(check, std::move(codes));
  }
  s.plan = core::to_json(plan);
  s.plan["elastic"] = core::to_json(s.elastic);
  return s;
}

std::vector<core::ElasticShape> plan_stored_shapes(db::Transaction& tx,
                                                   const nlohmann::json& stored_spec) {
  return prepare_submission(tx, stored_spec).elastic;
}

}  // namespace podium::api
