#include "tests/integration/sched/lifecycle/lifecycle_database.h"

#include <atomic>

#include "backend/db/migrations.h"

namespace podium::sched::testing {

namespace {

std::string next_id(const std::string& prefix) {
  static std::atomic<int> n{0};
  return prefix + "_" + std::to_string(++n);
}

}  // namespace

void LifecycleDatabase::SetUp() {
  if (!db::testing::test_database_url())
    GTEST_SKIP() << "PODIUM_TEST_DATABASE_URL is not set; start a test server with "
                    "`export PODIUM_TEST_DATABASE_URL=$(scripts/test-postgres.sh start)`";
  scratch_ = std::make_unique<db::testing::ScratchDatabase>();
  db::PoolOptions o;
  o.conninfo = scratch_->conninfo();
  o.max_connections = 2;
  db_ = std::make_unique<db::Database>(o);
  db::apply_migrations(*db_, db::embedded_migrations());
}

void LifecycleDatabase::TearDown() {
  db_.reset();
  scratch_.reset();
}

std::string LifecycleDatabase::add_run(const std::string& state) {
  const std::string id = next_id("run");
  db_->exec_alone(
      "INSERT INTO runs (id, name, cluster_id, workload, spec, state) VALUES ($1, $1, NULL, "
      "'maxtext', '{}'::jsonb, $2)",
      {id, state});
  return id;
}

std::string LifecycleDatabase::add_attempt(const std::string& run_id, int number,
                                           const std::string& state,
                                           const std::vector<std::string>& rank_states) {
  const std::string id = next_id("att");
  db_->transact([&](db::Transaction& tx) {
    tx.exec(
        "INSERT INTO attempts (id, run_id, number, state, num_slices, world_size, slices, "
        "coordinator_port) VALUES ($1, $2, $3::int, $4, 1, $5::int, '{0}', 0)",
        {id, run_id, std::to_string(number), state, std::to_string(rank_states.size())});
    for (size_t r = 0; r < rank_states.size(); ++r)
      tx.exec(
          "INSERT INTO attempt_hosts (attempt_id, rank, slice, host, gang_slice, command, env, "
          "state) VALUES ($1, $2::int, 0, $2::int, 0, '[]', '{}', $3)",
          {id, std::to_string(r), rank_states[r]});
  });
  return id;
}

std::string LifecycleDatabase::value(const std::string& sql, const db::Params& params) {
  auto r = db_->exec_alone(sql, params);
  return r.empty() ? std::string() : r.at(0, r.column_name(0));
}

bool LifecycleDatabase::is_null(const std::string& sql, const db::Params& params) {
  auto r = db_->exec_alone(sql, params);
  return r.empty() || r.is_null(0, r.column_name(0));
}

}  // namespace podium::sched::testing
