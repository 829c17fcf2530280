#include "tests/e2e/support/e2e.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iostream>
#include <mutex>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "engine/client/http_client.h"

namespace podium::e2e {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::string str(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "-";
  const auto& v = j[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

bool is_terminal_state(const std::string& s) {
  return s == "succeeded" || s == "failed" || s == "cancelled";
}

std::string cut(const std::string& s, size_t n) {
  return s.size() > n ? s.substr(0, n) + "..." : s;
}

}  // namespace

json reference_spec(const std::string& name, const std::string& cluster, const std::string& dataset,
                    const ReferenceSize& size) {
  return {{"name", name},
          {"cluster", cluster},
          {"dataset", dataset},
          {"model", "reference-tiny"},
          {"workload", "reference"},
          {"steps", size.steps},
          {"per_device_batch_size", size.per_device_batch_size},
          {"max_target_length", size.max_target_length},
          {"checkpoint_period", size.checkpoint_period},
          {"max_restarts", size.max_restarts}};
}

json command_spec(const std::string& name, const std::string& cluster,
                  const std::vector<std::string>& argv, int max_restarts) {
  return {{"name", name},
          {"cluster", cluster},
          {"workload", "command"},
          {"command", argv},
          {"max_restarts", max_restarts}};
}

std::vector<int> step_lines(const std::vector<std::string>& lines) {
  static const std::regex re(R"(^completed step: (\d+), )");
  std::vector<int> out;
  std::smatch m;
  for (const auto& l : lines)
    if (std::regex_search(l, m, re)) out.push_back(std::stoi(m[1].str()));
  return out;
}

std::optional<double> step_field(const std::vector<std::string>& lines, int step,
                                 const std::string& field) {
  const std::string prefix = "completed step: " + std::to_string(step) + ", ";
  for (const auto& l : lines) {
    if (l.rfind(prefix, 0) != 0) continue;
    const auto at = l.find(field + ": ");
    if (at == std::string::npos) return std::nullopt;
    try {
      return std::stod(l.substr(at + field.size() + 2));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::vector<int> step_range(int from, int to) {
  std::vector<int> v;
  for (int i = from; i < to; ++i) v.push_back(i);
  return v;
}

bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout,
                std::chrono::milliseconds every) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (pred()) return true;
    if (Clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(every);
  }
}

std::string describe_attempts(const std::vector<json>& attempts) {
  std::ostringstream os;
  for (const auto& a : attempts) {
    os << "  attempt #" << str(a, "number") << " " << str(a, "id") << " state=" << str(a, "state")
       << " num_slices=" << str(a, "num_slices") << " steps " << str(a, "first_step") << ".."
       << str(a, "last_step") << " resumed_from=" << str(a, "resumed_from_step")
       << " class=" << str(a, "failure_class") << "\n";
    if (a.contains("hosts") && a["hosts"].is_array())
      for (const auto& h : a["hosts"])
        os << "    rank " << str(h, "rank") << " slice " << str(h, "slice") << " host "
           << str(h, "host") << " " << str(h, "worker_id") << " state=" << str(h, "state")
           << " pid=" << str(h, "pid") << " exit_code=" << str(h, "exit_code")
           << " signal=" << str(h, "signal") << "\n";
  }
  return os.str();
}

std::map<int, json> hosts_by_rank(const json& attempt) {
  std::map<int, json> out;
  for (const auto& h : attempt.value("hosts", json::array())) out[h.value("rank", -1)] = h;
  return out;
}

bool has_pid(const json& host) {
  return host.contains("pid") && host["pid"].is_number_integer() && host["pid"].get<int>() > 0;
}

void lose_host(WorkerProcess& host, pid_t rank_pid) {
  host.kill();
  if (rank_pid <= 0) return;
  ::kill(-rank_pid, SIGKILL);
  ::kill(rank_pid, SIGKILL);
}

// ---- LogStream ----

struct LogStream::State {
  mutable std::mutex mu;
  std::vector<json> events;
  std::vector<std::string> names;
  std::atomic<bool> stop{false};
  bool ended = false;
  std::string error;
};

LogStream::LogStream(const Api& api, const std::string& run_id,
                     std::chrono::milliseconds idle_timeout)
    : state_(std::make_shared<State>()) {
  const std::string base = api.base_url();
  const std::string token = api.token();
  const std::string path = "/api/v1/runs/" + it::enc(run_id) + "/logs/stream";
  thread_ = std::thread([state = state_, base, token, path, idle_timeout] {
    client::HttpClient http(base, token);
    auto err = http.stream_events(
        path,
        [&](const std::string& event, const std::string& data) {
          it::check_event_against_contract(path, event, data);
          std::lock_guard lock(state->mu);
          if (state->names.size() < 500) state->names.push_back(event);
          if (event == "log") {
            json j = json::parse(data, nullptr, false);
            state->events.push_back(j.is_discarded() ? json(data) : j);
          }
          if (event == "end") state->ended = true;
          return !state->stop.load() && event != "end";
        },
        idle_timeout);
    std::lock_guard lock(state->mu);
    if (err) {
      state->error = err->message + (err->status != 0 ? " (status " + std::to_string(err->status) +
                                                            ": " + err->body + ")"
                                                      : std::string());
    } else if (!state->stop.load()) {
      state->ended = true;
    }
  });
}

LogStream::~LogStream() {
  stop();
}

void LogStream::stop() {
  state_->stop = true;
  if (thread_.joinable()) thread_.join();
}

std::vector<json> LogStream::events() const {
  std::lock_guard lock(state_->mu);
  return state_->events;
}

std::vector<std::string> LogStream::event_names() const {
  std::lock_guard lock(state_->mu);
  return state_->names;
}

bool LogStream::ended() const {
  std::lock_guard lock(state_->mu);
  return state_->ended;
}

std::string LogStream::error() const {
  std::lock_guard lock(state_->mu);
  return state_->error;
}

// ---- fixture ----

void E2eTest::SetUp() {
  PODIUM_IT_REQUIRE_DATABASE();
  for (const char* b : {"podium-server", "podium-worker"})
    ASSERT_TRUE(fs::exists(it::binary(b)))
        << it::binary(b) << " does not exist: build it (cmake --build <dir> --target " << b
        << ") and set PODIUM_BIN_DIR to <build>/bin";
  dir_ = std::make_unique<it::TempDir>("podium-e2e");
  fs::create_directories(output_dir());
  // The tag names this test process: a later test can tell processes that a crashed or killed
  // test binary left behind (its agents die with it, their ranks live in sessions of their own).
  tag_ = "e2e-" + std::to_string(::getpid()) + "-" + it::random_hex().substr(0, 8);
  kill_orphans_of_dead_tests();
  // Each test process gets its own coordinator port range: tests run in parallel and every
  // agent is on 127.0.0.1. Below the Linux ephemeral range (32768+).
  const int first = 10000 + static_cast<int>(::getpid() % 1100) * 20;
  ports_ = {first, 20};

  it::Podium::Options o;
  o.settings = {
      "scheduler.coordinator_port_first=" + std::to_string(ports_.first),
      "scheduler.coordinator_port_count=" + std::to_string(ports_.second),
      std::string("workloads.python=") + PODIUM_PYTHON,
      "workloads.reference_dir=" + (it::repo_root() / "engine/workloads/reference").string(),
      "workloads.output_dir=" + output_dir().string(),
  };
  const Settings s = settings();
  o.settings.insert(o.settings.end(), s.extra.begin(), s.extra.end());
  // A later --set wins over the harness's --listen 127.0.0.1:0.
  if (s.fixed_port) o.settings.push_back("listen=127.0.0.1:" + std::to_string(free_port()));
  if (s.private_postgres) private_pg_ = std::make_unique<it::PrivatePostgres>();
  podium_ = std::make_unique<it::Podium>(
      o, it::Podium::OnServer{private_pg_ ? private_pg_->url() : std::string()});
}

void E2eTest::TearDown() {
  // Agents first, while the server still answers (they report their ranks' exits and flush).
  for (auto& w : workers_) {
    if (!w->running()) continue;
    const int status = w->terminate();
    EXPECT_EQ(status, 0) << w->name() << " did not exit 0 on SIGTERM (status " << status << ")\n"
                         << w->log_tail(20);
  }
  if (!tag_.empty()) {
    // An agent stops its ranks before it exits: nothing it started may be left.
    std::vector<pid_t> left;
    eventually([&] { return (left = rank_processes()).empty(); }, 3s);
    if (!left.empty()) {
      std::string what;
      for (pid_t p : left) what += "  " + describe_process(p) + "\n";
      ADD_FAILURE() << "processes started by this test's agents outlived them (killing them):\n"
                    << what;
      for (pid_t p : left) {
        ::kill(-p, SIGKILL);
        ::kill(p, SIGKILL);
      }
    }
  }
  workers_.clear();
  podium_.reset();
  if (HasFailure() && dir_) {
    std::cerr << "e2e: test directory kept for inspection: " << dir_->path() << "\n";
    dir_->keep();
  }
}

void E2eTest::kill_orphans_of_dead_tests() {
  for (const auto& [pid, tag] : processes_with_env_key("E2E_TEST_TAG")) {
    // "e2e-<pid of the test binary>-<hex>"
    if (tag.rfind("e2e-", 0) != 0) continue;
    const auto dash = tag.find('-', 4);
    pid_t owner = 0;
    try {
      owner = static_cast<pid_t>(std::stol(tag.substr(4, dash - 4)));
    } catch (const std::exception&) {
      continue;
    }
    if (owner <= 0 || owner == ::getpid() || process_alive(owner)) continue;
    std::cerr << "e2e: killing a process left by an earlier test binary (pid " << owner
              << "): " << describe_process(pid) << "\n";
    ::kill(pid, SIGKILL);
  }
}

std::vector<pid_t> E2eTest::rank_processes() const {
  std::vector<pid_t> out;
  for (pid_t p : processes_with_env("E2E_TEST_TAG", tag_)) {
    bool is_agent = false;
    for (const auto& w : workers_)
      if (w->pid() == p) is_agent = true;
    if (!is_agent) out.push_back(p);
  }
  return out;
}

std::string E2eTest::create_cluster(const std::string& accelerator, int num_slices) {
  const std::string name = unique_name("c");
  podium_->create_cluster(name, accelerator, {{"num_slices", num_slices}});
  return name;
}

WorkerProcess& E2eTest::start_worker(const std::string& cluster, int slice, int host,
                                     const std::string& run_as) {
  auto it = worker_tokens_.find(cluster);
  if (it == worker_tokens_.end())
    it = worker_tokens_.emplace(cluster, podium_->worker_token(cluster)).first;
  WorkerOptions o;
  o.server_url = podium_->url();
  o.token = it->second;
  o.cluster = cluster;
  o.slice = slice;
  o.host = host;
  o.run_as = run_as;
  o.name = "worker-s" + std::to_string(slice) + "h" + std::to_string(host);
  o.workdir =
      dir() / ("agent-" + cluster + "-s" + std::to_string(slice) + "h" + std::to_string(host));
  o.env = {{"E2E_TEST_TAG", tag_},
           // Several ranks share this machine's cores (reference workload README).
           {"OMP_NUM_THREADS", "1"},
           {"PYTHONDONTWRITEBYTECODE", "1"},
           {"PYTHONUNBUFFERED", "1"}};
  for (const auto& [k, v] : settings().worker_env) o.env[k] = v;
  o.extra_args = settings().worker_args;
  workers_.push_back(std::make_unique<WorkerProcess>(o));
  workers_.back()->start();
  return *workers_.back();
}

std::vector<WorkerProcess*> E2eTest::start_workers(const std::string& cluster, int slices,
                                                   int hosts_per_slice) {
  std::vector<WorkerProcess*> out;
  for (int slice = 0; slice < slices; ++slice)
    for (int host = 0; host < hosts_per_slice; ++host)
      out.push_back(&start_worker(cluster, slice, host));
  return out;
}

WorkerProcess* E2eTest::worker_with_id(const std::string& worker_id) {
  for (auto& w : workers_)
    if (w->worker_id() == worker_id) return w.get();
  return nullptr;
}

std::string E2eTest::dataset(const std::string& size) {
  const std::string name = unique_name("ds");
  const fs::path file = dir() / (name + ".txt");
  const std::string cmd =
      std::string(PODIUM_PYTHON) + " '" +
      (it::repo_root() / "engine/workloads/reference/make_dataset.py").string() + "' '" +
      file.string() + "' --size " + size + " 2>&1";
  std::string out;
  if (it::run_shell(cmd, &out) != 0) throw std::runtime_error("make_dataset.py failed: " + out);
  it::require_status(
      admin().post("/api/v1/datasets",
                   {{"name", name}, {"uri", fs::absolute(file).string()}, {"format", "text"}}),
      201);
  return name;
}

json E2eTest::submit(const json& spec) {
  return it::require_status(admin().post("/api/v1/runs", spec), 201).json;
}

json E2eTest::get_run(const std::string& run_id) {
  return it::require_status(admin().get("/api/v1/runs/" + it::enc(run_id)), 200).json;
}

std::vector<json> E2eTest::attempts(const std::string& run_id) {
  auto r = it::require_status(admin().get("/api/v1/runs/" + it::enc(run_id) + "/attempts"), 200);
  std::vector<json> out;
  if (r.json.contains("items") && r.json["items"].is_array())
    for (const auto& a : r.json["items"]) out.push_back(a);
  std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return a.value("number", 0) < b.value("number", 0);
  });
  return out;
}

std::vector<json> E2eTest::events(const std::string& run_id) {
  auto r = admin().get("/api/v1/runs/" + it::enc(run_id) + "/events?limit=500");
  std::vector<json> out;
  if (r.status == 200 && r.json.contains("items") && r.json["items"].is_array())
    for (const auto& e : r.json["items"]) out.push_back(e);
  return out;
}

std::string E2eTest::diagnostics(const std::string& run_id) {
  std::ostringstream os;
  const Api api = admin();
  auto run = api.get("/api/v1/runs/" + it::enc(run_id));
  os << "\n==== run " << run_id << " ====\n";
  if (run.status == 200) {
    json shown = run.json;
    shown.erase("plan");  // long and not what a failure is about
    os << shown.dump() << "\n";
  } else {
    os << run.describe() << "\n";
  }
  auto att = api.get("/api/v1/runs/" + it::enc(run_id) + "/attempts");
  os << "---- attempts ----\n";
  if (att.status == 200 && att.json.contains("items") && att.json["items"].is_array()) {
    std::vector<json> items(att.json["items"].begin(), att.json["items"].end());
    os << describe_attempts(items);
  } else {
    os << att.describe() << "\n";
  }
  auto ev = api.get("/api/v1/runs/" + it::enc(run_id) + "/events?limit=500");
  os << "---- events ----\n";
  if (ev.status == 200 && ev.json.contains("items") && ev.json["items"].is_array()) {
    for (const auto& e : ev.json["items"]) os << "  " << cut(e.dump(), 400) << "\n";
  } else {
    os << ev.describe() << "\n";
  }
  os << "---- server log (last 40 lines) ----\n" << podium_->server().log_tail(40);
  for (const auto& w : workers_)
    os << "---- " << w->name() << " (" << w->worker_id() << ", pid " << w->pid()
       << ") log, last 15 lines ----\n"
       << w->log_tail(15);
  os << "---- processes of this test's agents ----\n";
  for (pid_t p : rank_processes()) os << "  " << describe_process(p) << "\n";
  return os.str();
}

::testing::AssertionResult E2eTest::wait_for_run(const std::string& run_id, const std::string& what,
                                                 const std::function<bool(const json&)>& done,
                                                 std::chrono::milliseconds timeout, json* last) {
  const auto started = Clock::now();
  const auto deadline = started + timeout;
  json run;
  std::string last_error;
  for (;;) {
    auto r = admin().get("/api/v1/runs/" + it::enc(run_id));
    if (r.status == 200) {
      run = r.json;
      if (last != nullptr) *last = run;
      if (done(run)) return ::testing::AssertionSuccess();
      const std::string state = run.value("state", "");
      if (is_terminal_state(state))
        return ::testing::AssertionFailure()
               << "waiting for " << what << ": the run ended in state '" << state
               << "' (failure_class " << str(run, "failure_class") << ") after "
               << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started)
                      .count()
               << " ms" << diagnostics(run_id);
    } else {
      last_error = r.describe();
    }
    if (Clock::now() >= deadline)
      return ::testing::AssertionFailure()
             << "waiting for " << what << ": not reached within " << timeout.count()
             << " ms; run state '" << str(run, "state") << "', last_step " << str(run, "last_step")
             << (last_error.empty() ? std::string() : "; last failed read: " + last_error)
             << diagnostics(run_id);
    std::this_thread::sleep_for(100ms);
  }
}

