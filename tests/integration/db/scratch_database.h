#pragma once
// Per-test databases on the server PODIUM_TEST_DATABASE_URL points at, for any integration
// test (not only backend/db's):
//
//   TEST(Foo, Bar) {
//     PODIUM_REQUIRE_TEST_DATABASE();
//     podium::db::testing::ScratchDatabase scratch;   // CREATE DATABASE podium_t_<random>
//     podium::db::Database db({.conninfo = scratch.conninfo()});
//     ...
//   }                                                 // DROP DATABASE ... WITH (FORCE)

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

namespace podium::db::testing {

// PODIUM_TEST_DATABASE_URL, or nullopt when unset or empty.
std::optional<std::string> test_database_url();

class ScratchDatabase {
 public:
  // Creates a fresh, empty database on the test server. Throws on failure.
  ScratchDatabase();
  explicit ScratchDatabase(const std::string& server_conninfo);
  ~ScratchDatabase();
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;

  const std::string& name() const { return name_; }
  const std::string& conninfo() const { return conninfo_; }

 private:
  std::string server_;
  std::string name_;
  std::string conninfo_;
};

// Runs one statement outside any transaction (CREATE/DROP DATABASE need that).
void admin_exec(const std::string& conninfo, const std::string& sql);

// The repository root: $PODIUM_ROOT if set, else derived from this file's path.
std::filesystem::path repo_root();

// A fresh directory under /tmp, mode 0755 (the database account must be able to enter it when
// the tests run as root), removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "podium-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace podium::db::testing

#define PODIUM_REQUIRE_TEST_DATABASE()                                                       \
  do {                                                                                       \
    if (!::podium::db::testing::test_database_url()) {                                       \
      GTEST_SKIP() << "PODIUM_TEST_DATABASE_URL is not set; start a test server with "       \
                      "`export PODIUM_TEST_DATABASE_URL=$(scripts/test-postgres.sh start)`"; \
    }                                                                                        \
  } while (0)
