#pragma once
// PostgreSQL run by podium-server itself when no PODIUM_DATABASE_URL is given.
//
//   EmbeddedPostgres pg({.data_dir = "/var/lib/podium"});
//   pg.start();                                    // initdb on first start, then pg_ctl start
//   Database db({.conninfo = pg.conninfo()});
//   ...
//   pg.stop();                                     // or the destructor
//
// Layout under data_dir: postgres/ (the cluster), run/ (its unix socket: no TCP at all),
// postgres.log (initdb, pg_ctl and server output), postgres.lock (held while this object owns
// the cluster, so two podium-servers never share one). Authentication is "trust" over the
// socket, which is why the socket directory is mode 0700.
//
// As root, PostgreSQL runs as an unprivileged account (default "postgres", created by
// Debian's postgresql-15 package) and its directories are chowned to it.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backend/db/process_launcher.h"

namespace podium::db {

struct EmbeddedPostgresOptions {
  std::filesystem::path data_dir;  // PODIUM_DATA_DIR
  // Directory of initdb, pg_ctl and postgres; empty: /usr/lib/postgresql/15/bin.
  std::filesystem::path bin_dir;
  std::string database = "podium";  // created on first start
  std::string superuser = "postgres";
  std::string run_as_user = "postgres";  // only used when running as root
  std::chrono::milliseconds start_timeout{60000};
  std::chrono::milliseconds stop_timeout{30000};
  // Extra postgresql.conf settings (name, value), e.g. {"shared_buffers", "256MB"}.
  std::vector<std::pair<std::string, std::string>> settings;
  // initdb --no-sync: faster, for tests; a crash during initdb then needs a fresh directory.
  bool initdb_no_sync = false;
};

class EmbeddedPostgresError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class EmbeddedPostgres {
 public:
  explicit EmbeddedPostgres(EmbeddedPostgresOptions options,
                            std::shared_ptr<ProcessLauncher> launcher = nullptr);
  ~EmbeddedPostgres();  // stop()
  EmbeddedPostgres(const EmbeddedPostgres&) = delete;
  EmbeddedPostgres& operator=(const EmbeddedPostgres&) = delete;

  // Initializes the cluster if needed, clears what a killed predecessor left (stale
  // postmaster.pid, a still-running orphaned postmaster, socket lock files), starts it and
  // waits until it accepts connections, creates the database. Throws EmbeddedPostgresError
  // with the last lines of postgres.log when that fails.
  void start();
  // pg_ctl stop -m fast (immediate if that does not finish). Never throws; false when
  // PostgreSQL could not be stopped cleanly.
  bool stop();
  bool running() const { return started_; }

  // "host=<socket dir> port=5432 dbname=podium user=postgres"; valid after start().
  const std::string& conninfo() const { return conninfo_; }
  std::filesystem::path cluster_dir() const { return data_dir_ / "postgres"; }
  std::filesystem::path log_file() const { return data_dir_ / "postgres.log"; }
  const std::filesystem::path& socket_dir() const { return socket_dir_; }

 private:
  void start_locked();
  void acquire_lock();
  void release_lock();
  void prepare_log();
  void prepare_socket_dir();
  void init_cluster();
  void write_settings();
  void clear_stale_postmaster();
  void clear_socket_leftovers();
  bool pg_ctl_start();
  void ensure_database();
  ProcessOutcome run(std::vector<std::string> argv, std::chrono::milliseconds timeout);
  void give_to_account(const std::filesystem::path& p) const;
  [[noreturn]] void fail(const std::string& what) const;

  EmbeddedPostgresOptions options_;
  std::shared_ptr<ProcessLauncher> launcher_;
  std::filesystem::path data_dir_;
  std::filesystem::path bin_dir_;
  std::filesystem::path socket_dir_;
  std::optional<RunAs> account_;
  std::string conninfo_;
  int lock_fd_ = -1;
  bool started_ = false;
};

// <data_dir>/run, or /tmp/podium-pg-<hash of data_dir> when the socket path under data_dir
// would exceed the 107 bytes a unix socket path may have. *fell_back tells which.
std::filesystem::path embedded_socket_dir(const std::filesystem::path& data_dir,
                                          bool* fell_back = nullptr);

// The pid on the first line of a postmaster.pid; nullopt when absent or unreadable.
std::optional<pid_t> read_postmaster_pid(const std::filesystem::path& pid_file);

// The last `lines` lines of a text file (for error messages), "" when unreadable.
std::string tail_of_file(const std::filesystem::path& file, int lines);

}  // namespace podium::db
