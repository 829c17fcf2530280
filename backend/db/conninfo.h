#pragma once
// Helpers for libpq connection strings, in either form libpq accepts
// ("host=/run/pg dbname=podium" or "postgresql://user@host:5432/podium").

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace podium::db {

// Throws std::invalid_argument with libpq's explanation when libpq cannot parse it, so a bad
// PODIUM_DATABASE_URL stops the server at start instead of failing every request.
void validate_conninfo(const std::string& conninfo);

// The same connection with some keywords replaced or added, as a key=value string.
// Example: conninfo_with(url, {{"dbname", "podium_t_1234"}}).
std::string conninfo_with(const std::string& conninfo,
                          const std::vector<std::pair<std::string, std::string>>& overrides);

// Value quoted for a key=value connection string: 'it''s' style is not libpq's, it wants \'.
std::string conninfo_quote(std::string_view value);

// For logs: the connection string with any password replaced by "***".
std::string conninfo_for_log(const std::string& conninfo);

}  // namespace podium::db