::testing::AssertionResult E2eTest::wait_for_state(const std::string& run_id,
                                                   const std::string& state,
                                                   std::chrono::milliseconds timeout, json* last) {
  return wait_for_run(
      run_id, "state '" + state + "'",
      [&](const json& run) { return run.value("state", "") == state; }, timeout, last);
}

::testing::AssertionResult E2eTest::wait_for_first_attempt_pids(const std::string& run_id,
                                                                size_t ranks,
                                                                std::chrono::milliseconds timeout,
                                                                json* attempt) {
  return wait_for_run(
      run_id,
      ranks == 2 ? std::string("attempt 1 running with both pids")
                 : "attempt 1 running with all " + std::to_string(ranks) + " pids",
      [&](const json& r) {
        if (r.value("state", "") != "running") return false;
        auto att = attempts(run_id);
        if (att.size() != 1) return false;
        auto hosts = hosts_by_rank(att[0]);
        if (hosts.size() != ranks) return false;
        for (const auto& entry : hosts)
          if (!has_pid(entry.second)) return false;
        *attempt = att[0];
        return true;
      },
      timeout);
}

::testing::AssertionResult E2eTest::wait_for_recovering(const std::string& run_id,
                                                        pid_t survivor_pid,
                                                        std::chrono::milliseconds timeout,
                                                        json* last) {
  return wait_for_run(
      run_id, "state recovering and rank 0's process gone",
      [&](const json& r) {
        return r.value("state", "") == "recovering" && !process_alive(survivor_pid) &&
               process_group_members(survivor_pid).empty();
      },
      timeout, last);
}

