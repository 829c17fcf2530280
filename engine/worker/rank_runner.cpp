#include "engine/worker/rank_runner.h"

#include "engine/worker/software_probe.h"

#include "engine/worker/code_tree.h"

#include <signal.h>

#include <future>
#include <stdexcept>

#include "engine/client/http_client.h"
#include "engine/core/text/json_text.h"
#include "engine/core/text/utf8.h"
#include "engine/worker/checkpoint_deleter.h"
#include "engine/worker/checkpoint_scanner.h"
#include "engine/worker/environment.h"
#include "engine/worker/line_splitter.h"
#include "engine/worker/logging.h"

namespace podium::worker {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kReadSlice{100};

// Worth sending again later: the server is unreachable or busy, or it does not accept this
// host's credential right now (401), which happens while the agent registers again after a
// server restart or a lost heartbeat; the client the runners share takes the new credential
// when registration answers. A revoked credential stops the agent itself, not its data.
bool send_again_later(const ApiResult& r) {
  return r.transient() || r.status == 401;
}

nlohmann::json exit_body(int rank, const ExitStatus& status) {
  nlohmann::json body = {{"rank", rank}, {"state", "exited"}};
  body["exit_code"] = status.exit_code ? nlohmann::json(*status.exit_code) : nlohmann::json();
  body["signal"] = status.signal ? nlohmann::json(*status.signal) : nlohmann::json();
  return body;
}

}  // namespace

RankRunner::RankRunner(Assignment assignment, RankContext context)
    : assignment_(std::move(assignment)), ctx_(std::move(context)) {}

RankRunner::~RankRunner() {
  abandon();
  for (std::thread* t : {&supervise_thread_, &upload_thread_, &report_thread_}) {
    if (t->joinable()) t->join();
  }
}

std::string RankRunner::path(const std::string& what) const {
  return "attempts/" + client::percent_encode(assignment_.attempt_id) + "/" + what;
}

void RankRunner::start() {
  std::string spool_error;
  const std::string rank_name = "rank-" + std::to_string(assignment_.rank);
  try {
    spool_ = std::make_unique<LogSpool>(
        ctx_.agent_workdir / "logs" / assignment_.attempt_id / (rank_name + ".log"),
        ctx_.agent_workdir / "spool", assignment_.attempt_id + "." + rank_name, *ctx_.budget,
        *ctx_.clock, ctx_.spool);
  } catch (const std::exception& e) {
    spool_error = e.what();
  }
  {
    std::lock_guard lock(mu_);
    started_ = true;
    threads_running_ = spool_ ? 3 : 2;
  }
  if (!spool_) {
    log().error("attempt {} rank {}: cannot keep its log lines: {}", assignment_.attempt_id,
                assignment_.rank, spool_error);
  }
  report_thread_ = std::thread([this] { report(); });
  if (spool_) upload_thread_ = std::thread([this] { upload(); });
  supervise_thread_ = std::thread([this] { supervise(); });
}

void RankRunner::cancel(milliseconds grace) {
  std::lock_guard lock(mu_);
  if (!pending_cancel_) pending_cancel_ = grace;
  if (supervisor_ != nullptr) supervisor_->cancel(grace);
  cv_.notify_all();
}

void RankRunner::abandon() {
  {
    std::lock_guard lock(mu_);
    abandoned_ = true;
  }
  cv_.notify_all();
  if (spool_) spool_->notify();
}

bool RankRunner::abandoned() const {
  std::lock_guard lock(mu_);
  return abandoned_;
}

bool RankRunner::sleep_for(milliseconds d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [&] { return abandoned_; });
}

void RankRunner::thread_done() {
  {
    std::lock_guard lock(mu_);
    --threads_running_;
  }
  cv_.notify_all();
}

bool RankRunner::finished() const {
  std::lock_guard lock(mu_);
  return started_ && threads_running_ == 0;
}

