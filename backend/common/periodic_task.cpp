#include "backend/common/periodic_task.h"

#include <utility>

namespace podium {

PeriodicTask::PeriodicTask(std::chrono::milliseconds interval, Body body, OnError on_error)
    : interval_(interval), body_(std::move(body)), on_error_(std::move(on_error)) {}

PeriodicTask::~PeriodicTask() {
  stop();
}

void PeriodicTask::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void PeriodicTask::stop() {
  std::thread t;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    t = std::move(thread_);
  }
  cv_.notify_all();
  if (t.joinable()) t.join();
}

void PeriodicTask::wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void PeriodicTask::loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    woken_ = false;
    lock.unlock();
    try {
      body_();
    } catch (const std::exception& e) {
      if (on_error_) on_error_(e);
    }
    lock.lock();
    cv_.wait_for(lock, interval_, [this] { return stopping_ || woken_; });
  }
}

}  // namespace podium
