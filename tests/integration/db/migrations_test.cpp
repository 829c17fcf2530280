// Migrations runner: file naming, ordering, idempotence, refusal of newer schemas, atomicity,
// and two servers migrating one empty database at the same time.
#include "backend/db/migrations.h"

#include <gtest/gtest.h>

#include <barrier>
#include <fstream>
#include <thread>

#include "tests/integration/db/scratch_database.h"

namespace podium::db {
namespace {

using testing::ScratchDatabase;

std::vector<Migration> three() {
  return migrations_from_files({
      {"0002_add_column.sql", "ALTER TABLE widgets ADD COLUMN color text;"},
      {"0001_create.sql",
       "CREATE TABLE widgets (id serial PRIMARY KEY, name text NOT NULL);\n"
       "CREATE INDEX widgets_name ON widgets (name);"},
      {"0003_seed.sql", "INSERT INTO widgets (name, color) VALUES ('gear', 'red; blue');"},
  });
}

int64_t scalar(Database& db, const std::string& sql) {
  auto tx = db.begin(TxMode::read_only);
  return tx.exec(sql).int64(0, "n");
}

bool table_exists(Database& db, const std::string& name) {
  auto tx = db.begin(TxMode::read_only);
  return tx.exec("SELECT to_regclass($1) IS NOT NULL AS e", {name}).boolean(0, "e");
}

TEST(DbMigrationFiles, NamesFollowThePattern) {
  EXPECT_EQ(parse_migration_file_name("0001_init.sql"), std::make_pair(1, std::string("init")));
  EXPECT_EQ(parse_migration_file_name("0042_add-runs_index.sql"),
            std::make_pair(42, std::string("add-runs_index")));
  EXPECT_EQ(parse_migration_file_name("12_x.sql"), std::make_pair(12, std::string("x")));
  for (const char* bad : {"init.sql", "0001.sql", "0001_.sql", "_init.sql", "0000_zero.sql",
                          "0001_in it.sql", "0001_init.SQL", "0001_init.sql.bak", "x1_a.sql"}) {
    EXPECT_EQ(parse_migration_file_name(bad), std::nullopt) << bad;
  }
}

TEST(DbMigrationFiles, SortedValidatedAndStrict) {
  auto ms = three();
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_EQ(ms[0].version, 1);
  EXPECT_EQ(ms[0].name, "create");
  EXPECT_EQ(ms[2].version, 3);
  // Other files are ignored; misnamed .sql files and duplicate versions are errors.
  EXPECT_EQ(migrations_from_files({{"README.md", "x"}, {".0001_x.sql", "x"}}).size(), 0u);
  EXPECT_THROW(migrations_from_files({{"create.sql", "x"}}), MigrationError);
  EXPECT_THROW(migrations_from_files({{"0001_a.sql", "x"}, {"001_b.sql", "y"}}), MigrationError);
}

TEST(DbMigrationFiles, LoadsADirectory) {
  testing::TempDir dir("podium-migrations");
  std::ofstream(dir.path() / "0002_b.sql") << "SELECT 2;";
  std::ofstream(dir.path() / "0001_a.sql") << "SELECT 1;";
  std::ofstream(dir.path() / "notes.txt") << "ignored";
  auto ms = load_migrations(dir.path());
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].sql, "SELECT 1;");
  EXPECT_EQ(ms[1].name, "b");
  EXPECT_THROW(load_migrations(dir.path() / "missing"), MigrationError);
}

TEST(DbMigrationFiles, EmbeddedSetIsTheRepositoryDirectory) {
  const auto embedded = embedded_migrations();
  const auto on_disk = load_migrations(testing::repo_root() / "migrations");
  ASSERT_EQ(embedded.size(), on_disk.size())
      << "rebuild: the embedded migrations are older than migrations/";
  for (size_t i = 0; i < embedded.size(); ++i) {
    EXPECT_EQ(embedded[i].version, on_disk[i].version);
    EXPECT_EQ(embedded[i].name, on_disk[i].name);
    EXPECT_EQ(embedded[i].sql, on_disk[i].sql) << embedded[i].name;
  }
}

class DbMigrations : public ::testing::Test {
 protected:
  void SetUp() override {
    PODIUM_REQUIRE_TEST_DATABASE();
    scratch_ = std::make_unique<ScratchDatabase>();
    db_ = std::make_unique<Database>(PoolOptions{.conninfo = scratch_->conninfo()});
  }
  void TearDown() override {
    db_.reset();
    scratch_.reset();
  }
  std::unique_ptr<ScratchDatabase> scratch_;
  std::unique_ptr<Database> db_;
};