std::vector<json> E2eTest::stored_logs(const std::string& run_id, const std::string& attempt_id,
                                       int rank) {
  auto w =
      it::walk_pages(admin(),
                     "/api/v1/runs/" + it::enc(run_id) + "/logs?attempt=" + it::enc(attempt_id) +
                         "&rank=" + std::to_string(rank),
                     500, 10000);
  return w.items;
}

std::vector<std::string> E2eTest::local_rank_lines(const json& attempt, int rank) {
  for (const auto& h : attempt.value("hosts", json::array())) {
    if (h.value("rank", -1) != rank) continue;
    if (auto* w = worker_with_id(h.value("worker_id", "")))
      return w->rank_lines(attempt["id"], rank);
  }
  return {};
}

::testing::AssertionResult E2eTest::logs_match_workers(const std::string& run_id,
                                                       const json& attempt) {
  const std::string attempt_id = attempt.value("id", "");
  const json hosts = attempt.value("hosts", json::array());
  if (hosts.empty())
    return ::testing::AssertionFailure() << "attempt " << attempt_id << " lists no hosts";
  for (const auto& h : hosts) {
    const int rank = h.value("rank", -1);
    const std::string wid = h.value("worker_id", "");
    WorkerProcess* w = worker_with_id(wid);
    if (w == nullptr)
      return ::testing::AssertionFailure()
             << "attempt " << attempt_id << " rank " << rank << " ran on worker '" << wid
             << "', which is none of this test's agents";
    const auto local = w->rank_lines(attempt_id, rank);
    if (local.empty())
      return ::testing::AssertionFailure()
             << w->name() << " has no lines in " << w->rank_log_path(attempt_id, rank);
    const auto stored = stored_logs(run_id, attempt_id, rank);
    std::string problem;
    for (size_t i = 0; i < stored.size() && problem.empty(); ++i) {
      const auto& item = stored[i];
      if (!item.contains("seq") || !item["seq"].is_number_integer() ||
          item["seq"].get<long long>() != static_cast<long long>(i))
        problem = "item " + std::to_string(i) + " has seq " + str(item, "seq") + ", expected " +
                  std::to_string(i) + " (ordered by seq, each once, from 0): " + item.dump();
      else if (item.value("rank", -1) != rank)
        problem =
            "item " + std::to_string(i) + " has rank " + str(item, "rank") + ": " + item.dump();
      else if (!item.contains("attempt") || (item["attempt"] != attempt.value("id", json()) &&
                                             item["attempt"] != attempt.value("number", json())))
        problem = "item " + std::to_string(i) + " names attempt " + str(item, "attempt") +
                  ", expected " + attempt_id + ": " + item.dump();
      else if (i < local.size() && item.value("line", std::string("\x01")) != local[i])
        problem = "line " + std::to_string(i) + " differs: stored '" +
                  cut(item.value("line", std::string("<none>")), 300) + "', the agent read '" +
                  cut(local[i], 300) + "'";
    }
    if (problem.empty() && stored.size() != local.size()) {
      problem = "the server stored " + std::to_string(stored.size()) + " lines, the agent read " +
                std::to_string(local.size()) + " (" + w->rank_log_path(attempt_id, rank).string() +
                ")";
      const size_t n = std::min(stored.size(), local.size());
      if (stored.size() > n) problem += "; first extra stored: " + stored[n].dump();
      if (local.size() > n) problem += "; first missing: '" + cut(local[n], 300) + "'";
    }
    if (!problem.empty())
      return ::testing::AssertionFailure()
             << "logs of attempt " << attempt_id << " rank " << rank << ": " << problem;
  }
  return ::testing::AssertionSuccess();
}

