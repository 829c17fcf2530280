#include "engine/worker/agent.h"

#include <fstream>

#include <random>

#include "engine/client/http_client.h"
#include "engine/core/text/json_text.h"
#include "engine/worker/assignment.h"
#include "engine/worker/environment.h"
#include "engine/worker/logging.h"

#ifndef PODIUM_VERSION
#define PODIUM_VERSION "0.0.0"
#endif

namespace podium::worker {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string random_instance() {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 8; ++i) {
    const unsigned v = rd();
    out.push_back(kHex[(v >> 4) & 0xF]);
    out.push_back(kHex[v & 0xF]);
    out.push_back(kHex[(v >> 12) & 0xF]);
    out.push_back(kHex[(v >> 8) & 0xF]);
  }
  return out;
}

Agent::Agent(AgentOptions options, std::shared_ptr<ControlPlane> api,
             std::shared_ptr<ProcessLauncher> launcher, std::shared_ptr<Clock> clock)
    : options_(std::move(options)),
      api_(std::move(api)),
      launcher_(std::move(launcher)),
      clock_(std::move(clock)),
      budget_(options_.spool_max_bytes),
      instance_(random_instance()),
      base_env_(current_environment()) {
  // The token reaches the agent through the environment too; the processes need none of it.
  std::erase_if(base_env_, [](const std::string& e) { return e.rfind("PODIUM_TOKEN=", 0) == 0; });
}

Agent::~Agent() {
  {
    std::lock_guard lock(mu_);
    stop_requested_ = true;
    stopping_ = true;
    stop_heartbeat_ = true;
  }
  cv_.notify_all();
  {
    std::lock_guard lock(mu_);
    for (auto& [id, runner] : ranks_) runner->abandon();
  }
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  if (poll_thread_.joinable()) poll_thread_.join();
  if (notice_thread_.joinable()) notice_thread_.join();
  ranks_.clear();
}

std::string Agent::worker_id() const {
  std::lock_guard lock(mu_);
  return worker_id_;
}

size_t Agent::active_ranks() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [id, runner] : ranks_) n += runner->finished() ? 0 : 1;
  return n;
}

void Agent::stop() {
  {
    std::lock_guard lock(mu_);
    stop_requested_ = true;
  }
  cv_.notify_all();
}

bool Agent::wait_stop(milliseconds d) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, d, [&] { return stop_requested_; });
}

nlohmann::json Agent::running_list(bool with_pid) const {
  std::lock_guard lock(mu_);
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [id, runner] : ranks_) {
    // A rank stays "running" for the server until its exit was reported: its last lines and
    // its exit are still on their way.
    if (runner->exit_reported() || runner->finished()) continue;
    nlohmann::json entry = {{"attempt_id", id}, {"rank", runner->assignment().rank}};
    if (with_pid) {
      const auto pid = runner->pid();
      entry["pid"] = pid ? nlohmann::json(*pid) : nlohmann::json();
    }
    list.push_back(std::move(entry));
  }
  return list;
}

// The host's credential survives agent restarts in the workdir (mode 600), so a new agent
// process on the same host takes its slot over at once rather than waiting for the old one to
// be declared lost.
std::string Agent::read_credential() const {
  std::ifstream in(options_.workdir / "credential");
  std::string c;
  std::getline(in, c);
  return c.size() <= 512 ? c : std::string();
}

void Agent::write_credential(const std::string& credential) const {
  const auto path = options_.workdir / "credential";
  const auto tmp = options_.workdir / "credential.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << credential << "\n";
  }
  std::error_code ec;
  fs::permissions(tmp, fs::perms::owner_read | fs::perms::owner_write, ec);
  fs::rename(tmp, path, ec);
  if (ec) log().warn("cannot keep the host credential in {}: {}", path.string(), ec.message());
}

