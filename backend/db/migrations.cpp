#include "backend/db/migrations.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace podium::db {
namespace {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

std::string label(const Migration& m) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%04d", m.version);
  return std::string(digits) + "_" + m.name;
}

}  // namespace

std::optional<std::pair<int, std::string>> parse_migration_file_name(std::string_view file) {
  constexpr std::string_view kExt = ".sql";
  if (file.size() <= kExt.size() || file.substr(file.size() - kExt.size()) != kExt) {
    return std::nullopt;
  }
  const std::string_view stem = file.substr(0, file.size() - kExt.size());
  const size_t underscore = stem.find('_');
  if (underscore == 0 || underscore == std::string_view::npos || underscore + 1 == stem.size()) {
    return std::nullopt;
  }
  const std::string_view digits = stem.substr(0, underscore);
  const std::string_view name = stem.substr(underscore + 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  if (!std::all_of(name.begin(), name.end(), name_char)) return std::nullopt;
  int version = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), version);
  if (ec != std::errc() || end != digits.data() + digits.size() || version <= 0) {
    return std::nullopt;
  }
  return std::make_pair(version, std::string(name));
}

std::vector<Migration> migrations_from_files(
    const std::vector<std::pair<std::string, std::string>>& files) {
  std::map<int, Migration> by_version;
  std::map<int, std::string> file_of;
  for (const auto& [file, sql] : files) {
    if (file.empty() || file.front() == '.') continue;
    if (file.size() < 4 || file.substr(file.size() - 4) != ".sql") continue;
    auto parsed = parse_migration_file_name(file);
    if (!parsed) {
      throw MigrationError("migration file \"" + file +
                           "\" is not named NNNN_name.sql (digits, '_', letters/digits/-/_)");
    }
    auto [it, inserted] = by_version.try_emplace(parsed->first);
    if (!inserted) {
      throw MigrationError("migrations \"" + file_of[parsed->first] + "\" and \"" + file +
                           "\" have the same version " + std::to_string(parsed->first));
    }
    file_of[parsed->first] = file;
    it->second = Migration{parsed->first, parsed->second, sql};
  }
  std::vector<Migration> out;
  out.reserve(by_version.size());
  for (auto& [version, m] : by_version) out.push_back(std::move(m));
  return out;
}

std::vector<Migration> load_migrations(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec)
    throw MigrationError("cannot read migrations directory " + dir.string() + ": " + ec.message());
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& entry : it) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    if (!in) throw MigrationError("cannot read " + entry.path().string());
    std::ostringstream text;
    text << in.rdbuf();
    files.emplace_back(entry.path().filename().string(), text.str());
  }
  return migrations_from_files(files);
}

std::vector<Migration> embedded_migrations() {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& [name, sql] : detail::embedded_migration_files()) {
    files.emplace_back(std::string(name), std::string(sql));
  }
  return migrations_from_files(files);
}

MigrationOutcome apply_migrations(Database& db, const std::vector<Migration>& migrations) {
  MigrationOutcome outcome;
  int known_max = 0;
  for (const Migration& m : migrations) known_max = std::max(known_max, m.version);

  // Not db.transact(): a migration is not re-run blindly; a failure stops the server.
  Transaction tx = db.begin();
  // Waiting for another server's migrations and running ours may take longer than any request.
  tx.set_statement_timeout(std::chrono::milliseconds(0));
  // The lock comes first: two servers on an empty database would otherwise both try to create
  // schema_migrations (CREATE TABLE IF NOT EXISTS is not safe against a concurrent creator).
  tx.exec("SELECT pg_advisory_xact_lock($1)", {std::to_string(kMigrationLockKey)});
  tx.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations ("
      " version integer PRIMARY KEY,"
      " name text NOT NULL,"
      " applied_at timestamptz NOT NULL DEFAULT now())");
  Result recorded = tx.exec("SELECT version, name FROM schema_migrations ORDER BY version");
  std::map<int, std::string> applied;
  for (size_t i = 0; i < recorded.size(); ++i) {
    applied[static_cast<int>(recorded.int64(i, "version"))] = recorded.at(i, "name");
  }
  outcome.previous_version = applied.empty() ? 0 : applied.rbegin()->first;
  if (outcome.previous_version > known_max) {
    const auto& [newest, newest_name] = *applied.rbegin();
    throw MigrationError("the database schema is at version " + std::to_string(newest) + " (" +
                         newest_name + ") but this podium-server knows migrations up to " +
                         std::to_string(known_max) +
                         ": it is older than the database; run a newer podium-server");
  }
  for (const Migration& m : migrations) {
    auto it = applied.find(m.version);
    if (it != applied.end()) {
      if (it->second != m.name) {
        spdlog::warn("migration {} is recorded as \"{}\" but this binary calls it \"{}\"",
                     m.version, it->second, m.name);
      }
      continue;
    }
    try {
      tx.exec_script(m.sql);
    } catch (const DbError& e) {
      if (e.kind() == DbError::Kind::unavailable) throw;
      throw MigrationError("migration " + label(m) + " failed: " + e.what() +
                           (e.sqlstate().empty() ? "" : " [SQLSTATE " + e.sqlstate() + "]"));
    }
    tx.exec("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
            {std::to_string(m.version), m.name});
    outcome.applied.push_back(m.version);
  }
  tx.commit();
  outcome.current_version = std::max(outcome.previous_version, known_max);
  if (outcome.applied.empty()) {
    spdlog::info("database schema is up to date at version {}", outcome.current_version);
  } else {
    for (const Migration& m : migrations) {
      if (std::find(outcome.applied.begin(), outcome.applied.end(), m.version) !=
          outcome.applied.end()) {
        spdlog::info("applied migration {}", label(m));
      }
    }
  }
  return outcome;
}

}  // namespace podium::db
