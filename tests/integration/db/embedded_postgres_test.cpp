// Embedded PostgreSQL: real start/stop/restart in temporary directories, recovery from what a
// killed server leaves behind, and (with a fake launcher) the decisions behind the commands.
#include "backend/db/embedded_postgres.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <thread>

#include "backend/db/database.h"
#include "tests/integration/db/scratch_database.h"

namespace podium::db {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::TempDir;

bool have_postgres() {
  return fs::exists("/usr/lib/postgresql/15/bin/pg_ctl");
}

EmbeddedPostgresOptions quick(const fs::path& data_dir) {
  EmbeddedPostgresOptions o;
  o.data_dir = data_dir;
  o.initdb_no_sync = true;
  o.settings = {{"fsync", "off"}, {"shared_buffers", "16MB"}};
  return o;
}

std::string query(const std::string& conninfo, const std::string& sql) {
  Database db(PoolOptions{.conninfo = conninfo, .max_connections = 1});
  auto tx = db.begin();
  auto r = tx.exec(sql);
  tx.commit();
  return r.empty() ? "" : r.at(0, r.column_name(0));
}

bool alive(pid_t pid) {
  return ::kill(pid, 0) == 0;
}

void wait_gone(pid_t pid) {
  for (int i = 0; i < 200 && alive(pid); ++i) std::this_thread::sleep_for(25ms);
}

#define REQUIRE_POSTGRES() \
  if (!have_postgres()) GTEST_SKIP() << "PostgreSQL 15 server binaries not installed"

TEST(DbEmbeddedPostgres, StartsStopsAndKeepsItsData) {
  REQUIRE_POSTGRES();
  TempDir dir("podium-embedded");
  const fs::path data = dir.path() / "var";
  {
    EmbeddedPostgres pg(quick(data));
    pg.start();
    ASSERT_TRUE(pg.running());
    EXPECT_NE(pg.conninfo().find("host='" + (data / "run").string() + "'"), std::string::npos)
        << pg.conninfo();
    EXPECT_TRUE(fs::exists(data / "run" / ".s.PGSQL.5432"));
    EXPECT_EQ(query(pg.conninfo(), "SHOW listen_addresses"), "");
    EXPECT_EQ(query(pg.conninfo(), "SELECT current_database()"), "podium");
    EXPECT_EQ(query(pg.conninfo(), "SHOW server_encoding"), "UTF8");
    query(pg.conninfo(), "CREATE TABLE kept (v text)");
    query(pg.conninfo(), "INSERT INTO kept VALUES ('still here')");
    EXPECT_TRUE(pg.stop());
    EXPECT_FALSE(pg.running());
    EXPECT_FALSE(fs::exists(data / "postgres" / "postmaster.pid"));
  }
  EXPECT_TRUE(fs::exists(data / "postgres.log"));
  {
    EmbeddedPostgres again(quick(data));
    again.start();
    EXPECT_EQ(query(again.conninfo(), "SELECT v FROM kept"), "still here");
  }  // the destructor stops it
  EXPECT_FALSE(fs::exists(data / "postgres" / "postmaster.pid"));
}

TEST(DbEmbeddedPostgres, ASecondServerOnTheSameDirectoryIsRefused) {
  REQUIRE_POSTGRES();
  TempDir dir("podium-embedded");
  EmbeddedPostgres first(quick(dir.path()));
  first.start();
  EmbeddedPostgres second(quick(dir.path()));
  try {
    second.start();
    FAIL() << "two servers started on one data directory";
  } catch (const EmbeddedPostgresError& e) {
    EXPECT_NE(std::string(e.what()).find("another podium-server"), std::string::npos) << e.what();
  }
  EXPECT_EQ(query(first.conninfo(), "SELECT 1"), "1");
}

// A podium-server that dies without stopping PostgreSQL: run start() in a child process that
// then exits at once, leaving the postmaster running and the lock released.
pid_t start_in_child_and_abandon(const fs::path& data) {
  const pid_t child = ::fork();
  if (child == 0) {
    int code = 1;
    try {
      auto* pg = new EmbeddedPostgres(quick(data));  // never destroyed: simulates a crash
      pg->start();
      code = 0;
    } catch (...) {
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const auto pid = read_postmaster_pid(data / "postgres" / "postmaster.pid");
  EXPECT_TRUE(pid.has_value());
  return pid.value_or(0);
}

TEST(DbEmbeddedPostgres, StopsAPostmasterLeftRunningByAKilledServer) {
  REQUIRE_POSTGRES();
  TempDir dir("podium-embedded");
  const pid_t orphan = start_in_child_and_abandon(dir.path());
  ASSERT_TRUE(alive(orphan));
  EmbeddedPostgres pg(quick(dir.path()));
  pg.start();
  const auto now = read_postmaster_pid(dir.path() / "postgres" / "postmaster.pid");
  ASSERT_TRUE(now.has_value());
  EXPECT_NE(*now, orphan);
  wait_gone(orphan);
  EXPECT_FALSE(alive(orphan));
  EXPECT_EQ(query(pg.conninfo(), "SELECT 1"), "1");
}

TEST(DbEmbeddedPostgres, StartsAfterThePostmasterWasKilled) {
  REQUIRE_POSTGRES();
  TempDir dir("podium-embedded");
  const pid_t orphan = start_in_child_and_abandon(dir.path());
  ASSERT_GT(orphan, 0);
  ::kill(orphan, SIGKILL);
  wait_gone(orphan);
  ASSERT_TRUE(fs::exists(dir.path() / "postgres" / "postmaster.pid"));  // stale now
  EmbeddedPostgres pg(quick(dir.path()));
  pg.start();
  EXPECT_EQ(query(pg.conninfo(), "SELECT 1"), "1");
}

TEST(DbEmbeddedPostgres, PidFileNamingAnUnrelatedLiveProcessIsStale) {
  REQUIRE_POSTGRES();
  TempDir dir("podium-embedded");
  {
    EmbeddedPostgres pg(quick(dir.path()));
    pg.start();
  }
  // After a reboot the recorded pid may belong to anything; here: this test process.
  // PostgreSQL alone refuses to start when that pid is alive ("lock file already exists").
  const fs::path pid_file = dir.path() / "postgres" / "postmaster.pid";
  std::ofstream(pid_file) << ::getpid() << "\n" << (dir.path() / "postgres").string() << "\n";
  EmbeddedPostgres pg(quick(dir.path()));
  pg.start();
  EXPECT_EQ(query(pg.conninfo(), "SELECT 1"), "1");
  EXPECT_NE(read_postmaster_pid(pid_file), ::getpid());
}

TEST(DbEmbeddedPostgres, LongDataDirectoryUsesAShortSocketDirectory) {
  REQUIRE_POSTGRES();
  TempDir dir("podium-embedded");
  const fs::path data = dir.path() / std::string(90, 'd');
  bool fell_back = false;
  const fs::path socket_dir = embedded_socket_dir(data, &fell_back);
  EXPECT_TRUE(fell_back);
  EXPECT_EQ(socket_dir.string().rfind("/tmp/podium-pg-", 0), 0u) << socket_dir;
  EXPECT_EQ(embedded_socket_dir(data), socket_dir);  // stable across starts
  EmbeddedPostgres pg(quick(data));
  pg.start();
  EXPECT_EQ(pg.socket_dir(), socket_dir);
  EXPECT_EQ(query(pg.conninfo(), "SELECT 1"), "1");
  pg.stop();
  fs::remove_all(socket_dir);
}

TEST(DbEmbeddedSocketDir, PrefersTheDataDirectory) {
  bool fell_back = true;
  EXPECT_EQ(embedded_socket_dir("/var/lib/podium", &fell_back), "/var/lib/podium/run");
  EXPECT_FALSE(fell_back);
  // 107 bytes is the limit for "<dir>/run/.s.PGSQL.5432" ("/run" 4, "/.s.PGSQL.5432" 14).
  const std::string at_limit = "/" + std::string(107 - 4 - 14 - 1, 'x');
  ASSERT_EQ((fs::path(at_limit) / "run" / ".s.PGSQL.5432").string().size(), 107u);
  EXPECT_EQ(embedded_socket_dir(at_limit, &fell_back), fs::path(at_limit) / "run");
  EXPECT_FALSE(fell_back);
  embedded_socket_dir(at_limit + "y", &fell_back);
  EXPECT_TRUE(fell_back);
}

// Records commands; initdb creates a minimal cluster directory, pg_ctl does what it is told.
class FakeLauncher : public ProcessLauncher {
 public:
  ProcessOutcome run(const ProcessSpec& spec, std::chrono::milliseconds) override {
    commands.push_back(spec.argv);
    run_as.push_back(spec.run_as.has_value());
    const std::string tool = fs::path(spec.argv[0]).filename();
    const std::string verb = tool == "pg_ctl" ? spec.argv[1] : tool;
    std::ofstream(spec.output, std::ios::app) << "fake " << verb << ": " << say[verb] << "\n";
    if (tool == "initdb") {
      for (const auto& a : spec.argv) {
        if (a.rfind("--pgdata=", 0) == 0) {
          const fs::path pgdata = a.substr(9);
          std::ofstream(pgdata / "PG_VERSION") << "15\n";
          std::ofstream(pgdata / "postgresql.conf") << "# initdb's\n";
        }
      }
    }
    ProcessOutcome out;
    out.started = true;
    out.exit_code = exit_codes.count(verb) ? exit_codes[verb] : 0;
    return out;
  }
  std::optional<ProcessInfo> inspect(pid_t pid) override {
    inspected.push_back(pid);
    return process;
  }
  int count(const std::string& verb) const {
    int n = 0;
    for (const auto& c : commands) {
      const std::string tool = fs::path(c[0]).filename();
      n += (tool == verb || (tool == "pg_ctl" && c[1] == verb)) ? 1 : 0;
    }
    return n;
  }

  std::vector<std::vector<std::string>> commands;
  std::vector<bool> run_as;
  std::map<std::string, int> exit_codes;
  std::map<std::string, std::string> say;
  std::optional<ProcessInfo> process;
  std::vector<pid_t> inspected;
};

class DbEmbeddedPostgresDecisions : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(bin_.path());
    for (const char* tool : {"initdb", "pg_ctl", "postgres"}) std::ofstream(bin_.path() / tool);
    options_.data_dir = dir_.path() / "var";
    options_.bin_dir = bin_.path();
  }
  std::string start_error(EmbeddedPostgres& pg) {
    try {
      pg.start();
    } catch (const EmbeddedPostgresError& e) {
      return e.what();
    }
    return "";
  }
  TempDir dir_{"podium-embedded-fake"};
  TempDir bin_{"podium-fake-bin"};
  EmbeddedPostgresOptions options_;
  std::shared_ptr<FakeLauncher> fake_ = std::make_shared<FakeLauncher>();
};

TEST_F(DbEmbeddedPostgresDecisions, InitdbFailureSurfacesTheLog) {
  fake_->exit_codes["initdb"] = 1;
  fake_->say["initdb"] = "could not create directory: No space left on device";
  EmbeddedPostgres pg(options_, fake_);
  const std::string error = start_error(pg);
  EXPECT_NE(error.find("initdb exited with status 1"), std::string::npos) << error;
  EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
  EXPECT_EQ(fake_->count("start"), 0);
  EXPECT_FALSE(fs::exists(options_.data_dir / "postgres"));  // no half-made cluster
}

TEST_F(DbEmbeddedPostgresDecisions, FirstStartInitializesWithoutTcpAndRetriesAFailedStartOnce) {
  fake_->exit_codes["start"] = 1;
  fake_->say["start"] = "FATAL:  could not create lock file";
  EmbeddedPostgres pg(options_, fake_);
  const std::string error = start_error(pg);
  EXPECT_NE(error.find("pg_ctl start failed"), std::string::npos) << error;
  EXPECT_NE(error.find("could not create lock file"), std::string::npos) << error;
  ASSERT_EQ(fake_->count("initdb"), 1);
  const auto& initdb = fake_->commands[0];
  for (const char* arg :
       {"--encoding=UTF8", "--username=postgres", "--auth-local=trust", "--locale=C.UTF-8"}) {
    EXPECT_NE(std::find(initdb.begin(), initdb.end(), arg), initdb.end()) << arg;
  }
  EXPECT_EQ(fake_->count("start"), 2);
  EXPECT_EQ(fake_->run_as[0], ::geteuid() == 0);  // never as root
  std::ifstream conf(options_.data_dir / "postgres" / "podium.conf");
  const std::string text((std::istreambuf_iterator<char>(conf)), {});
  EXPECT_NE(text.find("listen_addresses = ''"), std::string::npos) << text;
  EXPECT_NE(text.find("unix_socket_directories = '" +
                      (fs::weakly_canonical(options_.data_dir) / "run").string() + "'"),
            std::string::npos)
      << text;
  std::ifstream main_conf(options_.data_dir / "postgres" / "postgresql.conf");
  const std::string main_text((std::istreambuf_iterator<char>(main_conf)), {});
  EXPECT_NE(main_text.find("include_if_exists = 'podium.conf'"), std::string::npos);
}

class DbStalePid : public DbEmbeddedPostgresDecisions {
 protected:
  void SetUp() override {
    DbEmbeddedPostgresDecisions::SetUp();
    // An existing cluster with a postmaster.pid naming pid 4242.
    fs::create_directories(options_.data_dir / "postgres");
    std::ofstream(options_.data_dir / "postgres" / "PG_VERSION") << "15\n";
    std::ofstream(options_.data_dir / "postgres" / "postmaster.pid") << "4242\n/x\n";
    // As root the cluster must belong to the database account, as initdb would have made it.
    if (::geteuid() == 0) {
      if (const passwd* pw = ::getpwnam("postgres")) {
        for (const auto& e : fs::recursive_directory_iterator(options_.data_dir / "postgres")) {
          ASSERT_EQ(::chown(e.path().c_str(), pw->pw_uid, pw->pw_gid), 0);
        }
        ASSERT_EQ(::chown((options_.data_dir / "postgres").c_str(), pw->pw_uid, pw->pw_gid), 0);
      }
    }
    // pg_ctl start "succeeds", then creating the database fails (nothing listens): enough to
    // see what was done before.
  }
  bool pid_file_exists() { return fs::exists(options_.data_dir / "postgres" / "postmaster.pid"); }
};

TEST_F(DbStalePid, DeadPidIsRemoved) {
  fake_->process = std::nullopt;
  EmbeddedPostgres pg(options_, fake_);
  const std::string error = start_error(pg);
  SCOPED_TRACE(error);
  EXPECT_EQ(fake_->inspected, std::vector<pid_t>{4242});
  EXPECT_FALSE(pid_file_exists());
  EXPECT_EQ(fake_->count("initdb"), 0);
  // stop() ran once after the failed database creation; nothing stopped before the start.
  ASSERT_GE(fake_->commands.size(), 1u);
  EXPECT_EQ(fake_->commands[0][1], "start");
}

TEST_F(DbStalePid, UnrelatedProcessIsNotMistakenForPostgres) {
  fake_->process = ProcessInfo{"bash", "/root"};
  EmbeddedPostgres pg(options_, fake_);
  const std::string error = start_error(pg);
  SCOPED_TRACE(error);
  EXPECT_FALSE(pid_file_exists());
  EXPECT_EQ(fake_->commands[0][1], "start");
}

TEST_F(DbStalePid, OurOwnOrphanedPostmasterIsStoppedFirst) {
  fake_->process = ProcessInfo{"postgres", options_.data_dir / "postgres"};
  EmbeddedPostgres pg(options_, fake_);
  const std::string error = start_error(pg);
  SCOPED_TRACE(error);
  ASSERT_GE(fake_->commands.size(), 2u);
  EXPECT_EQ(fake_->commands[0][1], "stop");
  EXPECT_NE(std::find(fake_->commands[0].begin(), fake_->commands[0].end(), "--mode=fast"),
            fake_->commands[0].end());
  EXPECT_EQ(fake_->commands[1][1], "start");
}

TEST_F(DbStalePid, AnotherClustersPostgresIsNotOurs) {
  fake_->process = ProcessInfo{"postgres", "/var/lib/postgresql/15/main"};
  EmbeddedPostgres pg(options_, fake_);
  const std::string error = start_error(pg);
  SCOPED_TRACE(error);
  EXPECT_FALSE(pid_file_exists());
  EXPECT_EQ(fake_->commands[0][1], "start");
}

}  // namespace
}  // namespace podium::db