Agent::RegisterOutcome Agent::register_once() {
  const nlohmann::json body = {{"cluster", options_.cluster},   {"slice", options_.slice},
                               {"host", options_.host},         {"hostname", options_.hostname},
                               {"address", options_.address},   {"devices", options_.devices},
                               {"version", PODIUM_VERSION},     {"instance", instance_},
                               {"running", running_list(false)}};
  nlohmann::json request = body;
  if (!options_.software.is_null()) request["software"] = options_.software;
  if (const auto previous = read_credential(); !previous.empty()) request["credential"] = previous;
  const ApiResult r =
      api_->call("POST", "register", core::json_text(request), options_.timings.request_timeout);
  if (r.transient()) {
    mark_reachable(false);
    log().warn("cannot register with the server: {}", r.describe());
    return RegisterOutcome::retry;
  }
  if (r.status == 409) {
    // Another agent holds this host's slot and is alive: wait until it stops or is lost.
    log().warn("the server refused the registration for now: {}", r.describe());
    return RegisterOutcome::retry;
  }
  if (!r.ok()) {
    std::string hint;
    if (r.status == 401) hint = " (the worker token is missing, invalid or revoked)";
    if (r.status == 403) hint = " (the worker token does not belong to this cluster)";
    if (r.status == 422) hint = " (check --cluster, --slice and --host against the cluster)";
    log().error("the server refused the registration: {}{}", r.describe(), hint);
    return RegisterOutcome::fatal;
  }
  const auto answer = r.json();
  if (!answer.is_object() || !answer.contains("worker_id") || !answer["worker_id"].is_string()) {
    log().error("the server's registration answer has no worker_id");
    return RegisterOutcome::retry;
  }
  if (answer.contains("credential") && answer["credential"].is_string()) {
    const std::string credential = answer["credential"].get<std::string>();
    write_credential(credential);
    api_->set_credential(credential);
  }
  bool first = false;
  std::string id = answer["worker_id"].get<std::string>();
  {
    std::lock_guard lock(mu_);
    worker_id_ = id;
    if (answer.contains("heartbeat_seconds") && answer["heartbeat_seconds"].is_number_integer()) {
      heartbeat_seconds_ = std::clamp(answer["heartbeat_seconds"].get<int>(), 1, 60);
    }
    need_register_ = false;
    unreachable_ = false;
    first = !announced_;
    announced_ = true;
  }
  log().info("registered as {} (cluster {} slice {} host {}, instance {})", id, options_.cluster,
             options_.slice, options_.host, instance_);
  if (first && options_.announce) {
    options_.announce("podium-worker registered as " + id + " (cluster " + options_.cluster +
                      " slice " + std::to_string(options_.slice) + " host " +
                      std::to_string(options_.host) + ")");
  }
  return RegisterOutcome::ok;
}

bool Agent::ensure_registered() {
  std::lock_guard serial(register_mu_);
  {
    std::lock_guard lock(mu_);
    if (!need_register_) return true;
  }
  log().info("registering again");
  return register_once() == RegisterOutcome::ok;
}

void Agent::mark_reachable(bool reachable) {
  std::lock_guard lock(mu_);
  if (!reachable) {
    unreachable_ = true;
  } else if (unreachable_) {
    // The server was gone; it may have restarted with its state: tell it what runs here.
    unreachable_ = false;
    need_register_ = true;
  }
}

void Agent::clear_stale_spool() {
  std::error_code ec;
  size_t stale = 0;
  for (fs::directory_iterator it(options_.workdir / "spool", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() == ".seg") {
      std::error_code rec;
      fs::remove(it->path(), rec);
      ++stale;
    }
  }
  if (stale > 0) {
    log().warn("removed {} spool files of an earlier agent process (their ranks were lost with it)",
               stale);
  }
}

int Agent::run() {
  std::error_code ec;
  fs::create_directories(options_.workdir / "logs", ec);
  fs::create_directories(options_.workdir / "spool", ec);
  if (!fs::is_directory(options_.workdir / "spool")) {
    log().error("cannot use the work directory {}: {}", options_.workdir.string(),
                ec ? ec.message() : "not a directory");
    return 1;
  }
  if (options_.run_as) {
    // Ranks of other accounts may not read other runs' output or the agent's spool.
    for (const char* own : {"logs", "spool"})
      fs::permissions(options_.workdir / own, fs::perms::owner_all, fs::perm_options::replace, ec);
  }
  clear_stale_spool();

  Backoff backoff(options_.timings.backoff_initial, options_.timings.backoff_max);
  for (;;) {
    const auto outcome = register_once();
    if (outcome == RegisterOutcome::ok) break;
    if (outcome == RegisterOutcome::fatal) return 1;
    if (wait_stop(backoff.next())) return 0;
  }

  heartbeat_thread_ = std::thread([this] { heartbeat_loop(); });
  poll_thread_ = std::thread([this] { poll_loop(); });
  if (options_.metadata) notice_thread_ = std::thread([this] { notice_loop(); });
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return stop_requested_; });
  }
  shutdown();
  return 0;
}

