#include "backend/db/embedded_postgres.h"

#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <thread>

#include "backend/db/connection.h"
#include "backend/db/conninfo.h"

namespace podium::db {
namespace fs = std::filesystem;

namespace {

constexpr const char* kDefaultBinDir = "/usr/lib/postgresql/15/bin";
constexpr const char* kSocketName = ".s.PGSQL.5432";
constexpr std::uintmax_t kLogRotateBytes = 16u << 20;

std::string conf_quote(std::string_view v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string seconds_arg(std::chrono::milliseconds ms) {
  return std::to_string(std::max<long long>(1, (ms.count() + 999) / 1000));
}

bool valid_identifier(const std::string& s) {
  return !s.empty() && s.size() < 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Whether `account` may traverse `dir` by the classic owner/group/other rule (no ACLs).
bool can_search(const struct stat& st, const RunAs& account, const std::vector<gid_t>& groups) {
  if (st.st_uid == account.uid) return (st.st_mode & S_IXUSR) != 0;
  if (std::find(groups.begin(), groups.end(), st.st_gid) != groups.end()) {
    return (st.st_mode & S_IXGRP) != 0;
  }
  return (st.st_mode & S_IXOTH) != 0;
}

}  // namespace

fs::path embedded_socket_dir(const fs::path& data_dir, bool* fell_back) {
  const fs::path preferred = data_dir / "run";
  // PostgreSQL rejects socket paths of 108 bytes or more (sizeof sun_path, with the NUL).
  const bool fits = preferred.string().size() + 1 + std::strlen(kSocketName) <= 107;
  if (fell_back) *fell_back = !fits;
  if (fits) return preferred;
  char name[40];
  std::snprintf(name, sizeof name, "podium-pg-%016llx",
                static_cast<unsigned long long>(fnv1a(data_dir.string())));
  return fs::path("/tmp") / name;
}

std::optional<pid_t> read_postmaster_pid(const fs::path& pid_file) {
  std::ifstream in(pid_file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(line.c_str(), &end, 10);
  if (end == line.c_str() || v <= 0) return std::nullopt;
  return static_cast<pid_t>(v);
}

std::string tail_of_file(const fs::path& file, int lines) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 65536);
  in.seekg(from);
  std::deque<std::string> kept;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    kept.push_back(line);
    if (kept.size() > static_cast<size_t>(lines)) kept.pop_front();
  }
  std::string out;
  for (const auto& l : kept) out += "\n  " + l;
  return out;
}

EmbeddedPostgres::EmbeddedPostgres(EmbeddedPostgresOptions options,
                                   std::shared_ptr<ProcessLauncher> launcher)
    : options_(std::move(options)),
      launcher_(launcher ? std::move(launcher) : make_posix_process_launcher()) {
  if (options_.data_dir.empty())
    throw EmbeddedPostgresError("embedded PostgreSQL needs a data directory");
  if (!valid_identifier(options_.database) || !valid_identifier(options_.superuser)) {
    throw EmbeddedPostgresError("database and user names must be lower-case identifiers");
  }
}

EmbeddedPostgres::~EmbeddedPostgres() {
  stop();
  release_lock();
}

void EmbeddedPostgres::fail(const std::string& what) const {
  std::string message = "embedded PostgreSQL: " + what;
  const std::string tail = tail_of_file(log_file(), 15);
  if (!tail.empty()) message += "\nlast lines of " + log_file().string() + ":" + tail;
  throw EmbeddedPostgresError(message);
}

void EmbeddedPostgres::give_to_account(const fs::path& p) const {
  if (!account_) return;
  if (::chown(p.c_str(), account_->uid, account_->gid) != 0) {
    fail("cannot chown " + p.string() + " to " + account_->name + ": " + std::strerror(errno));
  }
}

ProcessOutcome EmbeddedPostgres::run(std::vector<std::string> argv,
                                     std::chrono::milliseconds timeout) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  // A small, fixed environment: the server's own (PG* variables included) must not steer
  // initdb or pg_ctl.
  spec.env = {"PATH=/usr/bin:/bin", "LANG=C"};
  if (const char* tz = std::getenv("TZ")) spec.env.push_back(std::string("TZ=") + tz);
  spec.output = log_file();
  spec.working_dir = data_dir_;
  spec.run_as = account_;
  return launcher_->run(spec, timeout);
}

