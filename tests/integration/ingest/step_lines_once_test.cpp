// Rank 0's MaxText step lines stored once, as their metrics rows (migration 0019,
// backend/ingest/step_line_store.h): the log API, its search and its pages give back every line
// as sent, in order; a retried batch stores nothing twice; a step printed twice in one attempt
// keeps both lines; retention clears them with the rest of the run's lines.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/support/hand_agent.h"

namespace podium::it {
namespace {

using nlohmann::json;

// MaxText 0.2.0's step line (docs/maxtext-on-cpu.md), with the glog prefix absl gives it.
std::string step_line(int step, const std::string& loss) {
  return "I1127 05:12:0" + std::to_string(step % 10) +
         ".123456 140234 metric_logger.py:181] completed step: " + std::to_string(step) +
         ", seconds: 0.503, TFLOP/s/device: 12.250, Tokens/s/device: 22237.665, total_weights: "
         "64, loss: " +
         loss;
}

class StepLinesOnce : public OneAttemptTest {
 protected:
  // Every line the log API gives for the run, following its cursor, `limit` per page.
  std::vector<std::string> api_lines(int limit, const std::string& query = "") {
    std::vector<std::string> out;
    std::string cursor;
    for (int page = 0; page < 1000; ++page) {
      std::string path = "/api/v1/runs/" + run_id + "/logs?limit=" + std::to_string(limit) + query;
      if (!cursor.empty()) path += "&cursor=" + cursor;
      auto r = require_status(podium().admin().get(path), 200);
      for (const auto& item : r.json["items"]) out.push_back(item["line"]);
      if (r.json["next_cursor"].is_null()) return out;
      cursor = r.json["next_cursor"];
    }
    ADD_FAILURE() << "the cursor never ended";
    return out;
  }

  std::string text_rows() {
    return podium().db().scalar("SELECT count(*) FROM log_lines WHERE attempt_id = $1", {attempt});
  }
  std::string step_rows() {
    return podium().db().scalar(
        "SELECT count(*) FROM metrics WHERE attempt_id = $1 AND log_seq IS NOT NULL", {attempt});
  }
};

TEST_F(StepLinesOnce, CanonicalStepLinesAreStoredOnceAndReadBackAsSent) {
  const std::vector<std::string> lines = {
      "I1127 05:12:00.000001 140234 train.py:500] Memstats: After params initialized:",
      step_line(0, "6.301"),
      "an ordinary line",
      step_line(1, "6.271"),
      // Not MaxText's format (four decimals): kept as text, its figures still a metrics row.
      "completed step: 2, seconds: 0.500, TFLOP/s/device: 1.000, Tokens/s/device: 2.000, "
      "total_weights: 64, loss: 6.2500",
      step_line(3, "nan"),
      "INFO:absl:completed step: 4, seconds: 2.477, TFLOP/s/device: 0.000, Tokens/s/device: "
      "25.840, total_weights: 64, loss: 6.224",
  };
  auto first = post(0, lines);
  EXPECT_EQ(first["stored"], 7);
  EXPECT_EQ(step_rows(), "4");
  EXPECT_EQ(text_rows(), "3");

  // Every page size reads the same lines, in order, unchanged.
  for (int limit : {1, 2, 3, 500}) EXPECT_EQ(api_lines(limit), lines) << "limit " << limit;
  // The metrics rows hold the figures as before.
  auto m = podium().db().query(
      "SELECT step, step_seconds, tflops_per_device, loss::text AS loss FROM metrics WHERE "
      "attempt_id = $1 ORDER BY step",
      {attempt});
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m.opt_double(0, "step_seconds"), 0.503);
  EXPECT_EQ(m.opt_double(0, "tflops_per_device"), 12.25);
  EXPECT_EQ(m.at(3, "loss"), "NaN");

  // Search finds rebuilt lines as it finds text ones, case-insensitively, across pages.
  EXPECT_EQ(api_lines(500, "&q=LOSS%3A%206.27"), (std::vector<std::string>{lines[3]}));
  EXPECT_EQ(api_lines(1, "&q=metric_logger"),
            (std::vector<std::string>{lines[1], lines[3], lines[5]}));
  EXPECT_EQ(api_lines(2, "&q=completed%20step"),
            (std::vector<std::string>{lines[1], lines[3], lines[4], lines[5], lines[6]}));
  EXPECT_EQ(api_lines(500, "&q=ordinary"), (std::vector<std::string>{lines[2]}));
  EXPECT_EQ(api_lines(500, "&q=loss%3A%20nan"), (std::vector<std::string>{lines[5]}));
  // Filters: rank 1 has none of them; after=3 starts past seq 3.
  EXPECT_TRUE(api_lines(500, "&rank=1").empty());
  EXPECT_EQ(api_lines(500, "&rank=0&after=3"),
            (std::vector<std::string>{lines[4], lines[5], lines[6]}));

  // The same batch again stores nothing, changes nothing.
  EXPECT_EQ(post(0, lines)["stored"], 0);
  EXPECT_EQ(step_rows(), "4");
  EXPECT_EQ(text_rows(), "3");
  EXPECT_EQ(api_lines(500), lines);
}

TEST_F(StepLinesOnce, AStepPrintedTwiceKeepsBothLines) {
  const std::string first = step_line(7, "6.000");
  const std::string again = step_line(7, "5.500");  // same step, later line, other figures
  const std::string other_format =
      "completed step: 7, seconds: 0.5, TFLOP/s/device: 1.0, Tokens/s/device: 2.0, "
      "total_weights: 64, loss: 5.25";
  post(0, {first, "between"});
  post(2, {again});
  EXPECT_EQ(api_lines(500), (std::vector<std::string>{first, "between", again}));
  post(3, {other_format});
  EXPECT_EQ(api_lines(500), (std::vector<std::string>{first, "between", again, other_format}));
  // The step's row holds its latest figures, as before lines were stored once.
  EXPECT_EQ(podium().db().scalar("SELECT loss FROM metrics WHERE attempt_id = $1 AND step = 7",
                                 {attempt}),
            "5.25");
  EXPECT_EQ(step_rows(), "0");  // every line of step 7 is text now
  // Two copies of one step in one batch: both kept.
  post(4, {step_line(8, "4.000"), step_line(8, "3.000")});
  EXPECT_EQ(api_lines(500).size(), 6u);
  EXPECT_EQ(api_lines(500)[5], step_line(8, "3.000"));
}

}  // namespace
}  // namespace podium::it
