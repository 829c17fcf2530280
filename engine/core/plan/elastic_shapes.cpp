#include "engine/core/plan/elastic_shapes.h"

#include <algorithm>

#include "engine/core/model/model_catalog.h"

namespace podium::core {

namespace {

bool check_skipped(const RunSpec& spec, const std::string& check) {
  return spec.force ||
         (!check.empty() && std::find(spec.skip_checks.begin(), spec.skip_checks.end(), check) !=
                                spec.skip_checks.end());
}

std::optional<int> model_layers(const PlanInput& in) {
  if (in.model && in.model->num_decoder_layers > 0) return in.model->num_decoder_layers;
  if (!in.model && in.spec.model)
    if (const ModelSpec* m = find_model(*in.spec.model); m && m->num_decoder_layers > 0)
      return m->num_decoder_layers;
  return std::nullopt;
}

}  // namespace

std::vector<ElasticShape> plan_elastic_shapes(const PlanInput& in) {
  std::vector<ElasticShape> shapes;
  const int requested = std::max(1, in.spec.num_slices.value_or(in.num_slices));
  if (!in.spec.min_slices || *in.spec.min_slices >= requested || *in.spec.min_slices < 1)
    return shapes;
  std::optional<AcceleratorType> accelerator = in.accelerator;
  if (!accelerator) {
    auto parsed = parse_accelerator(in.accelerator_name);
    if (parsed.value) accelerator = *parsed.value;
  }
  std::vector<std::string> axes;
  if (in.maxtext) axes = in.maxtext->mesh_axes;
  if (in.spec.maxtext_fork && !in.spec.maxtext_fork->mesh_axes.empty())
    axes = in.spec.maxtext_fork->mesh_axes;

  for (int n = *in.spec.min_slices; n <= requested; ++n) {
    ElasticShape shape;
    shape.slices = n;
    ElasticLayoutInput layout_in;
    layout_in.parallelism = in.spec.parallelism;
    layout_in.from_slices = requested;
    layout_in.to_slices = n;
    if (accelerator) layout_in.devices_per_slice = accelerator->devices_per_slice;
    layout_in.per_device_batch_size = in.spec.per_device_batch_size;
    layout_in.num_layers = model_layers(in);
    layout_in.axes = axes;
    shape.layout = lay_out_slices(layout_in);
    if (!shape.layout.ok) {
      shape.verdict = "no_layout";
      shape.problems.push_back(shape.layout.reason);
      shape.checks.push_back("mesh");
      shape.usable = check_skipped(in.spec, "mesh");
      shapes.push_back(std::move(shape));
      continue;
    }
    PlanInput shaped = in;
    shaped.spec.parallelism = shape.layout.parallelism;
    shaped.spec.num_slices = n;
    shaped.spec.min_slices.reset();
    shape.plan = make_plan(shaped);
    bool blocking = false;
    for (const PlanIssue& e : shape.plan->errors) {
      shape.problems.push_back(e.message);
      if (!e.check.empty() &&
          std::find(shape.checks.begin(), shape.checks.end(), e.check) == shape.checks.end())
        shape.checks.push_back(e.check);
      blocking = blocking || !e.skipped;
    }
    shape.verdict = shape.plan->errors.empty() ? "ok" : (blocking ? "refused" : "skipped");
    shape.usable = !blocking;
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

nlohmann::json spec_for_shape(const nlohmann::json& spec, const ElasticShape& shape) {
  nlohmann::json out = spec;
  out["parallelism"] = shape.layout.parallelism;
  return out;
}

bool add_min_slices_error(Plan& plan, const std::vector<ElasticShape>& shapes,
                          const RunSpec& spec) {
  if (shapes.empty() || shapes.front().verdict == "ok") return false;
  const ElasticShape& min = shapes.front();
  if (min.verdict == "skipped") return false;  // its errors are waived by the spec already
  std::string message = "min_slices=" + std::to_string(min.slices) + " cannot run: ";
  for (size_t i = 0; i < min.problems.size(); ++i) message += (i ? "; " : "") + min.problems[i];
  // The error belongs to the check of the first problem no skip waives, so skipping that check
  // (or forcing) waives this one as well.
  std::string check;
  if (min.verdict == "no_layout") {
    check = "mesh";
  } else if (min.plan) {
    for (const PlanIssue& e : min.plan->errors)
      if (!e.skipped) {
        check = e.check;
        break;
      }
  }
  PlanIssue issue;
  issue.code = "elastic_min_slices";
  issue.message = message;
  issue.hint =
      "raise min_slices to a slice count whose shape plans (the plan's elastic list "
      "shows each), or change the DCN parallelism so that it divides";
  issue.field = "min_slices";
  issue.check = check;
  issue.skipped = check_skipped(spec, check);
  plan.errors.push_back(std::move(issue));
  plan.ok = false;
  return true;
}

nlohmann::json to_json(const std::vector<ElasticShape>& shapes) {
  nlohmann::json out = nlohmann::json::array();
  for (const ElasticShape& s : shapes) {
    nlohmann::json j = {{"slices", s.slices},
                        {"verdict", s.verdict},
                        {"usable", s.usable},
                        {"problems", s.problems},
                        {"changes", s.layout.changes}};
    j["parallelism"] = s.layout.ok ? nlohmann::json(s.layout.parallelism) : nlohmann::json(nullptr);
    j["memory_gib"] = nullptr;
    j["fits"] = nullptr;
    if (s.plan && s.plan->memory) {
      j["memory_gib"] = s.plan->memory->per_device_gib;
      j["fits"] = s.plan->memory->fits;
    }
    j["step_seconds"] = s.plan && s.plan->estimate ? nlohmann::json(s.plan->estimate->step_seconds)
                                                   : nlohmann::json(nullptr);
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace podium::core
