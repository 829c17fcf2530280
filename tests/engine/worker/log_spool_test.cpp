#include "engine/worker/log_spool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/engine/worker/fakes.h"
#include "tests/engine/worker/temp_dir.h"

namespace podium::worker {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using testing::FakeClock;
using testing::TempDir;

struct SpoolFixture : ::testing::Test {
  TempDir dir;
  FakeClock clock;
  std::unique_ptr<SpoolBudget> budget = std::make_unique<SpoolBudget>(1 << 20);

  std::unique_ptr<LogSpool> make(SpoolOptions o = {}) {
    return std::make_unique<LogSpool>(dir.path() / "logs/att_1/rank-0.log", dir.path() / "spool",
                                      "att_1.rank-0", *budget, clock, o);
  }
};

TEST_F(SpoolFixture, NumbersLinesAndHandsThemOutInOrder) {
  auto spool = make();
  for (const char* l : {"a", "b", "c"}) ASSERT_TRUE(spool->try_append(l));
  auto batch = spool->peek_batch(2);
  EXPECT_EQ(batch.seq, 0u);
  EXPECT_THAT(batch.lines, ElementsAre("a", "b"));
  spool->ack(batch);
  ASSERT_TRUE(spool->try_append("d"));
  batch = spool->peek_batch(500);
  EXPECT_EQ(batch.seq, 2u);
  EXPECT_THAT(batch.lines, ElementsAre("c", "d"));
  spool->ack(batch);
  EXPECT_EQ(spool->acked_seq(), 4u);
  EXPECT_TRUE(spool->peek_batch(500).lines.empty());
}

TEST_F(SpoolFixture, AFailedBatchIsOfferedAgainWithTheSameSeq) {
  auto spool = make();
  ASSERT_TRUE(spool->try_append("one"));
  ASSERT_TRUE(spool->try_append("two"));
  const auto first = spool->peek_batch(500);
  // The upload failed: no ack. More lines arrive meanwhile.
  ASSERT_TRUE(spool->try_append("three"));
  const auto retry = spool->peek_batch(500);
  EXPECT_EQ(retry.seq, 0u);
  EXPECT_THAT(retry.lines, ElementsAre("one", "two", "three"));
  // A stale ack (of an older peek with another seq) changes nothing.
  spool->ack(retry);
  LogBatch stale = first;
  spool->ack(stale);
  EXPECT_EQ(spool->acked_seq(), 3u);
}

TEST_F(SpoolFixture, BatchIsDueAtFiveHundredLinesOrAfterOneSecondOrWhenClosed) {
  auto spool = make();
  EXPECT_FALSE(spool->batch_due(clock.now()));
  ASSERT_TRUE(spool->try_append("x"));
  EXPECT_FALSE(spool->batch_due(clock.now()));
  clock.advance(999ms);
  EXPECT_FALSE(spool->batch_due(clock.now()));
  clock.advance(1ms);
  EXPECT_TRUE(spool->batch_due(clock.now()));
  spool->ack(spool->peek_batch(500));

  for (int i = 0; i < 499; ++i) ASSERT_TRUE(spool->try_append("l"));
  EXPECT_FALSE(spool->batch_due(clock.now()));
  ASSERT_TRUE(spool->try_append("l"));
  EXPECT_TRUE(spool->batch_due(clock.now()));
  spool->ack(spool->peek_batch(500));

  ASSERT_TRUE(spool->try_append("last"));
  EXPECT_FALSE(spool->batch_due(clock.now()));
  spool->close();
  EXPECT_TRUE(spool->batch_due(clock.now()));
  EXPECT_FALSE(spool->drained());
  spool->ack(spool->peek_batch(500));
  EXPECT_TRUE(spool->drained());
}

TEST_F(SpoolFixture, BoundRefusesLinesUntilAcknowledged) {
  budget = std::make_unique<SpoolBudget>(100);
  auto spool = make();
  const std::string line(29, 'z');  // 30 bytes with its newline
  ASSERT_TRUE(spool->try_append(line));
  ASSERT_TRUE(spool->try_append(line));
  ASSERT_TRUE(spool->try_append(line));
  EXPECT_FALSE(spool->try_append(line));  // 120 > 100: backpressure, nothing numbered
  EXPECT_EQ(spool->next_seq(), 3u);
  EXPECT_EQ(budget->used(), 90u);
  spool->ack(spool->peek_batch(1));
  EXPECT_EQ(budget->used(), 60u);
  EXPECT_TRUE(spool->try_append(line));
  EXPECT_EQ(spool->next_seq(), 4u);
}

TEST_F(SpoolFixture, AnEmptyBudgetTakesALineLargerThanTheBound) {
  budget = std::make_unique<SpoolBudget>(10);
  auto spool = make();
  EXPECT_TRUE(spool->try_append(std::string(50, 'b')));
  EXPECT_FALSE(spool->try_append("c"));
}

TEST_F(SpoolFixture, SegmentsRotateAndAreDeletedOnceAcknowledged) {
  SpoolOptions o;
  o.segment_bytes = 20;
  auto spool = make(o);
  std::vector<std::string> expected;
  for (int i = 0; i < 10; ++i) {
    expected.push_back("line number " + std::to_string(i));
    ASSERT_TRUE(spool->try_append(expected.back()));
  }
  EXPECT_EQ(spool->segment_files().size(), 5u);  // two 14-byte lines pass 20 bytes
  for (const auto& f : spool->segment_files()) EXPECT_TRUE(std::filesystem::exists(f));
  const auto first_files = spool->segment_files();

  auto batch = spool->peek_batch(4);
  EXPECT_THAT(batch.lines, ElementsAre(expected[0], expected[1], expected[2], expected[3]));
  spool->ack(batch);
  EXPECT_FALSE(std::filesystem::exists(first_files[0]));
  EXPECT_FALSE(std::filesystem::exists(first_files[1]));
  EXPECT_TRUE(std::filesystem::exists(first_files[2]));

  spool->close();
  batch = spool->peek_batch(500);
  EXPECT_EQ(batch.seq, 4u);
  EXPECT_EQ(batch.lines.size(), 6u);
  spool->ack(batch);
  EXPECT_TRUE(spool->drained());
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "spool"));
  // The local copy keeps every line, one per line, as uploaded.
  EXPECT_EQ(testing::read_lines(dir.path() / "logs/att_1/rank-0.log"), expected);
}

TEST_F(SpoolFixture, BatchesStayWithinTheByteLimit) {
  SpoolOptions o;
  o.batch_bytes = 25;
  auto spool = make(o);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(spool->try_append("0123456789"));  // 11 bytes each
  EXPECT_EQ(spool->peek_batch(500).lines.size(), 2u);
  o.batch_bytes = 5;
  auto tiny = std::make_unique<LogSpool>(dir.path() / "logs/att_2/rank-0.log", dir.path() / "spool",
                                         "att_2.rank-0", *budget, clock, o);
  ASSERT_TRUE(tiny->try_append("0123456789"));
  EXPECT_EQ(tiny->peek_batch(500).lines.size(), 1u);  // never less than one line
}

}  // namespace
}  // namespace podium::worker
