#pragma once
// Cancel escalation and exit detection for one running process, driven by tick() with the time
// from a Clock: SIGTERM to the process group when a cancel is asked for, SIGKILL to the group
// once the grace has passed and the process still runs. After the leader exited, descendants
// that keep running (and keep the output pipes open) are killed after a short linger.

#include <chrono>
#include <mutex>
#include <optional>

#include "engine/worker/clock.h"
#include "engine/worker/process.h"

namespace podium::worker {

class ProcessSupervisor {
 public:
  ProcessSupervisor(ChildProcess& child, const Clock& clock,
                    std::chrono::milliseconds linger = std::chrono::milliseconds(2000))
      : child_(child), clock_(clock), linger_(linger) {}

  // Thread-safe; the first request's grace counts, later ones change nothing.
  void cancel(std::chrono::milliseconds grace);
  bool cancel_requested() const;

  // One step: sends the signals that are due and reaps the process. Returns its exit status once
  // it ended (then every later call returns the same).
  std::optional<ExitStatus> tick();

  // After the exit, whether to stop waiting for the pipes' end of file: the linger passed, the
  // group got SIGKILL, and another second passed (a descendant that left the group).
  bool give_up_on_output();

  bool sent_term() const { return term_sent_.has_value(); }
  bool sent_kill() const { return kill_sent_.has_value(); }

 private:
  ChildProcess& child_;
  const Clock& clock_;
  std::chrono::milliseconds linger_;
  mutable std::mutex mu_;
  std::optional<std::chrono::milliseconds> cancel_grace_;  // set by cancel()
  std::optional<TimePoint> term_sent_;
  std::optional<TimePoint> kill_sent_;
  std::optional<ExitStatus> exit_;
  std::optional<TimePoint> exited_at_;
  std::optional<TimePoint> leftovers_killed_at_;
};

}  // namespace podium::worker
