#pragma once
// Where the integration tests find things: the test PostgreSQL, the built binaries, the
// repository. Shared by every test under tests/integration (not only the REST API's).
//
//   TEST(Foo, Bar) {
//     PODIUM_IT_REQUIRE_DATABASE();          // GTEST_SKIP with a clear message when unset
//     podium::it::TestDatabase db;            // support/test_database.h
//     podium::it::ServerProcess server({.database_url = db.url()});   //
//     tests/support/server_process.h
//     ...
//   }

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

namespace podium::it {

// PODIUM_TEST_DATABASE_URL (a libpq URL of a PostgreSQL the tests may create databases on),
// nullopt when unset or empty.
std::optional<std::string> test_database_url();

// $PODIUM_BIN_DIR (ctest sets it to <build>/bin).
std::filesystem::path bin_dir();
// $PODIUM_BIN_DIR/<name>; the test fails (not skips) later when it does not exist.
std::filesystem::path binary(const std::string& name);

// $PODIUM_ROOT, else derived from this file's path.
std::filesystem::path repo_root();

// PostgreSQL 15 server binaries ($PODIUM_PG_BIN_DIR or /usr/lib/postgresql/15/bin).
std::filesystem::path postgres_bin_dir();
bool have_postgres_binaries();

// 16 random hex digits (names of databases, users, clusters).
std::string random_hex();
// A name that is unique within the run: prefix + "-" + 8 hex digits (valid cluster name when
// prefix is lower-case).
std::string unique_name(const std::string& prefix);

// A fresh directory under /tmp, mode 0755 (the postgres account must be able to enter it when
// the tests run as root), removed with its contents by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "podium-it");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Keep the directory (e.g. to look at logs after a failure).
  void keep() { keep_ = true; }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

// The last `lines` lines of a text file, "" when unreadable.
std::string file_tail(const std::filesystem::path& file, int lines);

// Runs a shell command line, returns its exit status (-1 when it could not run) and its stdout
// (trailing newlines removed) in *out when given.
int run_shell(const std::string& command_line, std::string* out = nullptr);

}  // namespace podium::it

#define PODIUM_IT_REQUIRE_DATABASE()                                                         \
  do {                                                                                       \
    if (!::podium::it::test_database_url()) {                                                \
      GTEST_SKIP() << "PODIUM_TEST_DATABASE_URL is not set; start a test server with "       \
                      "`export PODIUM_TEST_DATABASE_URL=$(scripts/test-postgres.sh start)` " \
                      "(scripts/test.sh does this)";                                         \
    }                                                                                        \
  } while (0)

#define PODIUM_IT_REQUIRE_POSTGRES_BINARIES()                                                  \
  do {                                                                                         \
    if (!::podium::it::have_postgres_binaries()) {                                             \
      GTEST_SKIP() << "PostgreSQL 15 server binaries not found in "                            \
                   << ::podium::it::postgres_bin_dir() << " (scripts/setup.sh installs them)"; \
    }                                                                                          \
  } while (0)
