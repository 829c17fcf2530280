#pragma once
// Databases for integration tests.
//
// TestDatabase: a fresh, empty database on the PostgreSQL that PODIUM_TEST_DATABASE_URL names
// (CREATE DATABASE podium_it_<random>), dropped WITH (FORCE) by the destructor. Each test that
// starts a podium-server gives it its own TestDatabase, so tests run in parallel processes.
//
// PrivatePostgres: a whole PostgreSQL cluster of the test's own (scripts/test-postgres.sh with a
// private PODIUM_TEST_PG_DIR), for tests that stop and start the database server: pausing the
// shared one would break every test running next to it.

#include <filesystem>
#include <string>
#include <vector>

#include "backend/db/database.h"
#include "tests/integration/support/env.h"

namespace podium::it {

// One statement outside any transaction (CREATE/DROP DATABASE need that); throws db::DbError.
db::Result exec_sql(const std::string& conninfo, const std::string& sql,
                    const db::Params& params = {});

class TestDatabase {
 public:
  // On the server of PODIUM_TEST_DATABASE_URL; throws when it is unset.
  TestDatabase();
  // On the server that `server_conninfo` reaches (any database on it).
  explicit TestDatabase(const std::string& server_conninfo);
  ~TestDatabase();
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& name() const { return name_; }
  // libpq connection string of this database (what --database-url takes).
  const std::string& url() const { return url_; }

  // Runs one statement on this database (autocommit) and returns the result.
  db::Result query(const std::string& sql, const db::Params& params = {}) const;
  // The first column of the first row, "" when there is no row.
  std::string scalar(const std::string& sql, const db::Params& params = {}) const;

 private:
  std::string server_;
  std::string name_;
  std::string url_;
};

class PrivatePostgres {
 public:
  // initdb (a few seconds) and start on a free port. Throws when the script fails.
  PrivatePostgres();
  ~PrivatePostgres();  // stop and delete the cluster
  PrivatePostgres(const PrivatePostgres&) = delete;
  PrivatePostgres& operator=(const PrivatePostgres&) = delete;

  // postgresql://postgres@127.0.0.1:PORT/podium_test
  const std::string& url() const { return url_; }
  // Stop the server, keep data and port (the database is "down").
  void pause();
  // Start it again on the same port.
  void resume();
  const std::filesystem::path& dir() const { return dir_.path(); }
  std::string log_tail(int lines = 30) const;

 private:
  std::string script(const std::string& command);
  TempDir dir_;
  std::string url_;
};

}  // namespace podium::it
