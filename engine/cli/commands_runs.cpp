// podium runs ..., podium plan, podium logs, podium compare, podium import-log

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/bundle/bundle_files.h"
#include "engine/cli/commands.h"
#include "engine/cli/exit_codes.h"
#include "engine/cli/run_spec.h"
#include "engine/cli/views.h"

namespace podium::cli {
namespace {

// The query parameter that carries a logs page's next_cursor back to the server. The general
// list convention of the contract is ?cursor=; GET /runs/{id}/logs documents ?after= as well,
// which the server may read as a position. The cursor is what next_cursor is for.
constexpr const char* kLogsCursorParam = "cursor";
constexpr long long kLogsPage = 500;

bool terminal_state(const std::string& s) {
  return s == "succeeded" || s == "failed" || s == "cancelled";
}

std::string run_path(const std::string& id) {
  return "/api/v1/runs/" + segment(id);
}

// Reads -f FILE (or "-") and converts it to the JSON run spec. Usage exit when it cannot.
std::optional<Json> read_spec(Context& ctx, int& exit) {
  const auto file = ctx.args.value("file");
  if (!file) {
    exit = usage_error(ctx, "missing -f run.yaml");
    return std::nullopt;
  }
  const auto text = read_input(ctx, *file, exit);
  if (!text) return std::nullopt;
  YamlToJson spec = load_run_spec(*text);
  if (!spec.value) {
    exit = usage_error(ctx, (*file == "-" ? std::string("<stdin>") : *file) + ": " + spec.error);
    return std::nullopt;
  }
  return std::move(*spec.value);
}

void print_plan_warnings(Context& ctx, const Json& plan) {
  const Json* warnings = find_path(plan, "warnings");
  if (warnings == nullptr || !warnings->is_array()) return;
  for (const auto& w : *warnings) {
    if (w.is_object()) {
      const Json* code = find_path(w, "code");
      ctx.err << "warning: " << (code != nullptr ? format_value(*code) + ": " : "")
              << format_value(find_path(w, "message")) << "\n";
    } else {
      ctx.err << "warning: " << format_value(w) << "\n";
    }
  }
}

// ----- runs -----

int runs_list(Context& ctx) {
  std::string path = "/api/v1/runs";
  for (const char* filter : {"state", "cluster", "model", "owner", "tag", "q", "project", "dataset",
                             "accelerator", "since", "until"}) {
    if (auto v = ctx.args.value(filter)) path = with_query(path, filter, *v);
  }
  return print_list(ctx, path, run_columns(), "runs");
}

int runs_get(Context& ctx) {
  const Call c = call(ctx, "GET", run_path(ctx.args.positionals[0]));
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  if (!c.json.is_object()) return report_unreadable(ctx, "expected a run object");
  // The stored plan is long; `podium plan` shows it in full. Here one verdict line stands in.
  Json shown = c.json;
  const Json* plan = find_path(c.json, "plan");
  if (plan != nullptr) shown.erase("plan");
  // A flag reads as a sentence with both figures rather than as nested fields.
  const Json* underperforming = find_path(c.json, "flags.underperforming");
  if (underperforming != nullptr) shown.erase("flags");
  ctx.out << render_details(shown);
  if (plan != nullptr && plan->is_object()) ctx.out << "plan: " << plan_verdict(*plan) << "\n";
  if (underperforming != nullptr && underperforming->is_object())
    ctx.out << "flag: " << plan_check_text(*underperforming) << "\n";
  return kExitOk;
}

// --code DIR: packs DIR, uploads it unless the server has it already, and returns its digest.
std::optional<std::string> upload_code(Context& ctx, const std::string& dir, int& exit) {
  bundle::PackedBundle packed;
  try {
    std::uint64_t shown = 0;
    packed = bundle::pack_directory(dir, bundle::BundleLimits{}, [&](std::uint64_t files) {
      if (files >= shown + 5000) {  // a large tree: show that work is going on
        shown = files;
        ctx.err << "packing " << dir << ": " << files << " files\n";
      }
    });
  } catch (const bundle::BundleError& e) {
    exit = usage_error(ctx, std::string("--code ") + dir + ": " + e.what());
    return std::nullopt;
  }
  ctx.err << "code: " << packed.summary.entries << " files from " << dir << " ("
          << packed.summary.uncompressed_bytes << " bytes, " << packed.bytes.size()
          << " compressed; " << packed.excluded << " left out by .git/.gitignore/.podiumignore) "
          << packed.digest << "\n";
  const std::string path = "/api/v1/bundles/" + packed.digest;
  const Call have = call(ctx, "GET", path, {}, /*report_errors=*/false);
  if (have.status == 0) {
    exit = have.exit;
    return std::nullopt;
  }
  if (have.status == 200) {
    ctx.err << "code: the server has this bundle already\n";
    return packed.digest;
  }
  if (have.status != 404) {
    exit = report_status(ctx, have.status, have.body);
    return std::nullopt;
  }
  const Call put = call(ctx, "PUT", path, packed.bytes);
  if (!put.ok()) {
    exit = put.exit;
    return std::nullopt;
  }
  ctx.err << "code: uploaded\n";
  return packed.digest;
}

int runs_submit(Context& ctx) {
  int exit = kExitOk;
  auto spec = read_spec(ctx, exit);
  if (!spec) return exit;
  if (ctx.args.has("force")) (*spec)["force"] = true;
  if (const auto checks = ctx.args.values("skip-check"); !checks.empty()) {
    Json list = spec->contains("skip_checks") && (*spec)["skip_checks"].is_array()
                    ? (*spec)["skip_checks"]
                    : Json::array();
    for (const std::string& c : checks) list.push_back(c);
    (*spec)["skip_checks"] = std::move(list);
  }
  if (const auto dir = ctx.args.value("code")) {
    if (spec->is_object() && spec->contains("code_bundle") && !(*spec)["code_bundle"].is_null())
      return usage_error(ctx, "the spec names a code_bundle and --code gives another; use one");
    const auto digest = upload_code(ctx, *dir, exit);
    if (!digest) return exit;
    (*spec)["code_bundle"] = *digest;
  }
  const Call c = call(ctx, "POST", "/api/v1/runs", spec->dump());
  if (!c.ok()) {
    if (c.status == 422 && c.json.is_object()) {
      // A plan with errors: show why, the way `podium plan` would.
      if (const Json* plan = find_path(c.json, "plan"); plan != nullptr && plan->is_object()) {
        ctx.err << "\n" << render_plan(*plan);
      }
      if (!ctx.args.has("force"))
        ctx.err << "hint: fix the spec, skip the failing check with --skip-check CHECK (each "
                   "error names its check), or submit anyway with --force\n";
    }
    return c.exit;
  }
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  if (!c.json.is_object()) return report_unreadable(ctx, "expected the created run");
  ctx.out << "submitted run " << format_value(find_path(c.json, "id")) << " ("
          << format_value(find_path(c.json, "name")) << "): " << run_state_text(c.json) << "\n";
  if (const Json* plan = find_path(c.json, "plan"); plan != nullptr && plan->is_object()) {
    ctx.out << "plan: " << plan_verdict(*plan) << "\n";
    print_plan_warnings(ctx, *plan);
  }
  return kExitOk;
}

int runs_cancel(Context& ctx) {
  const std::string& id = ctx.args.positionals[0];
  const Call c = call(ctx, "POST", run_path(id) + "/cancel", "{}");
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  ctx.out << "cancel requested for run " << id;
  if (c.json.is_object() && c.json.contains("state")) ctx.out << ": " << run_state_text(c.json);
  ctx.out << "\n";
  return kExitOk;
}

int runs_delete(Context& ctx) {
  const std::string& id = ctx.args.positionals[0];
  const Call c = call(ctx, "DELETE", run_path(id));
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
  } else {
    ctx.out << "deleted run " << id << "\n";
  }
  return kExitOk;
}

int runs_attempts(Context& ctx) {
  return print_list(ctx, run_path(ctx.args.positionals[0]) + "/attempts", attempt_columns(),
                    "attempts");
}

int runs_events(Context& ctx) {
  return print_list(ctx, run_path(ctx.args.positionals[0]) + "/events", run_event_columns(),
                    "events");
}

int runs_checkpoints(Context& ctx) {
  return print_list(ctx, run_path(ctx.args.positionals[0]) + "/checkpoints", checkpoint_columns(),
                    "checkpoints");
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    auto comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

int runs_metrics(Context& ctx) {
  int exit = kExitOk;
  std::string path = run_path(ctx.args.positionals[0]) + "/metrics";
  std::vector<std::string> fields;
  if (auto f = ctx.args.value("fields")) {
    fields = split_commas(*f);
    if (fields.empty()) return usage_error(ctx, "--fields needs at least one name");
    path = with_query(path, "fields", *f);
  }
  for (const auto& [flag, param] : {std::pair<const char*, const char*>{"from-step", "from_step"},
                                    {"to-step", "to_step"},
                                    {"max-points", "max_points"}}) {
    const auto v = int_option(ctx, flag, flag == std::string("max-points") ? 1 : 0, exit);
    if (exit != kExitOk) return exit;
    if (v) path = with_query(path, param, std::to_string(*v));
  }
  const Call c = call(ctx, "GET", path);
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  if (!c.json.is_object()) return report_unreadable(ctx, "expected {\"steps\",\"series\"}");
  const Json* steps = find_path(c.json, "steps");
  if (steps == nullptr || !steps->is_array() || steps->empty()) {
    ctx.err << "no metrics recorded\n";
    return kExitOk;
  }
  ctx.out << render_metrics(c.json, fields);
  return kExitOk;
}

int runs_summary(Context& ctx) {
  const Call c = call(ctx, "GET", run_path(ctx.args.positionals[0]) + "/summary");
  if (!c.ok()) return c.exit;
  if (ctx.json || !c.json.is_object()) return print_object(ctx, c);
  // The plan-against-actual verdict as one sentence with both figures.
  Json shown = c.json;
  const Json* check = find_path(c.json, "plan_check");
  if (check != nullptr) shown.erase("plan_check");
  ctx.out << render_details(shown);
  if (check != nullptr && check->is_object())
    ctx.out << "plan_check: " << plan_check_text(*check) << "\n";
  return kExitOk;
}

// The engine manifest (sbatch script, JobSet YAML) as text, ready for a file or a diff.
int runs_manifest(Context& ctx) {
  const Call c = call(ctx, "GET", run_path(ctx.args.positionals[0]) + "/manifest");
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  const Json* text = find_path(c.json, "manifest");
  if (!text || !text->is_string()) return report_unreadable(ctx, "expected a manifest");
  const Json* applied = find_path(c.json, "applied");
  const Json* executor = find_path(c.json, "executor");
  const Json* job = find_path(c.json, "job_id");
  ctx.out << "# " << (executor && executor->is_string() ? executor->get<std::string>() : "engine")
          << (applied && applied->is_boolean() && applied->get<bool>()
                  ? " manifest as applied"
                  : " manifest as it would be applied")
          << (job && job->is_string() ? " (job " + job->get<std::string>() + ")" : "") << "\n"
          << text->get<std::string>();
  return kExitOk;
}

// ----- plan -----

// plan --compile: the spec is submitted as a run with preflight: compile; its compile check
// runs on a host of the compile cluster, and the run, which only served to plan, is cancelled
// once the compiler's figure is in (nothing trains).
int plan_compile(Context& ctx, Json spec) {
  spec["preflight"] = "compile";
  spec["name"] = spec.value("name", std::string("plan")) + "-compile-plan";
  const Call submitted = call(ctx, "POST", "/api/v1/runs", spec.dump(), /*report_errors=*/false);
  if (submitted.status == 0) return submitted.exit;
  if (!submitted.ok()) return report_status(ctx, submitted.status, submitted.body);
  const Json* id = find_path(submitted.json, "id");
  if (!id || !id->is_string()) return report_unreadable(ctx, "expected a run");
  const std::string run = id->get<std::string>();
  ctx.err << "compile check of " << run << " submitted; waiting for the compiler's figure\n";
  Call last;
  for (int i = 0; i < 3600; ++i) {  // an hour at most: MaxText compiles take minutes
    last = call(ctx, "GET", run_path(run));
    if (!last.ok()) return last.exit;
    const Json* state = find_path(last.json, "preflight.state");
    if (state && state->is_string() && state->get<std::string>() != "pending") break;
    ctx.env.sleep(std::chrono::milliseconds(1000));
  }
  const Json* state = find_path(last.json, "preflight.state");
  const std::string verdict = state && state->is_string() ? state->get<std::string>() : "pending";
  if (verdict == "passed") call(ctx, "POST", run_path(run) + "/cancel");
  const Json* plan = find_path(last.json, "plan");
  if (ctx.json) {
    ctx.out << (plan ? plan->dump(2) : "null") << "\n";
  } else if (plan && plan->is_object()) {
    ctx.out << render_plan(*plan);
  }
  if (verdict == "pending") {
    ctx.err << "the compile check of " << run
            << " has not finished; follow it with podium runs get " << run << "\n";
    return kExitFailed;
  }
  if (verdict != "passed") {
    const Json* reason = find_path(last.json, "state");
    ctx.err << "compile check " << verdict << " (run " << run << " is "
            << (reason && reason->is_string() ? reason->get<std::string>() : "?")
            << "); podium runs events " << run << " says why\n";
    return kExitFailed;
  }
  return kExitOk;
}

int plan_command(Context& ctx) {
  int exit = kExitOk;
  auto spec = read_spec(ctx, exit);
  if (!spec) return exit;
  if (ctx.args.has("compile")) return plan_compile(ctx, *spec);
  const Call c = call(ctx, "POST", "/api/v1/plan", spec->dump(), /*report_errors=*/false);
  if (c.status == 0) return c.exit;  // transport failure, already reported
  // A plan with errors may come back as 200 {"ok":false} or as 422 carrying the plan.
  const bool is_plan = c.json.is_object() && c.json.contains("ok");
  if (!c.ok() && !(c.status == 422 && is_plan)) return report_status(ctx, c.status, c.body);
  if (!is_plan) return report_unreadable(ctx, "expected a plan");
  const Json* ok = find_path(c.json, "ok");
  const bool fine = ok->is_boolean() && ok->get<bool>();
  if (ctx.json) {
    print_raw(ctx, c);
  } else {
    ctx.out << render_plan(c.json);
  }
  return fine ? kExitOk : kExitFailed;
}

// ----- logs -----

// Prints log items once each: pages and the live stream may overlap, so a line is printed only
// when its seq is past the last one printed for its (attempt, rank).
class LogPrinter {
 public:
  LogPrinter(std::ostream& out, bool show_rank, bool show_attempt)
      : out_(out), show_rank_(show_rank), show_attempt_(show_attempt) {}

  void print(const Json& item) {
    if (!item.is_object()) {
      if (item.is_string()) out_ << item.get<std::string>() << "\n";
      return;
    }
    const Json* line = find_path(item, "line");
    if (line == nullptr) return;
    const Json* attempt = find_path(item, "attempt");
    const Json* rank = find_path(item, "rank");
    const std::string attempt_text = attempt == nullptr ? "" : format_value(*attempt);
    const std::string key = attempt_text + "/" + (rank == nullptr ? "" : format_value(*rank));
    if (const Json* seq = find_path(item, "seq"); seq != nullptr && seq->is_number_integer()) {
      const auto s = seq->get<long long>();
      const auto it = last_seq_.find(key);
      if (it != last_seq_.end() && s <= it->second) return;
      last_seq_[key] = s;
    }
    if (show_attempt_ && attempt != nullptr && attempt_text != current_attempt_) {
      out_ << "--- attempt " << attempt_text << " ---\n";
      current_attempt_ = attempt_text;
    }
    if (show_rank_ && rank != nullptr) out_ << "[" << format_value(*rank) << "] ";
    std::string text = line->is_string() ? line->get<std::string>() : line->dump();
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    out_ << text << "\n";
  }

 private:
  std::ostream& out_;
  bool show_rank_;
  bool show_attempt_;
  std::string current_attempt_;
  std::map<std::string, long long> last_seq_;
};

std::string logs_query(const Context& ctx, std::string path) {
  if (auto a = ctx.args.value("attempt")) path = with_query(path, "attempt", *a);
  if (auto r = ctx.args.value("rank")) path = with_query(path, "rank", *r);
  return path;
}

int page_logs(Context& ctx, const std::string& id, LogPrinter& printer) {
  std::optional<std::string> cursor;
  std::set<std::string> seen;
  do {
    std::string path = logs_query(ctx, run_path(id) + "/logs");
    path = with_query(path, "limit", std::to_string(kLogsPage));
    if (cursor) path = with_query(path, kLogsCursorParam, *cursor);
    const Call c = call(ctx, "GET", path);
    if (!c.ok()) return c.exit;
    const Json* items = find_path(c.json, "items");
    if (items == nullptr || !items->is_array())
      return report_unreadable(ctx, "expected {\"items\":[...]} of log lines");
    for (const auto& item : *items) printer.print(item);
    cursor.reset();
    const Json* next = find_path(c.json, "next_cursor");
    if (next != nullptr && next->is_string() && !next->get<std::string>().empty()) {
      if (!seen.insert(next->get<std::string>()).second) {
        return report_unreadable(ctx, "the server returned the same logs cursor twice");
      }
      cursor = next->get<std::string>();
    }
  } while (cursor);
  return kExitOk;
}

// What a logs/stream event carries: one log item, a batch ({"items"} or {"lines"} with a first
// seq), or a state change. Returns false when the stream says the run has ended.
bool on_log_event(const std::string& event, const std::string& data, LogPrinter& printer,
                  std::ostream& out) {
  if (event == "end" || event == "done" || event == "eof" || event == "close") return false;
  const Json j = Json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    if (event == "message" || event == "log") out << data << "\n";  // plain text lines
    out.flush();
    return true;
  }
  if (j.is_array()) {
    for (const auto& item : j) printer.print(item);
  } else if (j.is_object() && j.contains("line")) {
    printer.print(j);
  } else if (const Json* items = find_path(j, "items"); items != nullptr && items->is_array()) {
    for (const auto& item : *items) printer.print(item);
  } else if (const Json* lines = find_path(j, "lines"); lines != nullptr && lines->is_array()) {
    const Json* first = find_path(j, "seq");
    long long seq = first != nullptr && first->is_number_integer() ? first->get<long long>() : -1;
    for (const auto& l : *lines) {
      Json item = Json::object();
      if (const Json* a = find_path(j, "attempt")) item["attempt"] = *a;
      if (const Json* r = find_path(j, "rank")) item["rank"] = *r;
      if (seq >= 0) item["seq"] = seq++;
      item["line"] = l;
      printer.print(item);
    }
  } else if (const Json* state = find_path(j, "state"); state != nullptr && state->is_string()) {
    if (terminal_state(state->get<std::string>())) return false;
  }
  out.flush();
  return true;
}

int logs_command(Context& ctx) {
  int exit = kExitOk;
  const std::string& id = ctx.args.positionals[0];
  if (int_option(ctx, "rank", 0, exit); exit != kExitOk) return exit;
  LogPrinter printer(ctx.out, !ctx.args.has("rank"), !ctx.args.has("attempt"));
  if (int rc = page_logs(ctx, id, printer); rc != kExitOk) return rc;
  if (!ctx.args.has("follow")) return kExitOk;
  ctx.out.flush();

  const std::string stream_path = logs_query(ctx, run_path(id) + "/logs/stream");
  for (;;) {
    bool ended = false;
    const auto error =
        ctx.api.stream(stream_path, [&](const std::string& event, const std::string& data) {
          if (on_log_event(event, data, printer, ctx.out)) return true;
          ended = true;
          return false;
        });
    if (error) {
      if (error->status != 0) return report_status(ctx, error->status, error->body);
      if (!error->timed_out) return report_transport(ctx, error->message);
    }
    if (ended) return kExitOk;
    // The stream closed or went quiet: stop if the run is over, otherwise reconnect (the printer
    // drops lines a reconnected stream repeats).
    const Call c = call(ctx, "GET", run_path(id));
    if (!c.ok()) return c.exit;
    const Json* state = find_path(c.json, "state");
    if (state != nullptr && state->is_string() && terminal_state(state->get<std::string>()))
      return kExitOk;
    if (ctx.env.sleep) ctx.env.sleep(std::chrono::milliseconds(1000));
  }
}

// ----- compare -----

int compare_command(Context& ctx) {
  std::string runs;
  for (const auto& id : ctx.args.positionals) {
    if (!runs.empty()) runs += ",";
    runs += segment(id);
  }
  std::string path = "/api/v1/compare?runs=" + runs;
  if (auto b = ctx.args.value("baseline")) path = with_query(path, "baseline", *b);
  const Call c = call(ctx, "GET", path);
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  if (!c.json.is_object() || !c.json.contains("rows"))
    return report_unreadable(ctx, "expected {\"baseline\",\"rows\"}");
  ctx.out << render_compare(c.json);
  return kExitOk;
}

// ----- import-log -----

int import_log_command(Context& ctx) {
  int exit = kExitOk;
  const std::string& file = ctx.args.positionals[0];
  const auto accelerator = ctx.args.value("accelerator");
  if (!accelerator || accelerator->empty()) return usage_error(ctx, "missing --accelerator");
  const auto model = ctx.args.value("model");
  if (!model || model->empty()) return usage_error(ctx, "missing --model");
  const auto slices = int_option(ctx, "num-slices", 1, exit);
  if (exit != kExitOk) return exit;
  const auto text = read_input(ctx, file, exit);
  if (!text) return exit;

  Json body = Json::object();
  std::string name = ctx.args.value("name").value_or("");
  if (name.empty()) {
    // Default to the log's file name without extension: "llama2-7b-v5p.log" → "llama2-7b-v5p".
    name = file == "-" ? std::string("imported") : std::filesystem::path(file).stem().string();
  }
  body["name"] = name;
  body["accelerator"] = *accelerator;
  body["num_slices"] = slices.value_or(1);
  body["model"] = *model;
  body["config"] = Json::object();
  body["log"] = *text;
  const Call c = call(ctx, "POST", "/api/v1/runs/import",
                      body.dump(-1, ' ', false, Json::error_handler_t::replace));
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  if (!c.json.is_object()) return report_unreadable(ctx, "expected the imported run");
  ctx.out << "imported run " << format_value(find_path(c.json, "id")) << " ("
          << format_value(find_path(c.json, "name")) << "): " << run_state_text(c.json)
          << ", last step " << format_value(find_path(c.json, "last_step")) << "\n";
  return kExitOk;
}

const OptionSpec kFile{"file", 'f', true, false, "FILE", "the run spec in YAML (- for stdin)"};

}  // namespace

