// log_lines is the largest table (hundreds of millions of rows in a year of a team's runs): each
// query shape of the routes must reach its rows through an index, and the table must not carry
// indexes no query reads, which every ingested line would pay for (migration 0012).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "backend/db/database.h"
#include "backend/db/migrations.h"
#include "tests/integration/db/scratch_database.h"

namespace podium::db {
namespace {

using testing::ScratchDatabase;

class DbLogLinesIndexes : public ::testing::Test {
 protected:
  void SetUp() override {
    PODIUM_REQUIRE_TEST_DATABASE();
    scratch_ = std::make_unique<ScratchDatabase>();
    db_ = std::make_unique<Database>(PoolOptions{.conninfo = scratch_->conninfo()});
    apply_migrations(*db_, embedded_migrations());
    // 100 runs of 500 lines each, two ranks: one run's lines are a small part of the table, as
    // in any team's history, so the planner prefers an index wherever one fits.
    auto tx = db_->begin();
    tx.exec(
        "INSERT INTO runs (id, name, workload, spec, state) SELECT 'r' || g, 'run ' || g, "
        "'maxtext', '{}', 'succeeded' FROM generate_series(1, 100) g");
    tx.exec(
        "INSERT INTO log_lines (run_id, attempt_id, attempt_number, rank, seq, line) "
        "SELECT 'r' || g, 'a' || g, 1, s % 2, s / 2, 'line ' || s "
        "FROM generate_series(1, 100) g, generate_series(0, 499) s");
    // Rank 0's step lines stored once (migration 0019): 500 steps per run, as metrics rows.
    tx.exec(
        "INSERT INTO metrics (run_id, attempt_id, attempt_number, step, loss, log_seq, "
        "log_prefix, log_id) SELECT 'r' || g, 'a' || g, 1, s, 1.0, 1000 + s, '', "
        "nextval('log_lines_id_seq') FROM generate_series(1, 100) g, generate_series(0, 499) s");
    tx.exec("ANALYZE log_lines");
    tx.exec("ANALYZE metrics");
    tx.commit();
  }
  void TearDown() override {
    db_.reset();
    scratch_.reset();
  }

  std::string plan_of(const std::string& sql) {
    auto tx = db_->begin(TxMode::read_only);
    auto r = tx.exec("EXPLAIN " + sql);
    std::string plan;
    for (size_t i = 0; i < r.size(); ++i) plan += r.at(i, "QUERY PLAN") + "\n";
    return plan;
  }

  std::unique_ptr<ScratchDatabase> scratch_;
  std::unique_ptr<Database> db_;
};

// The shapes of backend/api/run_log_routes.cpp (a page, a live follower's batch) and
// backend/ingest/log_retention.cpp (a batch of a finished run's lines).
TEST_F(DbLogLinesIndexes, EachQueryShapeReachesItsRowsThroughAnIndex) {
  const std::string page = plan_of(
      "SELECT * FROM log_lines l WHERE l.run_id = 'r3' AND (l.attempt_number, l.rank, l.seq) > "
      "(1, 0, 10) ORDER BY l.attempt_number, l.rank, l.seq LIMIT 501");
  EXPECT_NE(page.find("log_lines_run_order_idx"), std::string::npos) << page;
  const std::string follow = plan_of(
      "SELECT * FROM log_lines l WHERE l.attempt_id = 'a3' AND l.rank = 1 AND l.seq > 100 "
      "ORDER BY l.seq LIMIT 500");
  EXPECT_NE(follow.find("log_lines_pkey"), std::string::npos) << follow;
  const std::string retention = plan_of("SELECT ctid FROM log_lines WHERE run_id = 'r5' LIMIT 100");
  EXPECT_EQ(retention.find("Seq Scan"), std::string::npos) << retention;
}

// The same shapes for the step lines stored as metrics rows (backend/api/run_log_routes.cpp's
// step_rows and live follow, log_retention.cpp's clearing batch).
TEST_F(DbLogLinesIndexes, StepLinesStoredOnceAreReachedThroughTheirIndex) {
  const std::string page = plan_of(
      "SELECT * FROM metrics m WHERE m.run_id = 'r3' AND m.log_seq IS NOT NULL AND "
      "(m.attempt_number, m.log_seq) > (1, 1010) ORDER BY m.attempt_number, m.log_seq LIMIT 501");
  EXPECT_NE(page.find("metrics_log_order_idx"), std::string::npos) << page;
  const std::string follow = plan_of(
      "SELECT * FROM metrics m WHERE m.run_id = 'r3' AND m.attempt_number = 1 AND m.log_seq IS "
      "NOT NULL AND m.log_seq > 1100 ORDER BY m.log_seq LIMIT 500");
  EXPECT_NE(follow.find("metrics_log_order_idx"), std::string::npos) << follow;
  const std::string retention =
      plan_of("SELECT ctid FROM metrics WHERE run_id = 'r5' AND log_seq IS NOT NULL LIMIT 100");
  EXPECT_EQ(retention.find("Seq Scan"), std::string::npos) << retention;
}

TEST_F(DbLogLinesIndexes, CarriesOnlyTheIndexesItsQueriesRead) {
  auto tx = db_->begin(TxMode::read_only);
  auto r = tx.exec("SELECT indexname FROM pg_indexes WHERE tablename = 'log_lines'");
  std::set<std::string> names;
  for (size_t i = 0; i < r.size(); ++i) names.insert(r.at(i, "indexname"));
  EXPECT_EQ(names, (std::set<std::string>{"log_lines_pkey", "log_lines_run_order_idx"}));
}

}  // namespace
}  // namespace podium::db
