#include "backend/sched/run_state.h"

#include <set>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::sched {
namespace {

using ::testing::ElementsAre;

TEST(RunStateTest, NamesRoundTrip) {
  EXPECT_EQ(all_run_states().size(), 8u);
  for (RunState s : all_run_states()) EXPECT_EQ(parse_run_state(to_string(s)), s);
  EXPECT_EQ(all_attempt_states().size(), 6u);
  for (AttemptState s : all_attempt_states()) EXPECT_EQ(parse_attempt_state(to_string(s)), s);
  EXPECT_EQ(to_string(RunState::recovering), "recovering");
  EXPECT_EQ(to_string(AttemptState::pending), "pending");
  EXPECT_FALSE(parse_run_state("Running").has_value());
  EXPECT_FALSE(parse_run_state("").has_value());
  EXPECT_FALSE(parse_attempt_state("recovering").has_value());
}

TEST(RunStateTest, Terminal) {
  std::set<RunState> terminal;
  for (RunState s : all_run_states()) {
    if (is_terminal(s)) terminal.insert(s);
  }
  EXPECT_EQ(terminal,
            (std::set<RunState>{RunState::succeeded, RunState::failed, RunState::cancelled}));
  EXPECT_TRUE(is_terminal(AttemptState::cancelled));
  EXPECT_FALSE(is_terminal(AttemptState::running));
}

// The routes read runs.state as text: a stored name is terminal exactly when its state is, and
// a name that is no state (a typo, another case) is not, so a run is never treated as finished
// by accident.
TEST(RunStateTest, StoredNameIsTerminalExactlyWhenItsStateIs) {
  for (RunState s : all_run_states())
    EXPECT_EQ(is_terminal_run_state(to_string(s)), is_terminal(s)) << to_string(s);
  EXPECT_FALSE(is_terminal_run_state("Succeeded"));
  EXPECT_FALSE(is_terminal_run_state("done"));
  EXPECT_FALSE(is_terminal_run_state(""));
}

// Every pair of run states: exactly the listed edges are legal.
TEST(RunStateTest, RunTransitionMatrix) {
  const std::set<std::pair<RunState, RunState>> legal = {
      {RunState::queued, RunState::starting},      {RunState::queued, RunState::cancelled},
      {RunState::queued, RunState::failed},        {RunState::starting, RunState::running},
      {RunState::starting, RunState::succeeded},   {RunState::starting, RunState::failed},
      {RunState::starting, RunState::recovering},  {RunState::starting, RunState::cancelling},
      {RunState::starting, RunState::queued},      {RunState::running, RunState::succeeded},
      {RunState::running, RunState::failed},       {RunState::running, RunState::recovering},
      {RunState::running, RunState::cancelling},   {RunState::recovering, RunState::starting},
      {RunState::recovering, RunState::failed},    {RunState::recovering, RunState::cancelling},
      {RunState::recovering, RunState::cancelled}, {RunState::cancelling, RunState::cancelled},
      {RunState::cancelling, RunState::succeeded},
  };
  for (RunState from : all_run_states()) {
    for (RunState to : all_run_states()) {
      EXPECT_EQ(can_transition(from, to), legal.count({from, to}) == 1)
          << to_string(from) << " -> " << to_string(to);
    }
  }
}

TEST(RunStateTest, IllegalTransitionsThatTheApiMapsTo409) {
  // Cancel of a finished run.
  EXPECT_FALSE(can_transition(RunState::succeeded, RunState::cancelling));
  EXPECT_FALSE(can_transition(RunState::failed, RunState::cancelled));
  EXPECT_FALSE(can_transition(RunState::cancelled, RunState::cancelling));
  // Resurrection and skipping ahead.
  EXPECT_FALSE(can_transition(RunState::failed, RunState::queued));
  EXPECT_FALSE(can_transition(RunState::queued, RunState::running));
  EXPECT_FALSE(can_transition(RunState::cancelling, RunState::running));
  // Self transitions.
  EXPECT_FALSE(can_transition(RunState::running, RunState::running));
  EXPECT_FALSE(can_transition(AttemptState::running, AttemptState::running));
}

TEST(RunStateTest, AttemptTransitionMatrix) {
  const std::set<std::pair<AttemptState, AttemptState>> legal = {
      {AttemptState::pending, AttemptState::starting},
      {AttemptState::pending, AttemptState::cancelled},
      {AttemptState::pending, AttemptState::failed},
      {AttemptState::starting, AttemptState::running},
      {AttemptState::starting, AttemptState::succeeded},
      {AttemptState::starting, AttemptState::failed},
      {AttemptState::starting, AttemptState::cancelled},
      {AttemptState::running, AttemptState::succeeded},
      {AttemptState::running, AttemptState::failed},
      {AttemptState::running, AttemptState::cancelled},
  };
  for (AttemptState from : all_attempt_states()) {
    for (AttemptState to : all_attempt_states()) {
      EXPECT_EQ(can_transition(from, to), legal.count({from, to}) == 1)
          << to_string(from) << " -> " << to_string(to);
    }
  }
}

TEST(RunStateTest, NextStates) {
  EXPECT_THAT(next_states(RunState::cancelling),
              ElementsAre(RunState::succeeded, RunState::cancelled));
  EXPECT_TRUE(next_states(RunState::failed).empty());
  EXPECT_THAT(next_states(AttemptState::running),
              ElementsAre(AttemptState::succeeded, AttemptState::failed, AttemptState::cancelled));
}

TEST(RunStateTest, ALifeWithARecovery) {
  const std::vector<RunState> path = {RunState::queued,     RunState::starting, RunState::running,
                                      RunState::recovering, RunState::starting, RunState::running,
                                      RunState::cancelling, RunState::cancelled};
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    EXPECT_TRUE(can_transition(path[i], path[i + 1]))
        << to_string(path[i]) << " -> " << to_string(path[i + 1]);
  }
}

}  // namespace
}  // namespace podium::sched
