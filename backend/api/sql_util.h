#pragma once
// Helpers shared by the resource handlers: ids, timestamps, pagination, JSON from rows.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/common/router.h"
#include "backend/db/database.h"

namespace podium::api {

// Opaque resource id: a short type prefix and 16 random hex digits ("run_3f9c...").
std::string new_id(const std::string& prefix);

// SQL expression rendering a timestamptz column as RFC 3339 UTC with microseconds.
std::string rfc3339(const std::string& column);

struct Page {
  int limit = 50;
  std::optional<int64_t> after_seq;  // keyset position from the cursor

  // The two parameters of a keyset page query, "($n::bigint IS NULL OR seq < $n) ... LIMIT $m":
  // the position (NULL on the first page) and one row more than the page, to tell whether
  // there is a next one (page_response).
  db::Param after_param() const {
    return after_seq ? db::Param(std::to_string(*after_seq)) : db::Param();
  }
  std::string limit_param() const { return std::to_string(limit + 1); }
};
// Reads ?limit= (1..500, default 50) and ?cursor=; throws Problem 400 for bad values.
Page read_page(const http::RequestContext& ctx, const std::string& cursor_key);
// Builds {"items":[...],"next_cursor":...} from rows fetched with LIMIT page.limit + 1.
nlohmann::json page_response(nlohmann::json items, const std::vector<int64_t>& seqs,
                             const Page& page, const std::string& cursor_key);

std::optional<nlohmann::json> json_column(const db::Result& r, size_t row, const std::string& col);
nlohmann::json nullable_int(const db::Result& r, size_t row, const std::string& col);
nlohmann::json nullable_double(const db::Result& r, size_t row, const std::string& col);
nlohmann::json nullable_string(const db::Result& r, size_t row, const std::string& col);

// Writes one audit row in the caller's transaction.
void audit(db::Transaction& tx, const http::RequestContext& ctx, const std::string& action,
           const std::string& resource_type, const std::string& resource_id,
           const nlohmann::json& detail = nlohmann::json::object());

http::Response json_response(int status, const nlohmann::json& body);

// An optional integer query parameter in [min, max]; throws Problem 400 naming the parameter and
// `rule` (e.g. "an integer >= 1") when it is present but not such an integer.
std::optional<int64_t> query_integer(const http::RequestContext& ctx, const std::string& name,
                                     int64_t min, int64_t max, const std::string& rule);

// Caller must be signed in as a user; returns the user id.
const std::string& user_id(const http::RequestContext& ctx);

}  // namespace podium::api
