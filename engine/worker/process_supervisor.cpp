#include "engine/worker/process_supervisor.h"

#include <signal.h>

namespace podium::worker {

void ProcessSupervisor::cancel(std::chrono::milliseconds grace) {
  std::lock_guard lock(mu_);
  if (!cancel_grace_) cancel_grace_ = grace;
}

bool ProcessSupervisor::cancel_requested() const {
  std::lock_guard lock(mu_);
  return cancel_grace_.has_value();
}

std::optional<ExitStatus> ProcessSupervisor::tick() {
  std::optional<std::chrono::milliseconds> grace;
  {
    std::lock_guard lock(mu_);
    grace = cancel_grace_;
  }
  if (!exit_) {
    const TimePoint now = clock_.now();
    if (grace && !term_sent_) {
      child_.signal_group(SIGTERM);
      term_sent_ = now;
    } else if (grace && !kill_sent_ && now - *term_sent_ >= *grace) {
      child_.signal_group(SIGKILL);
      kill_sent_ = now;
    }
    exit_ = child_.try_wait();
    if (exit_) exited_at_ = clock_.now();
  }
  return exit_;
}

bool ProcessSupervisor::give_up_on_output() {
  if (!exit_ || !exited_at_) return false;
  const TimePoint now = clock_.now();
  if (!leftovers_killed_at_) {
    if (now - *exited_at_ < linger_) return false;
    // Descendants still hold the pipes: the rank is over, so they go too.
    child_.signal_group(SIGKILL);
    leftovers_killed_at_ = now;
    return false;
  }
  return now - *leftovers_killed_at_ >= std::chrono::seconds(1);
}

}  // namespace podium::worker
