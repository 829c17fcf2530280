#pragma once
// Run and attempt state machines of the API contract. Every transition not listed is illegal;
// the API answers an illegal one with 409. A transition to the same state is illegal too: callers
// that re-apply an update check equality first, so a duplicate is visible rather than silent.
//
// Run:
//   queued     -> starting (placed) | cancelled (nothing runs yet) | failed (cannot ever run, e.g.
//                 cluster deleted)
//   starting   -> running | succeeded (finished before "running" was recorded) | failed |
//                 recovering (attempt failed, will be retried) | cancelling | queued (dispatch
//                 abandoned before any process started; no budget spent)
//   running    -> succeeded | failed | recovering | cancelling
//   recovering -> starting (next attempt placed) | failed (gave up waiting) | cancelling (ranks of
//                 the old attempt still being stopped) | cancelled (nothing left running)
//   cancelling -> cancelled | succeeded (the run finished before the cancel reached it)
//   succeeded, failed, cancelled: terminal.
// "recovering" covers both recoveries and restarts: the run waits for its next attempt; whether
// budget was spent is the restart policy's business, not a state.
//
// Attempt:
//   pending  -> starting (workers fetched their assignment) | cancelled | failed (a host was lost
//               before start)
//   starting -> running | succeeded | failed | cancelled
//   running  -> succeeded | failed | cancelled
//   succeeded, failed, cancelled: terminal.

#include <optional>
#include <string_view>
#include <vector>

namespace podium::sched {

enum class RunState {
  queued,
  starting,
  running,
  recovering,
  cancelling,
  succeeded,
  failed,
  cancelled
};
enum class AttemptState { pending, starting, running, succeeded, failed, cancelled };

std::string_view to_string(RunState s);
std::string_view to_string(AttemptState s);
std::optional<RunState> parse_run_state(std::string_view name);
std::optional<AttemptState> parse_attempt_state(std::string_view name);

bool is_terminal(RunState s);
bool is_terminal(AttemptState s);
// A run state as stored (runs.state); a name that is not a state is not terminal.
bool is_terminal_run_state(std::string_view name);

bool can_transition(RunState from, RunState to);
bool can_transition(AttemptState from, AttemptState to);

// The legal targets from a state, in enum order (for error messages and docs).
std::vector<RunState> next_states(RunState from);
std::vector<AttemptState> next_states(AttemptState from);

const std::vector<RunState>& all_run_states();
const std::vector<AttemptState>& all_attempt_states();

}  // namespace podium::sched