bool RankRunner::wait_finished(milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return started_ && threads_running_ == 0; });
}

bool RankRunner::exit_reported() const {
  std::lock_guard lock(mu_);
  return exit_reported_;
}

std::optional<ExitStatus> RankRunner::exit_status() const {
  std::lock_guard lock(mu_);
  return exit_status_;
}

std::optional<pid_t> RankRunner::pid() const {
  std::lock_guard lock(mu_);
  return pid_;
}

void RankRunner::enqueue(Report r) {
  {
    std::lock_guard lock(mu_);
    reports_.push_back(std::move(r));
  }
  cv_.notify_all();
}

void RankRunner::fail_to_start(const std::string& why) {
  log().error("attempt {} rank {}: cannot start the process: {}", assignment_.attempt_id,
              assignment_.rank, why);
  if (spool_) {
    // The reason reaches the run's log; the budget cannot refuse the first lines of an empty
    // spool for long, so wait for room rather than lose them.
    nlohmann::json argv = assignment_.command;
    for (const std::string& line : {"podium-worker: cannot start the process: " + why,
                                    "podium-worker: command: " + core::json_text(argv)}) {
      const std::string clean = core::sanitize_utf8(line, core::NulBytes::replace, kMaxLineBytes);
      while (!spool_->try_append(clean) && !abandoned()) {
        ctx_.budget->wait_for_room(clean.size() + 1, kReadSlice);
      }
    }
    spool_->close();
  }
  ExitStatus status;
  status.exit_code = 127;
  {
    // What was reported is the rank's end: `podium-worker attach` exits with it.
    std::lock_guard lock(mu_);
    exit_status_ = status;
  }
  enqueue(Report{"status", exit_body(assignment_.rank, status), true});
}

nlohmann::json RankRunner::probe_environment(const LaunchSpec& rank) const {
  if (ctx_.probe_python.empty() || rank.argv.empty()) return nullptr;
  // The rank's interpreter when it is one ("python3", "/venv/bin/python3.11"), found through
  // the rank's PATH like the rank itself; otherwise the agent's.
  const std::string program = fs::path(rank.argv.front()).filename().string();
  const std::string& python =
      program.rfind("python", 0) == 0 ? rank.argv.front() : ctx_.probe_python;
  std::string error;
  auto report = probe_rank_environment(*ctx_.launcher, rank, python, ctx_.probe_timeout, &error);
  if (report.is_null())
    log().warn("attempt {} rank {}: no environment report ({})", assignment_.attempt_id,
               assignment_.rank, error);
  return report;
}

