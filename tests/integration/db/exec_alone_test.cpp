// Database::exec_alone: one statement as its own transaction, one round trip.
#include <gtest/gtest.h>

#include "backend/db/database.h"
#include "tests/integration/db/scratch_database.h"

namespace podium::db {
namespace {

using testing::ScratchDatabase;

class ExecAlone : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::test_database_url())
      GTEST_SKIP() << "PODIUM_TEST_DATABASE_URL is not set; start a test server with "
                      "`export PODIUM_TEST_DATABASE_URL=$(scripts/test-postgres.sh start)`";
    scratch_ = std::make_unique<ScratchDatabase>();
    PoolOptions o;
    o.conninfo = scratch_->conninfo();
    o.max_connections = 1;  // every call on the same session
    db_ = std::make_unique<Database>(o);
    db_->exec_alone("CREATE TABLE beats (id int PRIMARY KEY, n int NOT NULL)");
    db_->exec_alone("INSERT INTO beats VALUES (1, 0)");
  }
  void TearDown() override {
    db_.reset();
    scratch_.reset();
  }
  std::unique_ptr<ScratchDatabase> scratch_;
  std::unique_ptr<Database> db_;
};

TEST_F(ExecAlone, AStatementCommitsByItselfAndReturnsItsRows) {
  auto r = db_->exec_alone("UPDATE beats SET n = n + 1 WHERE id = $1::int RETURNING n", {"1"});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r.int64(0, "n"), 1);
  // Committed: a transaction that comes after sees it.
  auto tx = db_->begin(TxMode::read_only);
  EXPECT_EQ(tx.exec("SELECT n FROM beats WHERE id = 1").int64(0, "n"), 1);
}

TEST_F(ExecAlone, ASettingForItsTransactionEndsWithIt) {
  auto r = db_->exec_alone(
      "WITH c AS (SELECT set_config('work_mem', '1234kB', true) AS v) SELECT v FROM c");
  EXPECT_EQ(r.at(0, "v"), "1234kB");
  EXPECT_NE(db_->exec_alone("SELECT current_setting('work_mem') AS v").at(0, "v"), "1234kB");
}

TEST_F(ExecAlone, AFailedStatementWritesNothingAndTheSessionGoesOn) {
  try {
    db_->exec_alone("INSERT INTO beats VALUES ($1::int, 5)", {"1"});
    FAIL() << "a duplicate key was accepted";
  } catch (const DbError& e) {
    EXPECT_EQ(e.kind(), DbError::Kind::unique_violation);
  }
  EXPECT_EQ(db_->exec_alone("SELECT count(*) AS c, max(n) AS n FROM beats").int64(0, "c"), 1);
  EXPECT_EQ(db_->exec_alone("SELECT max(n) AS n FROM beats").int64(0, "n"), 0);
}

}  // namespace
}  // namespace podium::db