TEST_F(DbMigrations, AppliesInOrderOnceAndRecordsEach) {
  MigrationOutcome first = apply_migrations(*db_, three());
  EXPECT_EQ(first.previous_version, 0);
  EXPECT_EQ(first.current_version, 3);
  EXPECT_EQ(first.applied, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(scalar(*db_, "SELECT count(*) AS n FROM widgets WHERE color = 'red; blue'"), 1);
  {
    auto tx = db_->begin(TxMode::read_only);
    auto r = tx.exec("SELECT version, name, applied_at FROM schema_migrations ORDER BY version");
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r.at(1, "name"), "add_column");
    EXPECT_FALSE(r.is_null(2, "applied_at"));
  }
  MigrationOutcome second = apply_migrations(*db_, three());
  EXPECT_TRUE(second.applied.empty());
  EXPECT_EQ(second.previous_version, 3);
  EXPECT_EQ(scalar(*db_, "SELECT count(*) AS n FROM widgets"), 1);
}

TEST_F(DbMigrations, AppliesOnlyWhatIsMissing) {
  auto all = three();
  apply_migrations(*db_, {all[0], all[1]});
  MigrationOutcome rest = apply_migrations(*db_, all);
  EXPECT_EQ(rest.previous_version, 2);
  EXPECT_EQ(rest.applied, (std::vector<int>{3}));
}

TEST_F(DbMigrations, RefusesADatabaseNewerThanTheBinary) {
  auto all = three();
  apply_migrations(*db_, all);
  try {
    apply_migrations(*db_, {all[0], all[1]});
    FAIL() << "an older binary migrated a newer database";
  } catch (const MigrationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("version 3"), std::string::npos) << what;
    EXPECT_NE(what.find("up to 2"), std::string::npos) << what;
  }
}

TEST_F(DbMigrations, AFailingMigrationKeepsNothing) {
  auto ms = migrations_from_files({
      {"0001_ok.sql", "CREATE TABLE kept_if_all_ok (id int);"},
      {"0002_broken.sql", "CREATE TABLE fine (id int); SELEC typo;"},
  });
  try {
    apply_migrations(*db_, ms);
    FAIL() << "a broken migration was applied";
  } catch (const MigrationError& e) {
    EXPECT_NE(std::string(e.what()).find("0002_broken"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(table_exists(*db_, "kept_if_all_ok"));
  EXPECT_FALSE(table_exists(*db_, "schema_migrations"));
  // Fixed, it applies from scratch.
  ms[1].sql = "CREATE TABLE fine (id int);";
  EXPECT_EQ(apply_migrations(*db_, ms).applied, (std::vector<int>{1, 2}));
}

TEST_F(DbMigrations, TwoServersMigratingAnEmptyDatabaseDoNotRace) {
  // Without the advisory lock both would run 0001 (plain CREATE TABLE, no IF NOT EXISTS) and
  // one would fail; the sleep widens the window.
  auto ms = migrations_from_files({
      {"0001_slow.sql", "CREATE TABLE racer (id int); SELECT pg_sleep(0.3);"},
      {"0002_more.sql", "CREATE TABLE racer2 (id int);"},
  });
  for (int round = 0; round < 3; ++round) {
    ScratchDatabase fresh;
    Database a(PoolOptions{.conninfo = fresh.conninfo()});
    Database b(PoolOptions{.conninfo = fresh.conninfo()});
    std::barrier sync(2);
    MigrationOutcome ra, rb;
    std::string error_a, error_b;
    auto run = [&](Database& db, MigrationOutcome& out, std::string& error) {
      sync.arrive_and_wait();
      try {
        out = apply_migrations(db, ms);
      } catch (const std::exception& e) {
        error = e.what();
      }
    };
    std::thread ta(run, std::ref(a), std::ref(ra), std::ref(error_a));
    std::thread tb(run, std::ref(b), std::ref(rb), std::ref(error_b));
    ta.join();
    tb.join();
    EXPECT_EQ(error_a, "");
    EXPECT_EQ(error_b, "");
    // Exactly one of them applied both; the other found everything done.
    EXPECT_EQ(ra.applied.size() + rb.applied.size(), 2u);
    EXPECT_TRUE(ra.applied.empty() || rb.applied.empty());
    EXPECT_EQ(ra.current_version, 2);
    EXPECT_EQ(rb.current_version, 2);
    EXPECT_EQ(scalar(a, "SELECT count(*) AS n FROM schema_migrations"), 2);
  }
}

TEST_F(DbMigrations, RepositoryMigrationsApplyToAnEmptyDatabase) {
  const auto ms = embedded_migrations();
  MigrationOutcome out = apply_migrations(*db_, ms);
  EXPECT_EQ(out.applied.size(), ms.size());
  EXPECT_TRUE(apply_migrations(*db_, ms).applied.empty());
}

}  // namespace
}  // namespace podium::db
