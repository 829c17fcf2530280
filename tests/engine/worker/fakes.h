#pragma once
// Test doubles for podium-worker's seams: a clock moved by hand, a scripted child process and
// launcher, and a control plane that records calls and answers from a script.

#include <signal.h>

#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/worker/clock.h"
#include "engine/worker/control_plane.h"
#include "engine/worker/process.h"

namespace podium::worker::testing {

class FakeClock final : public Clock {
 public:
  TimePoint now() const override {
    std::lock_guard lock(mu_);
    return now_;
  }
  void advance(std::chrono::milliseconds d) {
    std::lock_guard lock(mu_);
    now_ += d;
  }

 private:
  mutable std::mutex mu_;
  TimePoint now_ = TimePoint{} + std::chrono::hours(1);
};

// A child whose output, exit and reaction to signals the test scripts.
class FakeChild final : public ChildProcess {
 public:
  struct State {
    std::mutex mu;
    std::deque<OutputChunk> output;
    bool output_done = false;
    std::optional<ExitStatus> exit;
    std::vector<int> signals;
    bool exit_on_term = false;  // SIGTERM ends it (signal 15)
  };
  explicit FakeChild(std::shared_ptr<State> s) : s_(std::move(s)) {}
  pid_t pid() const override { return 4242; }
  std::optional<ExitStatus> try_wait() override {
    std::lock_guard lock(s_->mu);
    return s_->exit;
  }
  bool read_output(std::chrono::milliseconds, std::vector<OutputChunk>& out) override {
    std::lock_guard lock(s_->mu);
    while (!s_->output.empty()) {
      out.push_back(s_->output.front());
      s_->output.pop_front();
    }
    return !s_->output_done;
  }
  void signal_group(int sig) override {
    std::lock_guard lock(s_->mu);
    s_->signals.push_back(sig);
    if (sig == SIGKILL || (sig == SIGTERM && s_->exit_on_term)) {
      if (!s_->exit) s_->exit = ExitStatus{std::nullopt, sig};
      s_->output_done = true;
    }
  }
  void close_output() override {
    std::lock_guard lock(s_->mu);
    s_->output_done = true;
  }

 private:
  std::shared_ptr<State> s_;
};

class FakeLauncher final : public ProcessLauncher {
 public:
  std::shared_ptr<FakeChild::State> state = std::make_shared<FakeChild::State>();
  std::string fail_with;  // non-empty: launching fails with this error
  std::vector<LaunchSpec> specs;
  LaunchResult launch(const LaunchSpec& spec) override {
    specs.push_back(spec);
    LaunchResult r;
    if (!fail_with.empty()) {
      r.error = fail_with;
      return r;
    }
    r.child = std::make_unique<FakeChild>(state);
    return r;
  }
};

struct RecordedCall {
  std::string method;
  std::string path;
  nlohmann::json body;
};

// Answers every call with 200 {} unless `answer` says otherwise.
class FakeControlPlane final : public ControlPlane {
 public:
  std::function<std::optional<ApiResult>(const RecordedCall&)> answer;
  ApiResult call(const std::string& method, const std::string& path, const std::string& body,
                 std::chrono::milliseconds) override {
    RecordedCall c{method, path, nlohmann::json::parse(body.empty() ? "null" : body)};
    std::function<std::optional<ApiResult>(const RecordedCall&)> a;
    {
      std::lock_guard lock(mu);
      calls.push_back(c);
      a = answer;
    }
    if (a) {
      if (auto r = a(c)) return *r;
    }
    return classify(200, "{}");
  }
  std::vector<RecordedCall> snapshot() {
    std::lock_guard lock(mu);
    return calls;
  }
  std::mutex mu;
  std::vector<RecordedCall> calls;
};

// Polls `done` until it holds or `timeout` passes.
inline bool eventually(const std::function<bool()>& done,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

}  // namespace podium::worker::testing