void RankRunner::supervise() {
  struct Done {
    RankRunner* self;
    ~Done() { self->thread_done(); }
  } done{this};

  if (!assignment_.invalid.empty())
    return fail_to_start("invalid assignment: " + assignment_.invalid);
  if (!spool_) return fail_to_start("cannot keep the process's output");

  auto env = assignment_.env;
  fs::path code_dir;
  if (!assignment_.code_bundle.empty()) {
    CodeTreeOptions options;
    options.agent_workdir = ctx_.agent_workdir;
    const auto tree = prepare_code_tree(*ctx_.api, assignment_, options,
                                        [this](milliseconds d) { return sleep_for(d); });
    if (!tree.error.empty()) return fail_to_start(tree.error);
    code_dir = tree.dir;
    env["PODIUM_CODE_DIR"] = code_dir.string();
    log().info("attempt {} rank {}: code bundle {} unpacked in {}", assignment_.attempt_id,
               assignment_.rank, assignment_.code_bundle, code_dir.string());
  }
  LaunchSpec spec;
  spec.argv = assignment_.command;
  spec.env = merge_environment(ctx_.base_env, env);
  spec.run_as = ctx_.run_as;
  if (assignment_.workdir.empty()) {
    // Another account gets a directory of its own: the agent's work directory is not its.
    const fs::path agent_default = ctx_.run_as ? ctx_.agent_workdir / "ranks" : ctx_.agent_workdir;
    spec.cwd = code_dir.empty() ? agent_default : code_dir;
  } else if (assignment_.workdir.front() != '/') {
    spec.cwd = code_dir / assignment_.workdir;  // a directory inside the bundle
  } else {
    spec.cwd = fs::path(assignment_.workdir);
  }
  std::error_code ec;
  const bool existed = fs::is_directory(spec.cwd, ec);
  fs::create_directories(spec.cwd, ec);
  if (ec && !fs::is_directory(spec.cwd)) {
    return fail_to_start("cannot create the working directory " + spec.cwd.string() + ": " +
                         ec.message());
  }
  if (ctx_.run_as) {
    apply_account_environment(*ctx_.run_as, spec.env);
    // What the agent made for this rank becomes the account's: its copy of the code (Python
    // writes __pycache__ next to it, training scripts write beside themselves) and a working
    // directory the agent created. A directory that existed stays as its owner set it.
    std::string error;
    if (!code_dir.empty())
      error = give_tree(code_dir, *ctx_.run_as);
    else if (!existed)
      error = give_tree(spec.cwd, *ctx_.run_as);
    if (!error.empty()) return fail_to_start(error);
  }
  // The probe runs beside the rank, not before it: a Python start-up and its imports (120-170
  // ms) delayed every rank's start (bench/dispatch_latency.py: p50 19 -> 157 ms). Its answer
  // goes with the running report, which waits for it.
  std::future<nlohmann::json> environment =
      std::async(std::launch::async, [this, spec] { return probe_environment(spec); });
  LaunchResult launched = ctx_.launcher->launch(spec);
  if (!launched.child) return fail_to_start(launched.error);

  ChildProcess& child = *launched.child;
  ProcessSupervisor supervisor(child, *ctx_.clock, ctx_.timings.exit_linger);
  {
    std::lock_guard lock(mu_);
    pid_ = child.pid();
    if (pending_cancel_) supervisor.cancel(*pending_cancel_);
    supervisor_ = &supervisor;
  }
  log().info("attempt {} rank {}: started pid {} in {}", assignment_.attempt_id, assignment_.rank,
             child.pid(), spec.cwd.string());
  nlohmann::json running = {{"rank", assignment_.rank}, {"state", "running"}, {"pid", child.pid()}};
  if (const nlohmann::json found = environment.get(); !found.is_null())
    running["environment"] = found;
  enqueue(Report{"status", std::move(running), false});

  std::optional<CheckpointScanner> scanner;
  if (assignment_.checkpoint_dir) scanner.emplace(*assignment_.checkpoint_dir);
  TimePoint next_scan = ctx_.clock->now();
  const auto scan = [&] {
    for (const auto& found : scanner->scan()) {
      log().info("attempt {}: checkpoint step {} ({} bytes)", assignment_.attempt_id, found.step,
                 found.bytes);
      enqueue(Report{"checkpoints",
                     {{"step", found.step}, {"uri", found.uri}, {"bytes", found.bytes}},
                     false});
    }
  };

  LineSplitter out_split;
  LineSplitter err_split;
  std::vector<std::string> pending;
  size_t pending_pos = 0;
  bool output_open = true;
  std::optional<ExitStatus> exit;
  std::vector<OutputChunk> chunks;

  while (!abandoned()) {
    while (pending_pos < pending.size() && spool_->try_append(pending[pending_pos])) ++pending_pos;
    if (pending_pos == pending.size()) {
      pending.clear();
      pending_pos = 0;
    }
    exit = supervisor.tick();
    if (scanner && ctx_.clock->now() >= next_scan) {
      scan();
      next_scan = ctx_.clock->now() + ctx_.timings.checkpoint_poll;
    }
    if (!pending.empty()) {
      // Backpressure: the spool is full, so the pipe is not read until the server caught up.
      ctx_.budget->wait_for_room(pending[pending_pos].size() + 1, kReadSlice);
      continue;
    }
    if (output_open) {
      chunks.clear();
      output_open = child.read_output(kReadSlice, chunks);
      const size_t before = pending.size();
      for (const auto& chunk : chunks) {
        (chunk.stream == Stream::out ? out_split : err_split).feed(chunk.bytes, pending);
      }
      if (output_open && exit && supervisor.give_up_on_output()) {
        log().warn("attempt {} rank {}: the process exited but its output stays open; closing it",
                   assignment_.attempt_id, assignment_.rank);
        child.close_output();
        output_open = false;
      }
      if (!output_open) {
        out_split.finish(pending);
        err_split.finish(pending);
      }
      if (ctx_.echo)
        for (size_t i = before; i < pending.size(); ++i) ctx_.echo(pending[i]);
      continue;
    }
    if (exit) break;
    // Output closed (the process closed its stdout and stderr) but it still runs.
    sleep_for(kReadSlice);
  }
  {
    std::lock_guard lock(mu_);
    supervisor_ = nullptr;
  }
  if (abandoned()) {
    // Shutdown deadline: kill the group now; the child's destructor reaps it.
    child.signal_group(SIGKILL);
    spool_->close();
    return;
  }
  spool_->close();
  if (scanner) scan();  // steps finished just before the exit
  log().info("attempt {} rank {}: process {} {} {}", assignment_.attempt_id, assignment_.rank,
             child.pid(), exit->signal ? "killed by signal" : "exited with status",
             exit->signal ? *exit->signal : exit->exit_code.value_or(-1));
  {
    std::lock_guard lock(mu_);
    exit_status_ = *exit;
  }
  enqueue(Report{"status", exit_body(assignment_.rank, *exit), true});
}

