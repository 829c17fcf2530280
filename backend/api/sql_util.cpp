#include "backend/api/sql_util.h"

#include <charconv>

#include "backend/common/cursor.h"
#include "backend/common/problem.h"
#include "backend/common/secrets.h"

namespace podium::api {

std::string new_id(const std::string& prefix) {
  return prefix + "_" + secrets::random_hex(8);
}

std::string rfc3339(const std::string& column) {
  return "to_char(" + column + " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";
}

Page read_page(const http::RequestContext& ctx, const std::string& cursor_key) {
  Page page;
  if (auto l = ctx.request.query_param("limit")) {
    int v = 0;
    auto [p, ec] = std::from_chars(l->data(), l->data() + l->size(), v);
    if (ec != std::errc() || p != l->data() + l->size() || v < 1 || v > 500)
      throw http::bad_request("limit must be an integer from 1 to 500",
                              {{"limit", "must be an integer from 1 to 500"}});
    page.limit = v;
  }
  if (auto c = ctx.request.query_param("cursor"); c && !c->empty()) {
    auto pos = http::decode_cursor(cursor_key, *c);
    if (!pos || !pos->contains("s") || !(*pos)["s"].is_number_integer())
      throw http::bad_request("cursor is not valid: use the next_cursor of a previous page",
                              {{"cursor", "is not a cursor this server issued"}});
    page.after_seq = (*pos)["s"].get<int64_t>();
  }
  return page;
}

nlohmann::json page_response(nlohmann::json items, const std::vector<int64_t>& seqs,
                             const Page& page, const std::string& cursor_key) {
  nlohmann::json next = nullptr;
  if (items.size() > static_cast<size_t>(page.limit)) {
    items.erase(items.begin() + page.limit, items.end());
    next = http::encode_cursor(cursor_key, {{"s", seqs.at(static_cast<size_t>(page.limit) - 1)}});
  }
  return {{"items", std::move(items)}, {"next_cursor", next}};
}

std::optional<nlohmann::json> json_column(const db::Result& r, size_t row, const std::string& col) {
  auto v = r.opt(row, col);
  if (!v) return std::nullopt;
  auto j = nlohmann::json::parse(*v, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

nlohmann::json nullable_int(const db::Result& r, size_t row, const std::string& col) {
  auto v = r.opt_int64(row, col);
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json nullable_double(const db::Result& r, size_t row, const std::string& col) {
  auto v = r.opt_double(row, col);
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json nullable_string(const db::Result& r, size_t row, const std::string& col) {
  auto v = r.opt(row, col);
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

void audit(db::Transaction& tx, const http::RequestContext& ctx, const std::string& action,
           const std::string& resource_type, const std::string& resource_id,
           const nlohmann::json& detail) {
  const std::string actor = ctx.principal ? ctx.principal->display() : "anonymous";
  tx.exec(
      "INSERT INTO audit_log (actor, action, resource_type, resource_id, detail) VALUES ($1, $2, "
      "$3, $4, $5::jsonb)",
      {actor, action, resource_type, resource_id,
       detail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
}

http::Response json_response(int status, const nlohmann::json& body) {
  return http::Response::json(status,
                              body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

const std::string& user_id(const http::RequestContext& ctx) {
  if (!ctx.principal || ctx.principal->kind != http::Principal::Kind::user) throw http::forbidden();
  return ctx.principal->user_id;
}

std::optional<int64_t> query_integer(const http::RequestContext& ctx, const std::string& name,
                                     int64_t min, int64_t max, const std::string& rule) {
  auto v = ctx.request.query_param(name);
  if (!v) return std::nullopt;
  int64_t out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (v->empty() || ec != std::errc() || p != v->data() + v->size() || out < min || out > max)
    throw http::bad_request(name + " must be " + rule, {{name, "must be " + rule}});
  return out;
}

}  // namespace podium::api
