#include "tests/integration/db/scratch_database.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <stdexcept>

#include "backend/db/connection.h"
#include "backend/db/conninfo.h"

namespace podium::db::testing {

std::optional<std::string> test_database_url() {
  const char* url = std::getenv("PODIUM_TEST_DATABASE_URL");
  if (url == nullptr || *url == '\0') return std::nullopt;
  return std::string(url);
}

void admin_exec(const std::string& conninfo, const std::string& sql) {
  ConnectOptions options;
  options.conninfo = conninfo;
  options.connect_timeout = std::chrono::seconds(10);
  options.application_name = "podium-tests";
  std::unique_ptr<Connection> c = Connection::open(options);
  c->exec(sql, {}, Clock::now() + std::chrono::seconds(60));
}

ScratchDatabase::ScratchDatabase() : ScratchDatabase(test_database_url().value_or("")) {}

ScratchDatabase::ScratchDatabase(const std::string& server_conninfo) : server_(server_conninfo) {
  if (server_.empty()) throw std::runtime_error("PODIUM_TEST_DATABASE_URL is not set");
  std::random_device rd;
  std::uniform_int_distribution<uint64_t> pick;
  char suffix[20];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(pick(rd)));
  name_ = std::string("podium_t_") + suffix;
  admin_exec(server_, "CREATE DATABASE " + name_);
  conninfo_ = conninfo_with(server_, {{"dbname", name_}});
}

ScratchDatabase::~ScratchDatabase() {
  try {
    // FORCE: a test that failed midway may still hold connections (PostgreSQL 13+).
    admin_exec(server_, "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "could not drop " << name_ << ": " << e.what();
  }
}

std::filesystem::path repo_root() {
  if (const char* root = std::getenv("PODIUM_ROOT"); root != nullptr && *root != '\0') {
    return root;
  }
  // The build names it: __FILE__ is relative under ccache's base directory.
  return PODIUM_SOURCE_DIR;
}

TempDir::TempDir(const std::string& prefix) {
  std::string templ = "/tmp/" + prefix + "-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  ::chmod(templ.c_str(), 0755);
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace podium::db::testing