void EmbeddedPostgres::start() {
  if (started_) return;
  std::error_code ec;
  bin_dir_ = options_.bin_dir.empty() ? fs::path(kDefaultBinDir) : options_.bin_dir;
  for (const char* tool : {"initdb", "pg_ctl", "postgres"}) {
    if (!fs::exists(bin_dir_ / tool, ec)) {
      throw EmbeddedPostgresError(
          "embedded PostgreSQL: " + (bin_dir_ / tool).string() +
          " not found; install postgresql-15 or set PODIUM_DATABASE_URL to an existing server");
    }
  }

  account_.reset();
  if (::geteuid() == 0) {
    // PostgreSQL refuses to run as root; run it as an unprivileged account instead.
    struct passwd pw {};
    struct passwd* found = nullptr;
    std::vector<char> buf(16384);
    ::getpwnam_r(options_.run_as_user.c_str(), &pw, buf.data(), buf.size(), &found);
    if (found == nullptr || found->pw_uid == 0) {
      throw EmbeddedPostgresError(
          "embedded PostgreSQL: podium-server runs as root and PostgreSQL refuses to, but the "
          "account \"" +
          options_.run_as_user +
          "\" to run it as does not exist (installing postgresql-15 creates it), or set "
          "PODIUM_DATABASE_URL");
    }
    account_ = RunAs{options_.run_as_user, found->pw_uid, found->pw_gid};
  }

  const bool existed = fs::exists(options_.data_dir, ec);
  fs::create_directories(options_.data_dir, ec);
  if (ec) {
    throw EmbeddedPostgresError("embedded PostgreSQL: cannot create " + options_.data_dir.string() +
                                ": " + ec.message());
  }
  data_dir_ = fs::weakly_canonical(fs::absolute(options_.data_dir));
  if (!existed && account_) {
    // Our own new directory: let the database account traverse it (not list it).
    fs::permissions(data_dir_,
                    fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec, ec);
  }
  acquire_lock();
  try {
    start_locked();
  } catch (...) {
    if (started_) stop();
    release_lock();
    throw;
  }
}

void EmbeddedPostgres::acquire_lock() {
  const fs::path lock = data_dir_ / "postgres.lock";
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) {
    throw EmbeddedPostgresError("embedded PostgreSQL: cannot open " + lock.string() + ": " +
                                std::strerror(errno));
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (err == EWOULDBLOCK) {
      throw EmbeddedPostgresError("embedded PostgreSQL: another podium-server is using " +
                                  data_dir_.string() + " (it holds " + lock.string() + ")");
    }
    throw EmbeddedPostgresError("embedded PostgreSQL: cannot lock " + lock.string() + ": " +
                                std::strerror(err));
  }
}

void EmbeddedPostgres::release_lock() {
  // Closing the descriptor releases the flock.
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
}

void EmbeddedPostgres::start_locked() {
  if (account_) {
    std::vector<gid_t> groups(64);
    int n = static_cast<int>(groups.size());
    if (::getgrouplist(account_->name.c_str(), account_->gid, groups.data(), &n) < 0) {
      groups.resize(static_cast<size_t>(n));
      ::getgrouplist(account_->name.c_str(), account_->gid, groups.data(), &n);
    }
    groups.resize(static_cast<size_t>(std::max(n, 0)));
    std::vector<fs::path> chain;
    for (fs::path p = data_dir_; !p.empty(); p = p.parent_path()) {
      chain.push_back(p);
      if (p == p.root_path()) break;
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      struct stat st {};
      if (::stat(it->c_str(), &st) == 0 && !can_search(st, *account_, groups)) {
        throw EmbeddedPostgresError(
            "embedded PostgreSQL runs as \"" + account_->name + "\", which cannot reach " +
            data_dir_.string() + ": " + it->string() +
            " is not searchable by it. Choose a PODIUM_DATA_DIR it can reach (e.g. under "
            "/var/lib), grant it o+x, or set PODIUM_DATABASE_URL");
      }
    }
  }
  prepare_log();
  prepare_socket_dir();
  std::error_code ec;
  if (!fs::exists(cluster_dir() / "PG_VERSION", ec)) init_cluster();
  if (account_) {
    struct stat st {};
    if (::stat(cluster_dir().c_str(), &st) == 0 && st.st_uid != account_->uid) {
      fail(cluster_dir().string() + " belongs to uid " + std::to_string(st.st_uid) +
           " but PostgreSQL runs as " + account_->name + " (uid " + std::to_string(account_->uid) +
           "); chown -R it to " + account_->name);
    }
  }
  write_settings();
  clear_stale_postmaster();
  clear_socket_leftovers();
  if (!pg_ctl_start()) {
    // Children of a killed postmaster may still hold its shared memory for a moment, which
    // makes PostgreSQL refuse to start; they exit as soon as they notice. One more try.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    clear_stale_postmaster();
    clear_socket_leftovers();
    if (!pg_ctl_start()) fail("pg_ctl start failed");
  }
  started_ = true;
  conninfo_ = "host=" + conninfo_quote(socket_dir_.string()) +
              " port=5432 dbname=" + options_.database + " user=" + options_.superuser;
  ensure_database();
  spdlog::info("embedded PostgreSQL running in {} (socket {})", cluster_dir().string(),
               socket_dir_.string());
}

