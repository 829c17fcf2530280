#include "engine/worker/process_supervisor.h"

#include <signal.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/engine/worker/fakes.h"

namespace podium::worker {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using testing::FakeChild;
using testing::FakeClock;

struct SupervisorFixture : ::testing::Test {
  std::shared_ptr<FakeChild::State> state = std::make_shared<FakeChild::State>();
  FakeChild child{state};
  FakeClock clock;
  ProcessSupervisor supervisor{child, clock, 2000ms};

  std::vector<int> signals() {
    std::lock_guard lock(state->mu);
    return state->signals;
  }
};

TEST_F(SupervisorFixture, ReportsTheExitWithoutSignalling) {
  EXPECT_FALSE(supervisor.tick());
  {
    std::lock_guard lock(state->mu);
    state->exit = ExitStatus{3, std::nullopt};
  }
  const auto exit = supervisor.tick();
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 3);
  EXPECT_TRUE(signals().empty());
}

TEST_F(SupervisorFixture, CancelSendsTermThenKillAfterTheGrace) {
  supervisor.cancel(5000ms);
  EXPECT_FALSE(supervisor.tick());
  EXPECT_THAT(signals(), ElementsAre(SIGTERM));
  clock.advance(4999ms);
  EXPECT_FALSE(supervisor.tick());
  EXPECT_THAT(signals(), ElementsAre(SIGTERM));  // the process ignores SIGTERM: still running
  clock.advance(1ms);
  const auto exit = supervisor.tick();
  EXPECT_THAT(signals(), ElementsAre(SIGTERM, SIGKILL));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGKILL);
  clock.advance(60s);
  supervisor.tick();
  EXPECT_THAT(signals(), ElementsAre(SIGTERM, SIGKILL));  // nothing more once it ended
}

TEST_F(SupervisorFixture, NoKillWhenTheProcessStopsWithinTheGrace) {
  state->exit_on_term = true;
  supervisor.cancel(5000ms);
  supervisor.cancel(1ms);  // a second cancel does not shorten the first one's grace
  const auto exit = supervisor.tick();
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGTERM);
  clock.advance(10s);
  supervisor.tick();
  EXPECT_THAT(signals(), ElementsAre(SIGTERM));
}

TEST_F(SupervisorFixture, ZeroGraceKillsOnTheNextTick) {
  supervisor.cancel(0ms);
  supervisor.tick();
  supervisor.tick();
  EXPECT_THAT(signals(), ElementsAre(SIGTERM, SIGKILL));
}

TEST_F(SupervisorFixture, DescendantsHoldingTheOutputAreKilledAfterTheLinger) {
  {
    std::lock_guard lock(state->mu);
    state->exit = ExitStatus{0, std::nullopt};
  }
  ASSERT_TRUE(supervisor.tick());
  EXPECT_FALSE(supervisor.give_up_on_output());
  clock.advance(1999ms);
  EXPECT_FALSE(supervisor.give_up_on_output());
  EXPECT_TRUE(signals().empty());
  clock.advance(1ms);
  EXPECT_FALSE(supervisor.give_up_on_output());
  EXPECT_THAT(signals(), ElementsAre(SIGKILL));
  clock.advance(1s);
  EXPECT_TRUE(supervisor.give_up_on_output());
}

}  // namespace
}  // namespace podium::worker
