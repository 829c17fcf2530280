#pragma once
// Timestamps in query parameters (GET /runs?since=&until=): RFC 3339 date-times only, checked
// here so that nothing PostgreSQL would read differently (or refuse mid-query) gets that far.

#include <optional>
#include <string>

#include "backend/common/router.h"

namespace podium::api {

// True for an RFC 3339 date-time ("2026-11-27T12:00:00Z", "2026-11-27T13:00:00.5+01:00") that
// names a real calendar day and clock time.
bool valid_rfc3339(const std::string& text);

// The query parameter `name` when present; Problem 400 naming it when it is not RFC 3339.
std::optional<std::string> query_rfc3339(const http::RequestContext& ctx, const std::string& name);

}  // namespace podium::api