void add_run_commands(std::vector<Command>& out) {
  out.push_back(
      make_command("runs", "list", "", "list runs",
                   {{"state", 0, true, false, "STATE", "queued, running, succeeded, failed, ..."},
                    {"cluster", 0, true, false, "CLUSTER", "only runs on this cluster"},
                    {"model", 0, true, false, "MODEL", "only runs of this model"},
                    {"owner", 0, true, false, "USER", "only runs of this owner"},
                    {"tag", 0, true, false, "TAG", "only runs with this tag"},
                    {"q", 0, true, false, "TEXT", "search names"},
                    {"project", 0, true, false, "PROJECT", "only runs of this project"},
                    {"dataset", 0, true, false, "DATASET", "only runs on this dataset"},
                    {"accelerator", 0, true, false, "TYPE",
                     "only runs on this accelerator type (v5p-128) or family (v5p)"},
                    {"since", 0, true, false, "TIME",
                     "only runs created at or after TIME (RFC 3339: 2026-11-27T12:00:00Z)"},
                    {"until", 0, true, false, "TIME", "only runs created before TIME (RFC 3339)"},
                    kLimitOption,
                    kAllOption},
                   0, 0, runs_list));
  out.push_back(make_command("runs", "get", "ID", "show a run", {}, 1, 1, runs_get));
  out.push_back(with_required(
      make_command(
          "runs", "submit", "", "submit a run from a YAML run spec",
          {kFile,
           {"force", 0, false, false, "", "submit even if the plan has errors (skips every check)"},
           {"skip-check", 0, true, true, "CHECK",
            "submit despite errors of this plan check: model, config_keys, mesh, hbm or data"},
           {"code", 0, true, false, "DIR", "pack DIR and run every rank in a fresh copy of it"}},
          0, 0, runs_submit,
          "The spec is the run spec of the API in YAML: name, cluster, dataset, model, workload,\n"
          "steps, per_device_batch_size, max_target_length, parallelism: {...}, config: {...}, "
          "...\n"
          "The server plans it first; a plan with errors is refused (exit 1) unless each error's\n"
          "check is skipped (--skip-check CHECK, audited and shown on the run) or --force.\n"
          "--code DIR packs DIR's files (not .git, nor what .gitignore files or a top-level\n"
          ".podiumignore exclude), uploads the bundle unless the server has it, and names it in\n"
          "the spec (code_bundle); each rank starts in its own unpacked copy, where a relative\n"
          "workdir is a directory inside it (agents, Slurm and Kubernetes alike)."),
      "-f FILE"));
  out.push_back(make_command("runs", "cancel", "ID", "cancel a run", {}, 1, 1, runs_cancel));
  out.push_back(
      make_command("runs", "delete", "ID", "delete a finished run", {}, 1, 1, runs_delete));
  out.push_back(make_command("runs", "attempts", "ID", "list a run's attempts (restarts)",
                             {kLimitOption, kAllOption}, 1, 1, runs_attempts));
  out.push_back(make_command("runs", "events", "ID", "list a run's state changes and their causes",
                             {kLimitOption, kAllOption}, 1, 1, runs_events));
  out.push_back(make_command("runs", "checkpoints", "ID", "list a run's checkpoints",
                             {kLimitOption, kAllOption}, 1, 1, runs_checkpoints));
  out.push_back(make_command(
      "runs", "manifest", "ID",
      "print what a Slurm or Kubernetes executor was or would be given (sbatch script, JobSet)", {},
      1, 1, runs_manifest));
  out.push_back(make_command(
      "runs", "metrics", "ID", "print a run's metrics per step",
      {{"fields", 0, true, false, "A,B", "series to fetch, e.g. loss,step_seconds"},
       {"from-step", 0, true, false, "N", "first step"},
       {"to-step", 0, true, false, "N", "last step"},
       {"max-points", 0, true, false, "N", "downsample to at most N points (default 1000)"}},
      1, 1, runs_metrics));
  out.push_back(
      make_command("runs", "summary", "ID",
                   "show a run's steady step time, TFLOP/s, tokens/s, MFU, HBM, goodput and cost",
                   {}, 1, 1, runs_summary));
  out.push_back(with_required(
      make_command(
          "plan", "", "", "check a run spec before submitting it (preflight)",
          {kFile,
           {"compile", 0, false, false, "",
            "also compile the training step on a host (the spec's compile_cluster, else its "
            "cluster) and judge memory by the compiler's figure"}},
          0, 0, plan_command,
          "Prints the verdict (OK or ERRORS with code, message and hint), warnings, topology,\n"
          "memory per device against capacity, data and the throughput estimate.\n"
          "With --compile the spec is submitted as a run with preflight: compile that is\n"
          "cancelled once its compile check has decided (memory.basis: compiled).\n"
          "Exits 1 when the plan has errors."),
      "-f FILE"));
  out.push_back(make_command(
      "logs", "", "RUN", "print a run's logs",
      {{"follow", 'f', false, false, "", "keep following live output until the run ends"},
       {"rank", 0, true, false, "R", "only this rank"},
       {"attempt", 0, true, false, "A", "only this attempt"}},
      1, 1, logs_command,
      "Without --rank each line is prefixed with [rank]; without --attempt a header marks\n"
      "each attempt."));
  out.push_back(make_command(
      "compare", "", "RUN...", "compare runs side by side",
      {{"baseline", 0, true, false, "RUN", "the run the ratios refer to (default: the first)"}}, 1,
      kUnbounded, compare_command));
  out.push_back(with_required(
      make_command(
          "import-log", "", "FILE", "create a finished run from a MaxText log",
          {{"accelerator", 0, true, false, "TYPE", "accelerator the log ran on (required)"},
           {"model", 0, true, false, "MODEL", "model name, e.g. llama2-7b (required)"},
           {"name", 0, true, false, "NAME", "run name (default: the file name)"},
           {"num-slices", 0, true, false, "K", "number of slices (default 1)"}},
          1, 1, import_log_command),
      "--accelerator TYPE --model MODEL"));
}

}  // namespace podium::cli
