#include "backend/sched/restart_policy.h"

#include <gtest/gtest.h>

namespace podium::sched {
namespace {

using core::FailureClass;

RestartInput input(FailureClass c, int used, int max, std::vector<int> codes = {},
                   std::vector<int> restart_on = {}) {
  RestartInput in;
  in.failure_class = c;
  in.restarts_used = used;
  in.max_restarts = max;
  in.exit_codes = std::move(codes);
  in.restart_on_exit_codes = std::move(restart_on);
  return in;
}

// The whole table of the header, row by row.
TEST(RestartPolicyTest, Table) {
  struct Row {
    FailureClass cls;
    int used;
    int max;
    std::vector<int> codes;
    std::vector<int> restart_on;
    RestartAction expected;
  };
  const std::vector<Row> rows = {
      // Infrastructure: always recovered, even with no budget left.
      {FailureClass::preempted, 0, 0, {}, {}, RestartAction::recover},
      {FailureClass::preempted, 5, 3, {}, {}, RestartAction::recover},
      {FailureClass::host_lost, 3, 3, {1}, {}, RestartAction::recover},
      // Deterministic: fail at once, budget or not.
      {FailureClass::oom, 0, 3, {1}, {}, RestartAction::fail},
      {FailureClass::mesh, 0, 3, {1}, {}, RestartAction::fail},
      {FailureClass::config, 0, 3, {1}, {}, RestartAction::fail},
      {FailureClass::nan, 0, 3, {1}, {}, RestartAction::fail},
      {FailureClass::data_exhausted, 0, 3, {1}, {}, RestartAction::fail},
      // A code or environment error (ImportError before the first step): fail at once, no
      // restart spent, whatever the budget.
      {FailureClass::code_error, 0, 3, {1}, {}, RestartAction::fail},
      {FailureClass::code_error, 0, 0, {1}, {}, RestartAction::fail},
      // Generic errors spend the budget.
      {FailureClass::error, 0, 3, {1}, {}, RestartAction::restart},
      {FailureClass::error, 2, 3, {1}, {}, RestartAction::restart},
      {FailureClass::error, 3, 3, {1}, {}, RestartAction::fail},
      {FailureClass::error, 0, 0, {1}, {}, RestartAction::fail},
      {FailureClass::error, 0, 3, {}, {}, RestartAction::restart},
      // The user's restart codes win over a heuristic class, within the budget.
      {FailureClass::oom, 0, 3, {42}, {42}, RestartAction::restart},
      {FailureClass::data_exhausted, 1, 2, {1, 42}, {42, 127}, RestartAction::restart},
      {FailureClass::nan, 2, 2, {42}, {42}, RestartAction::fail},
      {FailureClass::code_error, 0, 2, {42}, {42}, RestartAction::restart},
      {FailureClass::error, 0, 1, {42}, {42}, RestartAction::restart},
      // A listed code that did not occur changes nothing.
      {FailureClass::oom, 0, 3, {1}, {42}, RestartAction::fail},
      {FailureClass::error, 0, 3, {1}, {42}, RestartAction::restart},
      // Listed codes never turn a free recovery into a paid restart.
      {FailureClass::preempted, 0, 3, {42}, {42}, RestartAction::recover},
      // Nonsense budgets are treated as zero.
      {FailureClass::error, -1, -5, {1}, {}, RestartAction::fail},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    auto d = decide_restart(input(r.cls, r.used, r.max, r.codes, r.restart_on));
    EXPECT_EQ(d.action, r.expected) << "row " << i << ": " << d.reason;
    EXPECT_EQ(d.spends_budget, r.expected == RestartAction::restart) << "row " << i;
  }
}

TEST(RestartPolicyTest, ReasonsAndJson) {
  auto restart = decide_restart(input(FailureClass::error, 1, 3, {1}));
  EXPECT_EQ(restart.reason, "error; restart 2 of 3");
  auto exhausted = decide_restart(input(FailureClass::error, 3, 3, {1}));
  EXPECT_EQ(exhausted.reason, "error; restart budget exhausted (3 allowed)");
  auto listed = decide_restart(input(FailureClass::oom, 0, 1, {42}, {42}));
  EXPECT_EQ(listed.reason, "oom: exit code 42 is in restart_on_exit_codes; restart 1 of 1");
  auto code = decide_restart(input(FailureClass::code_error, 0, 3, {1}));
  EXPECT_EQ(code.reason, "code_error: deterministic, a retry would fail the same way");
  EXPECT_FALSE(code.spends_budget);
  auto j = to_json(decide_restart(input(FailureClass::host_lost, 0, 0)));
  EXPECT_EQ(j["action"], "recover");
  EXPECT_EQ(j["spends_budget"], false);
  EXPECT_EQ(to_string(RestartAction::restart), "restart");
  EXPECT_EQ(to_string(RestartAction::fail), "fail");
}

TEST(RestartPolicyTest, MaxRecoveriesBoundsAFlappingCluster) {
  auto in = input(FailureClass::host_lost, 0, 3);
  in.max_recoveries = 2;
  in.recoveries_used = 1;
  auto second = decide_restart(in);
  EXPECT_EQ(second.action, RestartAction::recover);
  EXPECT_FALSE(second.recoveries_exhausted);
  in.recoveries_used = 2;
  auto third = decide_restart(in);
  EXPECT_EQ(third.action, RestartAction::fail);
  EXPECT_TRUE(third.recoveries_exhausted);
  EXPECT_FALSE(third.spends_budget);
  EXPECT_EQ(third.reason,
            "host_lost: max_recoveries reached (2 infrastructure recoveries made, 2 allowed): the "
            "cluster keeps failing under this run");
  in.failure_class = FailureClass::preempted;
  EXPECT_EQ(decide_restart(in).action, RestartAction::fail);
  // max_recoveries 0: not even one recovery; unset: no bound.
  in.max_recoveries = 0;
  in.recoveries_used = 0;
  EXPECT_EQ(decide_restart(in).action, RestartAction::fail);
  in.max_recoveries.reset();
  in.recoveries_used = 1000;
  EXPECT_EQ(decide_restart(in).action, RestartAction::recover);
  // Restarts are not bounded by it.
  auto error = input(FailureClass::error, 0, 3, {1});
  error.max_recoveries = 0;
  EXPECT_EQ(decide_restart(error).action, RestartAction::restart);
}

RestartInput stalled(StallAction on_stall, int stalls, int limit, int used = 0, int max = 0) {
  RestartInput in = input(FailureClass::stalled, used, max, {}, {});
  in.on_stall = on_stall;
  in.stalls = stalls;
  in.stall_limit = limit;
  return in;
}

// A stall is recovered without spending the budget (even with none left) until the run's
// limit-th stall; on_stall fail ends the run at once.
TEST(RestartPolicyTest, StallsRecoverUntilTheLimitWithoutTheBudget) {
  auto first = decide_restart(stalled(StallAction::restart, 1, 3));
  EXPECT_EQ(first.action, RestartAction::recover) << first.reason;
  EXPECT_FALSE(first.spends_budget);
  EXPECT_EQ(first.reason,
            "stalled: stall 1 of 3 allowed; resumed from the latest checkpoint without spending "
            "the restart budget");
  EXPECT_EQ(decide_restart(stalled(StallAction::restart, 2, 3, 5, 5)).action,
            RestartAction::recover);
  auto third = decide_restart(stalled(StallAction::restart, 3, 3, 0, 10));
  EXPECT_EQ(third.action, RestartAction::fail);
  EXPECT_EQ(third.reason, "stalled: stall 3 of this run, the limit is 3");
  EXPECT_EQ(decide_restart(stalled(StallAction::restart, 1, 1)).action, RestartAction::fail);
  // A nonsense limit counts as 1: the first stall ends the run.
  EXPECT_EQ(decide_restart(stalled(StallAction::restart, 1, 0)).action, RestartAction::fail);
  auto fail = decide_restart(stalled(StallAction::fail, 1, 3, 0, 3));
  EXPECT_EQ(fail.action, RestartAction::fail);
  EXPECT_EQ(fail.reason, "stalled: on_stall is fail");
  EXPECT_FALSE(fail.spends_budget);
  // A stall's recovery is a recovery: max_recoveries bounds it too.
  auto bounded = stalled(StallAction::restart, 1, 3);
  bounded.max_recoveries = 2;
  bounded.recoveries_used = 2;
  auto exhausted = decide_restart(bounded);
  EXPECT_EQ(exhausted.action, RestartAction::fail);
  EXPECT_TRUE(exhausted.recoveries_exhausted);
  bounded.recoveries_used = 1;
  EXPECT_EQ(decide_restart(bounded).action, RestartAction::recover);
  // Exit codes listed for restarts do not make a stall spend the budget.
  auto listed = stalled(StallAction::restart, 1, 3, 0, 3);
  listed.exit_codes = {42};
  listed.restart_on_exit_codes = {42};
  EXPECT_EQ(decide_restart(listed).action, RestartAction::recover);
}

TEST(RestartPolicyTest, StallActionNames) {
  for (StallAction a : {StallAction::alert, StallAction::restart, StallAction::fail})
    EXPECT_EQ(parse_stall_action(to_string(a)), a);
  EXPECT_FALSE(parse_stall_action("Restart").has_value());
  EXPECT_FALSE(parse_stall_action("").has_value());
}

}  // namespace
}  // namespace podium::sched