json E2eTest::metrics(const std::string& run_id) {
  auto r = admin().get("/api/v1/runs/" + it::enc(run_id) +
                       "/metrics?fields=loss,step_seconds&max_points=100000");
  if (r.status != 200 || !r.json.is_object()) {
    ADD_FAILURE() << "metrics: " << r;
    return json::object();
  }
  return r.json;
}

::testing::AssertionResult metrics_steps_are(const json& m, const std::vector<int>& expected,
                                             bool each_once) {
  if (!m.is_object() || !m.contains("steps") || !m["steps"].is_array())
    return ::testing::AssertionFailure() << "no steps[] in " << cut(m.dump(), 2000);
  std::vector<int> steps;
  for (const auto& v : m["steps"]) {
    if (!v.is_number_integer())
      return ::testing::AssertionFailure() << "a step that is not an integer: " << v.dump();
    steps.push_back(v.get<int>());
  }
  if (each_once) {
    if (steps != expected)
      return ::testing::AssertionFailure()
             << "steps " << ::testing::PrintToString(steps) << ", expected "
             << ::testing::PrintToString(expected) << " (each once, in order)";
  } else {
    std::vector<int> distinct = steps;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (distinct != expected)
      return ::testing::AssertionFailure()
             << "distinct steps " << ::testing::PrintToString(distinct) << ", expected "
             << ::testing::PrintToString(expected);
  }
  if (!m.contains("series") || !m["series"].is_object())
    return ::testing::AssertionFailure() << "no series{} in " << cut(m.dump(), 2000);
  for (const char* field : {"loss", "step_seconds"}) {
    if (!m["series"].contains(field) || !m["series"][field].is_array())
      return ::testing::AssertionFailure()
             << "no series." << field << " in " << cut(m.dump(), 2000);
    if (m["series"][field].size() != steps.size())
      return ::testing::AssertionFailure()
             << "series." << field << " has " << m["series"][field].size() << " values for "
             << steps.size() << " steps";
    for (const auto& v : m["series"][field])
      if (!v.is_number() || !std::isfinite(v.get<double>()))
        return ::testing::AssertionFailure()
               << "series." << field << " has a value that is not a finite number: " << v.dump();
  }
  return ::testing::AssertionSuccess();
}

std::vector<int> E2eTest::checkpoint_steps(const std::string& run_id) {
  auto w = it::walk_pages(admin(), "/api/v1/runs/" + it::enc(run_id) + "/checkpoints", 500);
  std::vector<int> out;
  for (const auto& c : w.items) out.push_back(c.value("step", -1));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace podium::e2e
