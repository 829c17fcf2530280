#include "tests/integration/support/test_database.h"

#include <stdexcept>

#include "backend/db/connection.h"
#include "backend/db/conninfo.h"

namespace podium::it {

db::Result exec_sql(const std::string& conninfo, const std::string& sql, const db::Params& params) {
  db::ConnectOptions options;
  options.conninfo = conninfo;
  options.connect_timeout = std::chrono::seconds(10);
  options.application_name = "podium-integration-tests";
  auto c = db::Connection::open(options);
  return c->exec(sql, params, db::Clock::now() + std::chrono::seconds(60));
}

TestDatabase::TestDatabase() : TestDatabase(test_database_url().value_or("")) {}

TestDatabase::TestDatabase(const std::string& server_conninfo) : server_(server_conninfo) {
  if (server_.empty()) throw std::runtime_error("PODIUM_TEST_DATABASE_URL is not set");
  name_ = "podium_it_" + random_hex();
  exec_sql(server_, "CREATE DATABASE " + name_);
  url_ = db::conninfo_with(server_, {{"dbname", name_}});
}

TestDatabase::~TestDatabase() {
  try {
    // FORCE: servers killed by a test may leave sessions behind for a moment.
    exec_sql(server_, "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "could not drop database " << name_ << ": " << e.what();
  }
}

db::Result TestDatabase::query(const std::string& sql, const db::Params& params) const {
  return exec_sql(url_, sql, params);
}

std::string TestDatabase::scalar(const std::string& sql, const db::Params& params) const {
  auto r = query(sql, params);
  if (r.empty() || r.columns() == 0) return "";
  return r.at(0, r.column_name(0));
}

PrivatePostgres::PrivatePostgres() : dir_("podium-it-pg") {
  url_ = script("start");
  if (url_.rfind("postgresql://", 0) != 0)
    throw std::runtime_error("scripts/test-postgres.sh start failed:\n" +
                             file_tail(dir_.path() / "script.log", 20) + log_tail());
}

PrivatePostgres::~PrivatePostgres() {
  script("stop");
}

void PrivatePostgres::pause() {
  script("pause");
}

void PrivatePostgres::resume() {
  auto url = script("resume");
  if (url != url_) ADD_FAILURE() << "resume changed the URL: " << url_ << " -> " << url;
}

std::string PrivatePostgres::log_tail(int lines) const {
  return file_tail(dir_.path() / "pg" / "postgres.log", lines);
}

std::string PrivatePostgres::script(const std::string& command) {
  const std::string line = "PODIUM_TEST_PG_DIR='" + (dir_.path() / "pg").string() + "' '" +
                           (repo_root() / "scripts" / "test-postgres.sh").string() + "' " +
                           command + " 2>>'" + (dir_.path() / "script.log").string() + "'";
  std::string out;
  const int rc = run_shell(line, &out);
  if (rc != 0)
    ADD_FAILURE() << "scripts/test-postgres.sh " << command << " exited with " << rc << ":\n"
                  << file_tail(dir_.path() / "script.log", 20);
  return out;
}

}  // namespace podium::it