void Agent::shutdown() {
  std::vector<RankRunner*> runners;
  milliseconds grace{0};
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& [id, runner] : ranks_) {
      runners.push_back(runner.get());
      grace = std::max(grace, milliseconds(runner->grace()));
    }
  }
  if (!runners.empty()) log().info("stopping {} rank(s)", runners.size());
  for (RankRunner* r : runners) r->cancel(r->grace());
  const TimePoint deadline = std::chrono::steady_clock::now() + grace + options_.shutdown_flush;
  for (RankRunner* r : runners) {
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (!r->wait_finished(std::max(left, milliseconds(0)))) {
      log().warn("attempt {} rank {}: could not flush its lines and exit in time",
                 r->assignment().attempt_id, r->assignment().rank);
    }
  }
  for (RankRunner* r : runners) r->abandon();
  {
    std::lock_guard lock(mu_);
    stop_heartbeat_ = true;
  }
  cv_.notify_all();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  if (notice_thread_.joinable()) notice_thread_.join();
}

void Agent::notice_loop() {
  bool unreachable_logged = false;
  for (bool first = true;; first = false) {
    if (!first) {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, options_.notice_poll,
                       [&] { return stop_heartbeat_ || stop_requested_; }))
        return;
    }
    const auto reading = options_.metadata->read();
    if (!reading) {
      if (!unreachable_logged)
        log().warn(
            "no metadata server answers at {}: preemption notices are not watched until it does "
            "(--metadata-url none turns this off)",
            options_.metadata->url());
      unreachable_logged = true;
      continue;
    }
    if (unreachable_logged)
      log().info("the metadata server at {} answers", options_.metadata->url());
    unreachable_logged = false;
    const std::optional<std::string> notice = notice_of(*reading);
    {
      std::lock_guard lock(mu_);
      if (notice == notice_) continue;
      notice_ = notice;
      heartbeat_now_ = true;
    }
    if (notice)
      log().warn("the host's metadata server announces '{}': reporting it", *notice);
    else
      log().info("the host's notice was withdrawn");
    cv_.notify_all();
  }
}

void Agent::heartbeat_loop() {
  for (;;) {
    int interval;
    {
      std::unique_lock lock(mu_);
      interval = heartbeat_seconds_;
      cv_.wait_for(lock, seconds(interval), [&] { return stop_heartbeat_ || heartbeat_now_; });
      if (stop_heartbeat_) return;
      heartbeat_now_ = false;
    }
    reap_finished();
    if (!ensure_registered()) continue;
    nlohmann::json body = {{"worker_id", worker_id()}, {"running", running_list(true)}};
    if (options_.metadata) {
      std::lock_guard lock(mu_);
      body["notice"] = notice_ ? nlohmann::json(*notice_) : nlohmann::json(nullptr);
    }
    const ApiResult r =
        api_->call("POST", "heartbeat", core::json_text(body), options_.timings.request_timeout);
    if (r.ok()) {
      mark_reachable(true);
      const auto answer = r.json();
      if (answer.is_object() && answer.contains("heartbeat_seconds") &&
          answer["heartbeat_seconds"].is_number_integer()) {
        std::lock_guard lock(mu_);
        heartbeat_seconds_ = std::clamp(answer["heartbeat_seconds"].get<int>(), 1, 60);
      }
    } else if (r.status == 404 || r.status == 401) {
      // 404: the server forgot the worker; 401: it no longer accepts the host's credential (it
      // gave the host a new one, or its database was restored). Registering again answers both
      // with the worker token, and the ranks keep their lines until then (rank_runner.cpp).
      log().warn("the server {} worker {}; registering again",
                 r.status == 404 ? "does not know" : "refuses the credential of", worker_id());
      mark_reachable(true);
      std::lock_guard lock(mu_);
      need_register_ = true;
    } else if (r.transient()) {
      log().warn("heartbeat failed: {}", r.describe());
      mark_reachable(false);
    } else {
      log().error("the server refused the heartbeat: {}", r.describe());
    }
  }
}

