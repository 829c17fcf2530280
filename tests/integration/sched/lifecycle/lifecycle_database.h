#pragma once
// A scratch database with Podium's schema for the lifecycle writer's tests
// (backend/sched/lifecycle/), and the few rows they start from: a run (no cluster: the lifecycle
// does not read it) and an attempt with its ranks, written as plain rows so that what is tested
// is only the writer's part.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backend/db/database.h"
#include "tests/integration/db/scratch_database.h"

namespace podium::sched::testing {

class LifecycleDatabase : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A run in `state` with spec {}; returns its id.
  std::string add_run(const std::string& state);
  // An unfinished attempt of the run in `state` with one rank per entry of rank_states.
  std::string add_attempt(const std::string& run_id, int number, const std::string& state,
                          const std::vector<std::string>& rank_states);
  // One column of one row, as text ("" for NULL).
  std::string value(const std::string& sql, const db::Params& params = {});
  bool is_null(const std::string& sql, const db::Params& params = {});

  std::unique_ptr<db::testing::ScratchDatabase> scratch_;
  std::unique_ptr<db::Database> db_;
};

}  // namespace podium::sched::testing
