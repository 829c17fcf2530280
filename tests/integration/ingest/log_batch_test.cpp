// A log batch through the agent API (backend/ingest/log_ingest.cpp): lines of any bytes are
// stored as sent (quotes, backslashes, braces, commas, the text NULL, empty lines) or made
// storable (NUL, longer than 64 KiB), and rank 0's step lines become metrics rows with their
// values, a NaN loss kept as NaN and missing figures as NULL; a retried batch stores nothing twice,
// also when it races the first copy of itself (backend/ingest/batch_rows.h).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "backend/db/database.h"
#include "tests/integration/support/hand_agent.h"

namespace podium::it {
namespace {

using nlohmann::json;

class LogBatch : public OneAttemptTest {
 protected:
  std::vector<std::string> stored() {
    auto r = podium().db().query(
        "SELECT line FROM log_lines WHERE attempt_id = $1 AND rank = 0 ORDER BY seq", {attempt});
    std::vector<std::string> out;
    for (size_t i = 0; i < r.size(); ++i) out.push_back(r.at(i, "line"));
    return out;
  }
};

TEST_F(LogBatch, StoresEveryLineAsSent) {
  const std::vector<std::string> lines = {"plain",
                                          "say \"hi\"",
                                          "C:\\path\\to\\file \\\" \\\\",
                                          "{braces}, {\"json\": [1, 2]}",
                                          "a,b,c",
                                          "NULL",
                                          "",
                                          " leading and trailing ",
                                          "tab\there",
                                          "unicode: λ → 日本"};
  EXPECT_EQ(post(0, lines)["stored"], static_cast<int>(lines.size()));
  EXPECT_EQ(stored(), lines);
}

TEST_F(LogBatch, MakesLinesStorable) {
  // A NUL (JSON \u0000) cannot be stored in text: it becomes U+FFFD. (Invalid UTF-8 cannot be
  // sent as JSON by this client; storable_line's handling of it is the same code path.)
  post(0, {std::string("nul\0byte", 8), std::string(70 * 1024, 'x')});
  auto lines = stored();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "nul\xEF\xBF\xBD"
            "byte");
  EXPECT_EQ(lines[1].size(), 64u * 1024);  // cut to kMaxStoredLineBytes
}

TEST_F(LogBatch, StepLinesBecomeMetricsOnceAndRetriesStoreNothingTwice) {
  const std::vector<std::string> lines = {
      "completed step: 0, seconds: 12.5, TFLOP/s/device: 80.25, Tokens/s/device: 4096.125, "
      "total_weights: 65536, loss: 10.875",
      "an ordinary line", "completed step: 1, seconds: 1.0000000000000002, loss: nan",
      "completed step: 2, seconds: 0.1, TFLOP/s/device: 1e-05, Tokens/s/device: 3, "
      "total_weights: 1, loss: 2.5"};
  auto first = post(5, lines);
  EXPECT_EQ(first["stored"], 4);
  EXPECT_EQ(first["next_seq"], 9);
  auto m = podium().db().query(
      "SELECT step, step_seconds, tflops_per_device, tokens_per_second_per_device, "
      "total_weights, loss::text AS loss, extra::text AS extra, rampup FROM metrics WHERE "
      "attempt_id = $1 ORDER BY step",
      {attempt});
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m.opt_double(0, "step_seconds"), 12.5);
  EXPECT_EQ(m.opt_double(0, "tflops_per_device"), 80.25);
  EXPECT_EQ(m.opt_double(0, "tokens_per_second_per_device"), 4096.125);
  EXPECT_EQ(m.opt_double(0, "total_weights"), 65536.0);
  EXPECT_EQ(m.at(0, "loss"), "10.875");
  EXPECT_EQ(m.at(0, "extra"), "{}");
  EXPECT_FALSE(m.boolean(0, "rampup"));
  // Exact doubles; a NaN loss stays NaN; figures the line did not print are NULL.
  EXPECT_EQ(m.opt_double(1, "step_seconds"), 1.0000000000000002);
  EXPECT_EQ(m.at(1, "loss"), "NaN");
  EXPECT_TRUE(m.is_null(1, "tflops_per_device"));
  EXPECT_TRUE(m.is_null(1, "total_weights"));
  EXPECT_EQ(m.opt_double(2, "tflops_per_device"), 1e-05);
  EXPECT_EQ(podium().db().scalar("SELECT last_step FROM runs WHERE id = $1", {run_id}), "2");

  // The same batch again, and one overlapping it: only the new line is stored and parsed.
  EXPECT_EQ(post(5, lines)["stored"], 0);
  auto overlap = post(8, {lines[3], "completed step: 3, seconds: 0.5, loss: 2.0"});
  EXPECT_EQ(overlap["stored"], 1);
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM metrics WHERE attempt_id = $1", {attempt}),
            "4");
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM log_lines WHERE attempt_id = $1", {attempt}),
            "5");  // seqs 5..9
}

// A new batch is written without per-row conflict handling (store_new_batch); a copy of it that
// commits while it is in flight (here: one of its lines, held in an open transaction while the
// batch arrives) makes it wait, fail on the unique index, and run again over what is there:
// every line once, the one stored first as it was.
TEST_F(LogBatch, ABatchRacingACopyOfItselfStoresEachLineOnce) {
  db::Database other(db::PoolOptions{.conninfo = podium().db().url()});
  auto tx = other.begin();
  tx.exec(
      "INSERT INTO log_lines (run_id, attempt_id, attempt_number, rank, seq, line) VALUES ($1, "
      "$2, 1, 0, 3, 'the first copy')",
      {run_id, attempt});
  json answer;
  std::string failure;
  std::thread poster([&] {
    try {
      answer = post(2, {"two", "three", "four"});
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  // Commit once the batch waits on the held line (it cannot see it: uncommitted).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (podium().db().scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                              "current_database() AND wait_event_type = 'Lock'") != "1") {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "the batch never waited on the held line";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  tx.commit();
  poster.join();
  EXPECT_EQ(failure, "");
  EXPECT_EQ(answer["stored"], 2);
  EXPECT_EQ(stored(), (std::vector<std::string>{"two", "the first copy", "four"}));
}

}  // namespace
}  // namespace podium::it