void Agent::poll_loop() {
  Backoff backoff(options_.timings.backoff_initial, options_.timings.backoff_max);
  const milliseconds timeout = seconds(options_.assignment_wait_seconds + 10);
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stop_requested_) return;
    }
    if (!ensure_registered()) {
      if (wait_stop(backoff.next())) return;
      continue;
    }
    const std::string query = "assignment?worker_id=" + client::percent_encode(worker_id()) +
                              "&wait=" + std::to_string(options_.assignment_wait_seconds);
    const ApiResult r = api_->call("GET", query, "", timeout);
    if (r.ok()) {
      backoff.reset();
      mark_reachable(true);
      if (r.status == 204 || r.body.empty()) continue;
      const auto message = r.json();
      if (message.is_discarded()) {
        log().error("the assignment answer is not JSON");
        continue;
      }
      handle(message);
    } else if (r.status == 404) {
      log().warn("the server does not know worker {}; registering again", worker_id());
      mark_reachable(true);
      {
        std::lock_guard lock(mu_);
        need_register_ = true;
      }
      if (wait_stop(backoff.next())) return;
    } else {
      if (r.transient()) {
        mark_reachable(false);
        log().warn("waiting for work failed: {}", r.describe());
      } else {
        log().error("the server refused the assignment request: {}", r.describe());
      }
      if (wait_stop(backoff.next())) return;
    }
  }
}

void Agent::handle(const nlohmann::json& message) {
  auto parsed = parse_assignment(message);
  if (auto* error = std::get_if<AssignmentError>(&parsed)) {
    log().error("ignoring an assignment: {}", error->message);
    return;
  }
  if (auto* order = std::get_if<CancelOrder>(&parsed)) {
    std::lock_guard lock(mu_);
    for (const auto& id : order->attempt_ids) {
      auto it = ranks_.find(id);
      if (it != ranks_.end()) {
        log().info("attempt {} rank {}: cancel (grace {} s)", id, it->second->assignment().rank,
                   order->grace_seconds);
        it->second->cancel(seconds(order->grace_seconds));
      } else if (seen_attempts_.count(id) == 0) {
        // Its assignment may still come (a lost answer being delivered again): it is then
        // started and stopped at once, so that the server still gets its running/exited.
        cancelled_unknown_.insert(id);
      }
    }
    return;
  }
  Assignment a = std::get<Assignment>(std::move(parsed));
  std::lock_guard lock(mu_);
  if (stopping_) {
    log().warn("attempt {} rank {}: not started, the agent is stopping", a.attempt_id, a.rank);
    return;
  }
  if (!seen_attempts_.insert(a.attempt_id).second) {
    log().info("attempt {} rank {}: already started here; ignoring the repeated assignment",
               a.attempt_id, a.rank);
    return;
  }
  log().info("attempt {} rank {}: assigned ({} {})", a.attempt_id, a.rank, a.run_name, a.run_id);
  RankContext ctx;
  ctx.api = api_.get();
  ctx.launcher = launcher_.get();
  ctx.clock = clock_.get();
  ctx.budget = &budget_;
  ctx.agent_workdir = options_.workdir;
  ctx.base_env = base_env_;
  ctx.run_as = options_.run_as;
  ctx.timings = options_.timings;
  ctx.spool = options_.spool;
  ctx.probe_python = options_.probe_python;
  auto runner = std::make_unique<RankRunner>(std::move(a), std::move(ctx));
  const std::string id = runner->assignment().attempt_id;
  if (cancelled_unknown_.erase(id) > 0) runner->cancel(runner->grace());
  runner->start();
  ranks_.emplace(id, std::move(runner));
}

void Agent::reap_finished() {
  std::vector<std::unique_ptr<RankRunner>> done;
  {
    std::lock_guard lock(mu_);
    // During shutdown the runners are still being waited for.
    if (stopping_) return;
    for (auto it = ranks_.begin(); it != ranks_.end();) {
      if (it->second->finished()) {
        done.push_back(std::move(it->second));
        it = ranks_.erase(it);
      } else {
        ++it;
      }
    }
  }
  done.clear();  // joins their (ended) threads outside the lock
}

}  // namespace podium::worker
