#pragma once
// Every write to a run's lifecycle: its state (through the run state machine of
// backend/sched/run_state.h, with an event row and the notifications that wake followers), its
// restart and recovery counters, why it failed, why it waits, and what its attempts placed or
// resumed. Every function runs in the caller's transaction.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/db/database.h"

namespace podium::sched {

// Moves a run from `from` to `to` if that is a legal transition and the run is still in `from`;
// records the event and wakes the run's followers. Returns false (and changes nothing)
// otherwise: a run another replica moved on, or an attempt ending after its run did, is expected,
// and the callers record why instead.
bool transition_run(db::Transaction& tx, const std::string& run_id, const std::string& from,
                    const std::string& to, const std::string& cause);

// Records a run event without a state change (resizes, waiting reasons).
void record_run_note(db::Transaction& tx, const std::string& run_id, const std::string& state,
                     const std::string& note);

// Wakes the scheduler and the run's followers ("*": every run).
void notify_runs(db::Transaction& tx, const std::string& run_id);

// The restart policy spent a restart of the run's budget, or granted a free recovery.
void count_restart(db::Transaction& tx, const std::string& run_id);
void count_recovery(db::Transaction& tx, const std::string& run_id);

// Why the run failed: its failure class, and its one-line detail when there is one (a run that
// cannot be launched has a class only).
void record_run_failure(db::Transaction& tx, const std::string& run_id,
                        const std::string& failure_class,
                        const std::optional<std::string>& detail = std::nullopt);

// Why the run is not running yet (nullopt: it is not waiting). Written only when it changed:
// the scheduler says it every second.
void set_waiting_reason(db::Transaction& tx, const std::string& run_id,
                        const std::optional<std::string>& reason);

// An elastic run asks for more slices: its attempt is ended at the next checkpoint and the next
// one is placed wider (the flag is cleared when it is).
void request_grow(db::Transaction& tx, const std::string& run_id);

// A new attempt of the run was placed on num_slices slices: the grow it served is done, it
// waits for `waiting_reason` (nullopt: for nothing) and resumes from that checkpoint, if any.
void record_run_placed(db::Transaction& tx, const std::string& run_id, int num_slices,
                       const std::optional<std::string>& waiting_reason,
                       const std::optional<std::int64_t>& resumed_from_step);

// A run's compile check (backend/sched/dispatch/compile_checks.h) decided: its preflight_state
// (passed | failed), its plan with the compiler's figure (nullopt: unchanged), the failure class
// of a refusal (nullopt: unchanged). A decided run waits for its check no more (`settled`); one
// that moved on meanwhile (cancelled) only has its check marked failed.
void record_preflight_decision(db::Transaction& tx, const std::string& run_id,
                               const std::string& preflight_state,
                               const std::optional<std::string>& plan_json,
                               const std::optional<std::string>& failure_class, bool settled);

// A run enters the queue (POST /runs, or a run's compile check): its row in state queued and its
// first event, from nothing to queued, with `cause`. The scheduler is woken.
struct NewQueuedRun {
  std::string id;
  std::string name;
  std::string owner_id;
  std::string cluster_id;
  std::optional<std::string> dataset_id;
  std::string model;
  std::string workload;
  std::string spec;  // JSON text
  std::string plan;  // JSON text
  bool forced = false;
  std::string priority = "medium";
  std::vector<std::string> tags;
  std::optional<std::string> code_bundle;
  std::vector<std::string> skipped_checks;
  std::optional<std::string> compile_check_for;  // the run this one compile-checks
  std::string cause;
};
void create_queued_run(db::Transaction& tx, const NewQueuedRun& run);

// A run waits for its compile check, run `check_run_id` (backend/sched/dispatch/compile_checks.h
// decides it later through record_preflight_decision).
void record_preflight_pending(db::Transaction& tx, const std::string& run_id,
                              const std::string& check_run_id);

// A run created finished (POST /runs/import): no state machine was walked, so its one event goes
// from nothing to its final state.
struct ImportedRun {
  std::string id;
  std::string name;
  std::string owner_id;
  std::string model;
  std::string spec;   // JSON text
  std::string state;  // succeeded | failed
  std::optional<std::string> failure_class;
  std::optional<std::int64_t> last_step;
  std::string accelerator;
  int num_slices = 1;
  std::string log_facts;  // JSON text
  std::string cause;      // its event's cause
};
void record_imported_run(db::Transaction& tx, const ImportedRun& run);

}  // namespace podium::sched
