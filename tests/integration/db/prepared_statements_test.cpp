// Statements are prepared once per connection and reused by text: results stay right across
// parameters, rollbacks, schema changes, syntax errors and more distinct statements than the
// per-connection bound.
#include <gtest/gtest.h>

#include <string>

#include "backend/db/connection.h"
#include "backend/db/database.h"
#include "tests/integration/db/scratch_database.h"

namespace podium::db {
namespace {

using testing::ScratchDatabase;

class PreparedStatements : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::test_database_url())
      GTEST_SKIP() << "PODIUM_TEST_DATABASE_URL is not set; start a test server with "
                      "`export PODIUM_TEST_DATABASE_URL=$(scripts/test-postgres.sh start)`";
    scratch_ = std::make_unique<ScratchDatabase>();
    PoolOptions o;
    o.conninfo = scratch_->conninfo();
    o.max_connections = 1;  // every transaction on the same session
    db_ = std::make_unique<Database>(o);
    auto tx = db_->begin();
    tx.exec("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)");
    tx.exec("INSERT INTO items VALUES (1, 'one'), (2, 'two'), (3, 'three')");
    tx.commit();
  }
  void TearDown() override {
    db_.reset();
    scratch_.reset();
  }
  // Prepared statements of the pool's one session whose text is `sql`.
  int64_t prepared_with_text(const std::string& sql) {
    auto tx = db_->begin(TxMode::read_only);
    return tx.exec("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = $1", {sql})
        .int64(0, "n");
  }

  std::unique_ptr<ScratchDatabase> scratch_;
  std::unique_ptr<Database> db_;
};

TEST_F(PreparedStatements, OnePreparedFormServesEveryCallAndOutlivesARollback) {
  const std::string sql = "SELECT name FROM items WHERE id = $1::int";
  {
    auto tx = db_->begin();
    EXPECT_EQ(tx.exec(sql, {"1"}).at(0, "name"), "one");
    tx.exec("UPDATE items SET name = 'uno' WHERE id = $1::int", {"1"});
    EXPECT_EQ(tx.exec(sql, {"1"}).at(0, "name"), "uno");
  }  // rolled back
  for (const auto& [id, name] : {std::pair{"1", "one"}, {"2", "two"}, {"3", "three"}}) {
    auto tx = db_->begin(TxMode::read_only);
    EXPECT_EQ(tx.exec(sql, {id}).at(0, "name"), name);
  }
  EXPECT_EQ(prepared_with_text(sql), 1);
  EXPECT_EQ(prepared_with_text("BEGIN"), 0);  // utility statements go unprepared
}

TEST_F(PreparedStatements, AColumnAddedUnderAPreparedStatementFailsItOnceThenItIsPreparedAgain) {
  const std::string sql = "SELECT * FROM items WHERE id = $1::int";
  db_->transact([&](Transaction& tx) { EXPECT_EQ(tx.exec(sql, {"2"}).columns(), 2u); });
  db_->transact([](Transaction& tx) { tx.exec("ALTER TABLE items ADD COLUMN note text"); });
  try {
    db_->transact([&](Transaction& tx) { tx.exec(sql, {"2"}); });
  } catch (const DbError& e) {
    EXPECT_EQ(e.sqlstate(), "0A000") << e.what();  // PostgreSQL's "must not change result type"
  }
  db_->transact([&](Transaction& tx) { EXPECT_EQ(tx.exec(sql, {"2"}).columns(), 3u); });
}

TEST_F(PreparedStatements, AStatementThatDoesNotParseFailsAndTheSessionGoesOn) {
  {
    auto tx = db_->begin();
    EXPECT_THROW(tx.exec("SELECT nme FROM items WHERE id = $1::int", {"1"}), DbError);
  }
  auto tx = db_->begin();
  EXPECT_EQ(tx.exec("SELECT name FROM items WHERE id = $1::int", {"3"}).at(0, "name"), "three");
  tx.commit();
}

TEST_F(PreparedStatements, MoreDistinctStatementsThanTheBoundAllRunAndTheSessionKeepsTheBound) {
  const size_t n = Connection::kMaxPrepared + 25;
  for (size_t i = 0; i < n; ++i) {
    auto tx = db_->begin(TxMode::read_only);
    // Distinct texts (as a report's optional filters make them), all answered right.
    const std::string sql =
        "SELECT count(*) + " + std::to_string(i) + " AS n FROM items WHERE id <= $1::int";
    ASSERT_EQ(tx.exec(sql, {"2"}).int64(0, "n"), static_cast<int64_t>(2 + i));
  }
  auto tx = db_->begin(TxMode::read_only);
  EXPECT_LE(tx.exec("SELECT count(*) AS n FROM pg_prepared_statements").int64(0, "n"),
            static_cast<int64_t>(Connection::kMaxPrepared));
}

}  // namespace
}  // namespace podium::db