void RankRunner::upload() {
  struct Done {
    RankRunner* self;
    ~Done() { self->thread_done(); }
  } done{this};

  Backoff backoff(ctx_.timings.backoff_initial, ctx_.timings.backoff_max);
  size_t max_lines = ctx_.spool.batch_lines;
  int failures = 0;
  while (!abandoned() && !spool_->drained()) {
    if (!spool_->batch_due(ctx_.clock->now())) {
      spool_->wait(milliseconds(250));
      continue;
    }
    LogBatch batch = spool_->peek_batch(max_lines);
    if (batch.lines.empty()) {
      spool_->wait(milliseconds(250));
      continue;
    }
    const nlohmann::json body = {
        {"rank", assignment_.rank}, {"seq", batch.seq}, {"lines", batch.lines}};
    const ApiResult r =
        ctx_.api->call("POST", path("logs"), core::json_text(body), ctx_.timings.request_timeout);
    if (r.ok()) {
      if (failures > 0) {
        log().info("attempt {} rank {}: log upload works again", assignment_.attempt_id,
                   assignment_.rank);
      }
      spool_->ack(batch);
      backoff.reset();
      max_lines = ctx_.spool.batch_lines;
      failures = 0;
    } else if (send_again_later(r)) {
      if (failures++ == 0) {
        log().warn("attempt {} rank {}: log upload failed ({}); retrying", assignment_.attempt_id,
                   assignment_.rank, r.describe());
      }
      sleep_for(backoff.next());
    } else if (r.status == 413 && batch.lines.size() > 1) {
      max_lines = std::max<size_t>(1, batch.lines.size() / 2);
    } else {
      // The server will never take these lines (unknown attempt, forbidden, …): skipping them
      // is the only way the rank can still report its exit.
      log().error("attempt {} rank {}: the server refused lines {}..{} ({}); dropping them",
                  assignment_.attempt_id, assignment_.rank, batch.seq,
                  batch.seq + batch.lines.size() - 1, r.describe());
      spool_->ack(batch);
    }
  }
}