void EmbeddedPostgres::prepare_log() {
  std::error_code ec;
  const fs::path log = log_file();
  if (fs::exists(log, ec) && fs::file_size(log, ec) > kLogRotateBytes) {
    fs::rename(log, fs::path(log.string() + ".1"), ec);
  }
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) {
    throw EmbeddedPostgresError("embedded PostgreSQL: cannot open " + log.string() + ": " +
                                std::strerror(errno));
  }
  ::close(fd);
  // pg_ctl -l opens it as the database account.
  give_to_account(log);
}

void EmbeddedPostgres::prepare_socket_dir() {
  bool fell_back = false;
  socket_dir_ = embedded_socket_dir(data_dir_, &fell_back);
  if (fell_back) {
    spdlog::warn(
        "embedded PostgreSQL: the socket path under {} would exceed 107 bytes; using {} instead",
        data_dir_.string(), socket_dir_.string());
  }
  if (::mkdir(socket_dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    fail("cannot create " + socket_dir_.string() + ": " + std::strerror(errno));
  }
  // In /tmp anyone could have created that name first: accept only a real directory that
  // belongs to us or the database account.
  struct stat st {};
  if (::lstat(socket_dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fail(socket_dir_.string() + " is not a directory");
  }
  if (st.st_uid != ::geteuid() && !(account_ && st.st_uid == account_->uid)) {
    fail(socket_dir_.string() + " belongs to another user (uid " + std::to_string(st.st_uid) +
         "); remove it");
  }
  // Trust authentication: whoever reaches the socket is superuser, so nobody else may.
  ::chmod(socket_dir_.c_str(), 0700);
  give_to_account(socket_dir_);
}

void EmbeddedPostgres::init_cluster() {
  std::error_code ec;
  const fs::path target = cluster_dir();
  if (fs::exists(target, ec)) {
    if (!fs::is_empty(target, ec)) {
      fail(target.string() +
           " exists but holds no PostgreSQL cluster (no PG_VERSION); move it away to start fresh");
    }
    fs::remove(target, ec);
  }
  // initdb into a scratch name and rename at the end, so an interrupted initdb never leaves
  // a half-made cluster that a later start would trust.
  const fs::path scratch = data_dir_ / "postgres.initdb";
  fs::remove_all(scratch, ec);
  if (::mkdir(scratch.c_str(), 0700) != 0) {
    fail("cannot create " + scratch.string() + ": " + std::strerror(errno));
  }
  give_to_account(scratch);
  spdlog::info("embedded PostgreSQL: creating a cluster in {}", target.string());
  std::vector<std::string> argv = {(bin_dir_ / "initdb").string(),
                                   "--pgdata=" + scratch.string(),
                                   "--username=" + options_.superuser,
                                   "--encoding=UTF8",
                                   "--locale=C.UTF-8",
                                   "--auth-local=trust",
                                   "--auth-host=reject"};
  if (options_.initdb_no_sync) argv.push_back("--no-sync");
  const ProcessOutcome r = run(argv, std::chrono::minutes(5));
  if (!r.ok()) fail("initdb " + r.describe());
  {
    std::ofstream conf(scratch / "postgresql.conf", std::ios::app);
    conf << "\n# podium-server writes podium.conf at every start (socket directory, no TCP).\n"
            "include_if_exists = 'podium.conf'\n";
    if (!conf) fail("cannot write " + (scratch / "postgresql.conf").string());
  }
  fs::rename(scratch, target, ec);
  if (ec) fail("cannot rename " + scratch.string() + ": " + ec.message());
}

void EmbeddedPostgres::write_settings() {
  const fs::path file = cluster_dir() / "podium.conf";
  {
    std::ofstream out(file, std::ios::trunc);
    out << "# Written by podium-server at every start; changes here are overwritten.\n"
        << "listen_addresses = ''\n"
        << "port = 5432\n"
        << "unix_socket_directories = " << conf_quote(socket_dir_.string()) << "\n"
        << "unix_socket_permissions = 0700\n";
    for (const auto& [name, value] : options_.settings) {
      out << name << " = " << conf_quote(value) << "\n";
    }
    if (!out) fail("cannot write " + file.string());
  }
  ::chmod(file.c_str(), 0600);
  give_to_account(file);
}

void EmbeddedPostgres::clear_stale_postmaster() {
  std::error_code ec;
  const fs::path pid_file = cluster_dir() / "postmaster.pid";
  if (!fs::exists(pid_file, ec)) return;
  const std::optional<pid_t> pid = read_postmaster_pid(pid_file);
  const std::optional<ProcessInfo> info = pid ? launcher_->inspect(*pid) : std::nullopt;
  if (!info) {
    spdlog::info("embedded PostgreSQL: removing stale postmaster.pid (pid {} is not running)",
                 pid ? std::to_string(*pid) : "unreadable");
    fs::remove(pid_file, ec);
    return;
  }
  const bool is_postgres = info->name == "postgres" || info->name == "postmaster";
  const bool ours = info->cwd.empty() || fs::equivalent(info->cwd, cluster_dir(), ec);
  if (is_postgres && ours) {
    // Its podium-server was killed without stopping it; we hold the lock now, so it is ours.
    spdlog::warn(
        "embedded PostgreSQL: pid {} still runs on {} from a previous podium-server; "
        "stopping it",
        *pid, cluster_dir().string());
    const ProcessOutcome r =
        run({(bin_dir_ / "pg_ctl").string(), "stop", "--pgdata=" + cluster_dir().string(),
             "--mode=fast", "--wait", "--timeout=" + seconds_arg(options_.stop_timeout)},
            options_.stop_timeout + std::chrono::seconds(10));
    if (!r.ok())
      fail("cannot stop the PostgreSQL (pid " + std::to_string(*pid) + ") left running on " +
           cluster_dir().string() + ": pg_ctl " + r.describe());
    return;
  }
  // The pid was reused by an unrelated process (common after a reboot or in containers);
  // PostgreSQL itself would refuse to start because it cannot tell.
  spdlog::warn(
      "embedded PostgreSQL: postmaster.pid names pid {}, which is \"{}\", not this "
      "cluster's server; removing the stale file",
      *pid, info->name);
  fs::remove(pid_file, ec);
}

void EmbeddedPostgres::clear_socket_leftovers() {
  // No server of ours runs now (the lock and clear_stale_postmaster saw to that), so socket
  // and socket lock files in our private directory are leftovers; a lock file naming a reused
  // pid would block the start just like a stale postmaster.pid.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(socket_dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(".s.PGSQL.", 0) == 0) fs::remove(entry.path(), ec);
  }
}

bool EmbeddedPostgres::pg_ctl_start() {
  const ProcessOutcome r =
      run({(bin_dir_ / "pg_ctl").string(), "start", "--pgdata=" + cluster_dir().string(),
           "--log=" + log_file().string(), "--wait",
           "--timeout=" + seconds_arg(options_.start_timeout)},
          options_.start_timeout + std::chrono::seconds(10));
  if (!r.ok()) spdlog::warn("embedded PostgreSQL: pg_ctl start {}", r.describe());
  return r.ok();
}

void EmbeddedPostgres::ensure_database() {
  ConnectOptions c;
  c.conninfo = conninfo_with(conninfo_, {{"dbname", "postgres"}});
  c.connect_timeout = std::chrono::seconds(10);
  c.application_name = "podium-bootstrap";
  try {
    std::unique_ptr<Connection> conn = Connection::open(c);
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    Result r =
        conn->exec("SELECT 1 FROM pg_database WHERE datname = $1", {options_.database}, deadline);
    if (r.empty()) {
      // The name was checked to be a plain lower-case identifier in the constructor.
      conn->exec("CREATE DATABASE " + options_.database, {}, deadline);
      spdlog::info("embedded PostgreSQL: created database {}", options_.database);
    }
  } catch (const DbError& e) {
    fail(std::string("cannot create database ") + options_.database + ": " + e.what());
  }
}

bool EmbeddedPostgres::stop() {
  if (!started_) return true;
  started_ = false;
  const std::string pg_ctl = (bin_dir_ / "pg_ctl").string();
  const std::string pgdata = "--pgdata=" + cluster_dir().string();
  bool clean = true;
  ProcessOutcome r = run({pg_ctl, "stop", pgdata, "--mode=fast", "--wait",
                          "--timeout=" + seconds_arg(options_.stop_timeout)},
                         options_.stop_timeout + std::chrono::seconds(10));
  if (!r.ok()) {
    spdlog::warn("embedded PostgreSQL: fast stop {}; stopping in immediate mode", r.describe());
    r = run({pg_ctl, "stop", pgdata, "--mode=immediate", "--wait", "--timeout=30"},
            std::chrono::seconds(40));
    clean = false;
    if (!r.ok()) spdlog::error("embedded PostgreSQL: immediate stop {}", r.describe());
  }
  release_lock();
  return clean;
}

}  // namespace podium::db
