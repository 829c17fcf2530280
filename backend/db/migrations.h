#pragma once
// Forward-only schema migrations: numbered SQL files `migrations/NNNN_name.sql`.
//
// At start the server calls apply_migrations(db, embedded_migrations()): the repository's
// migrations/ directory is compiled into the binary (backend/db/CMakeLists.txt generates the
// table), so an installed podium-server needs no source tree. Tests may load a directory.
//
// Each file runs inside the one migration transaction: it must not contain BEGIN/COMMIT or
// statements PostgreSQL refuses in a transaction (CREATE INDEX CONCURRENTLY, VACUUM).

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/db/database.h"

namespace podium::db {

struct Migration {
  int version = 0;   // NNNN
  std::string name;  // the part after the underscore, without ".sql"
  std::string sql;
};

// Bad file names, duplicate versions, a database newer than this binary, a failing migration.
class MigrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "0007_add_runs_index.sql" -> {7, "add_runs_index"}; nullopt when the name does not follow
// the pattern (digits, '_', [A-Za-z0-9_-]+, ".sql").
std::optional<std::pair<int, std::string>> parse_migration_file_name(std::string_view file_name);

// Builds the sorted, validated list from (file name, contents) pairs. Files not ending in .sql
// and hidden files are ignored; a .sql file with a bad name or a duplicate version is an error.
std::vector<Migration> migrations_from_files(
    const std::vector<std::pair<std::string, std::string>>& files);

// Reads every NNNN_name.sql in `dir`.
std::vector<Migration> load_migrations(const std::filesystem::path& dir);

// The repository's migrations/ as they were when this binary was built.
std::vector<Migration> embedded_migrations();

struct MigrationOutcome {
  int previous_version = 0;  // highest version recorded before this call (0: empty database)
  int current_version = 0;   // highest version recorded now
  std::vector<int> applied;  // versions this call applied, in order
};

// The advisory lock key, shared by every podium-server on a database ("podium" in ASCII).
inline constexpr int64_t kMigrationLockKey = 0x706f6469756d;

// Applies the missing migrations in version order in one transaction that holds
// pg_advisory_xact_lock(kMigrationLockKey), creating schema_migrations(version, name,
// applied_at) first if needed. Servers starting together serialize on the lock: the second
// finds everything applied. Throws MigrationError when the database records a version newer
// than any in `migrations` (this binary is older than the schema) or a migration fails (then
// nothing of this call is kept); DbError(unavailable) when the database cannot be reached.
MigrationOutcome apply_migrations(Database& db, const std::vector<Migration>& migrations);

namespace detail {
// Generated at build time from migrations/*.sql (embedded_migrations_data.cpp).
std::vector<std::pair<std::string_view, std::string_view>> embedded_migration_files();
}  // namespace detail

}  // namespace podium::db