void RankRunner::carry_out_deletions(const nlohmann::json& answer) {
  const auto it = answer.find("delete");
  if (it == answer.end() || !it->is_array()) return;
  DeletionContext context;
  context.launcher = ctx_.launcher;
  context.env = ctx_.base_env;
  context.checkpoint_dir = assignment_.checkpoint_dir;
  std::vector<Report> outcomes;
  for (const auto& order : *it) {
    if (!order.is_object() || !order.contains("step") || !order["step"].is_number_integer() ||
        !order.contains("uri") || !order["uri"].is_string())
      continue;
    const std::string uri = order["uri"].get<std::string>();
    const DeletionResult done = delete_checkpoint(uri, context);
    if (done.deleted)
      log().info("attempt {}: deleted checkpoint step {} ({})", assignment_.attempt_id,
                 order["step"].get<std::int64_t>(), uri);
    else
      log().warn("attempt {}: checkpoint step {} not deleted: {}", assignment_.attempt_id,
                 order["step"].get<std::int64_t>(), done.error);
    nlohmann::json body = {{"step", order["step"]}, {"uri", uri}, {"deleted", done.deleted}};
    body["error"] = done.deleted ? nlohmann::json() : nlohmann::json(done.error);
    outcomes.push_back(Report{"checkpoint-deletions", std::move(body), false});
  }
  // Reported next, before anything queued after this checkpoint (the exit report above all:
  // the run's record is complete when the attempt ends).
  std::lock_guard lock(mu_);
  for (auto& o : outcomes) deletion_reports_.push_back(std::move(o));
}

void RankRunner::report() {
  struct Done {
    RankRunner* self;
    ~Done() { self->thread_done(); }
  } done{this};

  Backoff backoff(ctx_.timings.backoff_initial, ctx_.timings.backoff_max);
  for (;;) {
    Report item;
    bool deletion_outcome = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return abandoned_ || !reports_.empty() || !deletion_reports_.empty(); });
      if (abandoned_) return;
      deletion_outcome = !deletion_reports_.empty();
      item = deletion_outcome ? deletion_reports_.front() : reports_.front();
    }
    if (item.is_exit && spool_) {
      while (!spool_->wait_drained(milliseconds(250))) {
        if (abandoned()) return;
      }
    }
    int failures = 0;
    for (;;) {
      if (abandoned()) return;
      const ApiResult r = ctx_.api->call("POST", path(item.kind), core::json_text(item.body),
                                         ctx_.timings.request_timeout);
      if (r.ok()) {
        backoff.reset();
        const auto answer = r.json();
        if (!item.is_exit && item.kind == "status" && answer.is_object() &&
            answer.value("cancel", false)) {
          log().info("attempt {} rank {}: the server cancels the attempt", assignment_.attempt_id,
                     assignment_.rank);
          cancel(grace());
        }
        if (item.kind == "checkpoints" && answer.is_object()) carry_out_deletions(answer);
        break;
      }
      if (!send_again_later(r)) {
        log().error("attempt {} rank {}: the server refused {} {} ({})", assignment_.attempt_id,
                    assignment_.rank, item.kind, core::json_text(item.body), r.describe());
        // "running" refused as a state conflict: the server already ended this rank (declared
        // lost, or cancelled before it heard of the start). A process it no longer tracks must
        // not keep the host busy beside the next attempt.
        if (!item.is_exit && item.kind == "status" && r.status == 409) cancel(grace());
        break;
      }
      if (failures++ == 0) {
        log().warn("attempt {} rank {}: reporting {} failed ({}); retrying", assignment_.attempt_id,
                   assignment_.rank, item.kind, r.describe());
      }
      sleep_for(backoff.next());
    }
    std::lock_guard lock(mu_);
    (deletion_outcome ? deletion_reports_ : reports_).pop_front();
    if (item.is_exit) {
      exit_reported_ = true;
      return;
    }
  }
}

}  // namespace podium::worker
