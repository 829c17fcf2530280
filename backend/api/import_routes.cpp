// POST /runs/import: a MaxText log (as a host printed it, as `kubectl logs` or Ray shows it)
// becomes a finished run: one attempt without hosts, a metrics row per step, the log facts
// (parameters, TFLOPs per step, compiler memory estimate, HBM peak), the configuration from its
// "Config param" lines under the body's config, the failure class its signatures imply, and the
// lines themselves (attempt 1, rank 0). All in one transaction: a refused import stores nothing.
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "backend/api/accelerator_problem.h"
#include "backend/api/api_context.h"
#include "backend/api/plan_check.h"
#include "backend/api/route_table.h"
#include "backend/api/run_view.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"
#include "backend/ingest/log_ingest.h"
#include "backend/sched/lifecycle/attempt_writes.h"
#include "backend/sched/lifecycle/run_writes.h"
#include "engine/core/logs/failure_classifier.h"
#include "engine/core/logs/maxtext_log.h"
#include "engine/core/plan/hbm_peak.h"
#include "engine/core/text/json_text.h"
#include "engine/core/topology/accelerator.h"

namespace podium::api {

namespace {

using nlohmann::json;

constexpr std::size_t kLineBatch = 2000;  // log lines per INSERT
constexpr std::size_t kStepBatch = 2000;  // metrics rows per INSERT
constexpr std::size_t kMaxNameLength = 128;

json finite(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}

// The same rule as a submitted run's name (engine/core/spec/run_spec.cpp).
bool valid_run_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  if (!std::isalnum(static_cast<unsigned char>(s.front()))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

// A "Config param" value as JSON: MaxText prints Python reprs (True, None, 1.5, 'text').
json config_value(const std::string& text) {
  if (text == "True") return true;
  if (text == "False") return false;
  if (text == "None") return nullptr;
  if (!text.empty()) {
    std::int64_t i = 0;
    auto [pi, ei] = std::from_chars(text.data(), text.data() + text.size(), i);
    if (ei == std::errc() && pi == text.data() + text.size()) return i;
    double d = 0;
    auto [pd, ed] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ed == std::errc() && pd == text.data() + text.size() && std::isfinite(d)) return d;
  }
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
      text.back() == text.front())
    return text.substr(1, text.size() - 2);
  return text;
}

struct ImportRequest {
  std::string name;
  core::AcceleratorType accelerator;
  int num_slices = 1;
  std::string model;
  json config = json::object();
  std::string log;
};

ImportRequest read_request(const ApiContext& ctx, const http::Request& req) {
  auto body = http::parse_json_object(req);
  http::ObjectReader in(body);
  ImportRequest out;
  auto name = in.string("name", true, kMaxNameLength);
  auto accelerator = in.string("accelerator", true, 64);
  auto slices = in.integer("num_slices", false, 1, 4096);
  auto model = in.string("model", true, 128);
  auto config = in.object("config", false);
  auto log = in.string("log", true, ctx.config.max_body_bytes);
  if (name && !valid_run_name(*name))
    in.error("name",
             "must be 1-128 characters of letters, digits, '-', '_' or '.', starting with a "
             "letter or digit");
  if (log && log->find_first_not_of(" \t\r\n") == std::string::npos) in.error("log", "has no text");
  in.reject_unknown_fields();
  in.finish();
  auto parsed = core::parse_accelerator(*accelerator);
  if (!parsed.value) throw accelerator_problem(parsed);
  out.name = *name;
  out.accelerator = *parsed.value;
  out.num_slices = static_cast<int>(slices.value_or(1));
  out.model = *model;
  if (config) out.config = *config;
  out.log = std::move(*log);
  return out;
}

// What the log says, plus the lines as they are stored.
struct Digested {
  core::LogDigest digest;
  core::HbmPeakTracker hbm;
  std::vector<std::string> lines;
};

Digested digest_log(const std::string& text) {
  Digested d;
  std::string_view rest(text);
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    d.hbm.feed(line, d.digest.feed(line));
    d.lines.push_back(ingest::storable_line(line));
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  return d;
}

json log_facts(const core::LogDigest& d, const core::HbmPeakTracker& hbm) {
  json facts = json::object();
  if (auto p = d.num_params_billion()) facts["num_params_billion"] = *p;
  const core::TflopsInfo& t = d.tflops_per_step();
  if (t.tflops_per_device) facts["tflops_per_step_per_device"] = *t.tflops_per_device;
  if (t.learnable_weight_percent)
    facts["learnable_weight_flops_percent"] = *t.learnable_weight_percent;
  if (t.attention_percent) facts["attention_flops_percent"] = *t.attention_percent;
  if (d.memory_estimate()) facts["memory_estimate"] = core::to_json(*d.memory_estimate());
  // The peak by trust (OOM requirement, compiler total, Memstats after steps); the parameter
  // footprint is kept apart, never as the peak.
  if (const auto& peak = hbm.peak()) facts["hbm"] = core::to_json(*peak);
  if (const auto& params = hbm.params()) facts["hbm_params"] = core::to_json(*params);
  return facts;
}

// How the logged process ended: a failure signature fails it (classified like a live attempt's
// rank 0 that exited 1), otherwise it succeeded.
core::FailureClassification classify(const core::LogDigest& d) {
  core::AttemptEvidence evidence;
  bool failed = false;
  for (const auto& s : d.signatures()) {
    evidence.signatures.push_back(s.signature);
    evidence.signature_excerpts[s.signature] = s.first_excerpt;
    failed |= !core::is_warning_signature(s.signature);
  }
  evidence.completed_a_step = !d.steps().empty();
  core::RankOutcome rank0;
  rank0.rank = 0;
  rank0.exit_code = failed ? 1 : 0;
  evidence.ranks.push_back(rank0);
  return core::classify_failure(evidence);
}

void insert_lines(db::Transaction& tx, const std::string& run_id, const std::string& attempt_id,
                  const std::vector<std::string>& lines) {
  for (std::size_t first = 0; first < lines.size(); first += kLineBatch) {
    const std::size_t last = std::min(lines.size(), first + kLineBatch);
    json batch = json::array();
    for (std::size_t i = first; i < last; ++i) batch.push_back(lines[i]);
    tx.exec(
        "INSERT INTO log_lines (run_id, attempt_id, attempt_number, rank, seq, line) "
        "SELECT $1, $2, 1, 0, $3::bigint + t.ord - 1, t.line "
        "FROM jsonb_array_elements_text($4::jsonb) WITH ORDINALITY AS t(line, ord)",
        {run_id, attempt_id, std::to_string(first), core::json_text(batch)});
  }
}

void insert_metrics(db::Transaction& tx, const std::string& run_id, const std::string& attempt_id,
                    const core::LogDigest& d) {
  json rows = json::array();
  auto flush = [&] {
    if (rows.empty()) return;
    tx.exec(
        "INSERT INTO metrics (run_id, attempt_id, attempt_number, step, step_seconds, "
        "tflops_per_device, tokens_per_second_per_device, total_weights, loss, extra, rampup) "
        "SELECT $1, $2, 1, (e->>'step')::bigint, (e->>'seconds')::float8, "
        "(e->>'tflops')::float8, (e->>'tokens')::float8, (e->>'weights')::float8, "
        "(e->>'loss')::float8, e->'extra', (e->>'rampup')::boolean "
        "FROM jsonb_array_elements($3::jsonb) AS e",
        {run_id, attempt_id, core::json_text(rows)});
    rows = json::array();
  };
  for (const auto& [step, m] : d.steps()) {
    json extra = json::object();
    for (const auto& [k, v] : m.extra)
      if (std::isfinite(v)) extra[k] = v;
    if (m.live_slice_count) extra["live_slice_count"] = *m.live_slice_count;
    rows.push_back(
        {{"step", step},
         {"seconds", finite(m.seconds)},
         {"tflops", finite(m.tflops_per_device)},
         {"tokens", finite(m.tokens_per_second_per_device)},
         {"weights", finite(m.total_weights)},
         // A NaN loss is stored as NaN, as live ingestion does: the run page must show it.
         {"loss", m.loss ? (std::isfinite(*m.loss) ? json(*m.loss) : json("NaN")) : json(nullptr)},
         {"extra", extra},
         {"rampup", m.rampup}});
    if (rows.size() >= kStepBatch) flush();
  }
  flush();
}

http::Response import_run(ApiContext& ctx, http::RequestContext& rc) {
  ImportRequest req = read_request(ctx, rc.request);
  Digested d = digest_log(req.log);
  req.log.clear();
  const core::LogDigest& digest = d.digest;
  if (digest.steps().empty() && digest.signatures().empty())
    throw http::unprocessable(
        "the log has no MaxText step line and no failure signature: nothing to import",
        {{"log", "no \"completed step\" line and no known failure signature"}});

  // Configuration: the log's "Config param" lines, overridden by the body's config.
  json config = json::object();
  for (const auto& [k, v] : digest.config_params()) config[k] = config_value(v);
  for (const auto& [k, v] : req.config.items()) config[k] = v;
  auto number = [&](const char* key) {
    return config.contains(key) && config[key].is_number() ? config[key] : json(nullptr);
  };
  const json spec = {{"name", req.name},
                     {"model", req.model},
                     {"workload", "maxtext"},
                     {"accelerator", req.accelerator.type},
                     {"num_slices", req.num_slices},
                     {"steps", number("steps")},
                     {"per_device_batch_size", number("per_device_batch_size")},
                     {"max_target_length", number("max_target_length")},
                     {"config", config}};

  const core::FailureClassification verdict = classify(digest);
  const bool succeeded = verdict.outcome == core::AttemptOutcome::succeeded;
  const std::string state = succeeded ? "succeeded" : "failed";
  const json failure_class =
      verdict.failure_class ? json(std::string(core::to_string(*verdict.failure_class))) : json();
  const auto first_step = digest.first_step();
  const auto last_step = digest.last_step();
  const std::string id = new_id("run");
  const std::string attempt_id = sched::new_attempt_id();
  const std::string owner = user_id(rc);
  const std::optional<std::string> failure_class_name =
      failure_class.is_null() ? std::nullopt
                              : std::optional<std::string>(failure_class.get<std::string>());

  ctx.db.transact([&](db::Transaction& tx) {
    sched::ImportedRun run;
    run.id = id;
    run.name = req.name;
    run.owner_id = owner;
    run.model = req.model;
    run.spec = core::json_text(spec);
    run.state = state;
    run.failure_class = failure_class_name;
    run.last_step = last_step;
    run.accelerator = req.accelerator.type;
    run.num_slices = req.num_slices;
    run.log_facts = core::json_text(log_facts(digest, d.hbm));
    run.cause =
        "imported from a log of " + std::to_string(d.lines.size()) + " lines: " + verdict.reason;
    sched::record_imported_run(tx, run);
    sched::ImportedAttempt attempt;
    attempt.id = attempt_id;
    attempt.run_id = id;
    attempt.state = succeeded ? sched::AttemptState::succeeded : sched::AttemptState::failed;
    attempt.failure_class = failure_class_name;
    attempt.classification = core::to_json(verdict);
    attempt.num_slices = req.num_slices;
    attempt.world_size = req.accelerator.hosts_per_slice * req.num_slices;
    attempt.first_step = first_step;
    attempt.last_step = last_step;
    sched::record_imported_attempt(tx, attempt);
    insert_lines(tx, id, attempt_id, d.lines);
    insert_metrics(tx, id, attempt_id, digest);
    for (const auto& s : digest.signatures())
      tx.exec(
          "INSERT INTO attempt_signatures (attempt_id, rank, signature, count, excerpt) VALUES "
          "($1, 0, $2, $3::bigint, $4)",
          {attempt_id, std::string(core::to_string(s.signature)), std::to_string(s.count),
           ingest::storable_line(s.first_excerpt)});
    audit(tx, rc, "import", "run", id,
          {{"name", req.name},
           {"lines", d.lines.size()},
           {"steps", digest.steps().size()},
           {"state", state}});
    // Finished at once: its plan-against-actual verdict is part of the answer.
    decide_plan_check(tx, id, summary_options(ctx.config));
  });

  // The answer is the run exactly as GET /runs/{id} shows it.
  auto row =
      ctx.db.transact([&](db::Transaction& tx) { return load_run(tx, id); }, db::TxMode::read_only);
  http::Response res = json_response(201, run_json(row, 0, true));
  res.set_header("Location", "/api/v1/runs/" + id);
  return res;
}

}  // namespace

void register_import_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("POST", "/api/v1/runs/import", http::Access::writer, import_run);
}

}  // namespace podium::api
