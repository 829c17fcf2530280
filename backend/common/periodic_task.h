#pragma once
// A body run on a thread of its own every `interval` while started: the server's background
// sweeps (log retention, summaries of finished runs). The body runs once at start, then after
// each interval, or sooner when wake() is called. Exceptions the body lets out are passed to
// `on_error` and the next interval tries again (a sweep fails while the database is away).

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace podium {

class PeriodicTask {
 public:
  using Body = std::function<void()>;
  using OnError = std::function<void(const std::exception&)>;
  PeriodicTask(std::chrono::milliseconds interval, Body body, OnError on_error = {});
  ~PeriodicTask();  // stops
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  void start();  // no-op when running
  // Returns once the body, if it is running, has returned; the thread then ends.
  void stop();
  // Runs the body again as soon as the current run (if any) has returned.
  void wake();

 private:
  void loop();

  const std::chrono::milliseconds interval_;
  Body body_;
  OnError on_error_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool woken_ = false;
  std::thread thread_;
};

}  // namespace podium
