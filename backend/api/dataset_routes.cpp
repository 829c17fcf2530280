// Datasets: where training data lives and how much of it there is (the planner's data check).
#include "backend/api/api_context.h"
#include "backend/api/dataset_scan.h"
#include "backend/api/resolve.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"

namespace podium::api {

namespace {

const std::vector<std::string> kFormats = {"jsonl", "text", "arrayrecord", "tfrecord", "synthetic"};

std::string dataset_select() {
  return "SELECT id, seq, name, uri, format, records, bytes, tokens, tokens_per_record, "
         "created_by, " +
         rfc3339("created_at") + " AS created_at FROM datasets ";
}

nlohmann::json dataset_json(const db::Result& r, size_t i) {
  return {{"id", r.at(i, "id")},
          {"name", r.at(i, "name")},
          {"uri", r.at(i, "uri")},
          {"format", r.at(i, "format")},
          {"records", nullable_int(r, i, "records")},
          {"bytes", nullable_int(r, i, "bytes")},
          {"tokens", nullable_int(r, i, "tokens")},
          {"tokens_per_record", nullable_double(r, i, "tokens_per_record")},
          {"created_by", nullable_string(r, i, "created_by")},
          {"created_at", r.at(i, "created_at")}};
}

db::Param opt_int(const std::optional<int64_t>& v) {
  return v ? db::Param(std::to_string(*v)) : db::Param();
}

http::Response list_datasets(ApiContext& ctx, http::RequestContext& rc) {
  auto page = read_page(rc, ctx.cursor_key);
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        return tx.exec(
            dataset_select() + "WHERE ($1::bigint IS NULL OR seq < $1) ORDER BY seq DESC LIMIT $2",
            {page.after_param(), page.limit_param()});
      },
      db::TxMode::read_only);
  nlohmann::json items = nlohmann::json::array();
  std::vector<int64_t> seqs;
  for (size_t i = 0; i < r.size(); ++i) {
    items.push_back(dataset_json(r, i));
    seqs.push_back(r.int64(i, "seq"));
  }
  return json_response(200, page_response(std::move(items), seqs, page, ctx.cursor_key));
}

http::Response create_dataset(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto name = in.string("name", true, 128);
  auto uri = in.string("uri", true, 2048);
  auto format = in.choice("format", true, kFormats);
  auto records = in.integer("records", false, 0);
  auto bytes = in.integer("bytes", false, 0);
  auto tokens = in.integer("tokens", false, 0);
  auto tokens_per_record = in.number("tokens_per_record", false, 0, 1e12);
  in.reject_unknown_fields();
  in.finish();

  if (auto path = local_path(*uri); path && *format != "synthetic") {
    // The server reads local files itself so that the planner's data check rests on facts.
    // Reading reveals whether a server-side file exists and its size, so only admins may
    // register a local path; members register remote URIs with the figures they know.
    if (!rc.principal->is_admin())
      throw http::forbidden(
          "registering a local path makes the server read it; ask an admin, or give a remote "
          "URI");
    auto scan = scan_dataset(*path, *format, std::chrono::seconds(20));
    if (scan.error) throw http::unprocessable(*scan.error, {{"uri", *scan.error}});
    bytes = scan.bytes;
    if (scan.records) records = scan.records;
  }
  const std::string id = new_id("ds");
  auto r = ctx.db.transact([&](db::Transaction& tx) {
    if (!tx.exec("SELECT 1 FROM datasets WHERE name = $1", {*name}).empty())
      throw http::conflict("a dataset named '" + *name + "' exists");
    tx.exec(
        "INSERT INTO datasets (id, name, uri, format, records, bytes, tokens, tokens_per_record, "
        "created_by) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        {id, *name, *uri, *format, opt_int(records), opt_int(bytes), opt_int(tokens),
         tokens_per_record ? db::Param(std::to_string(*tokens_per_record)) : db::Param(),
         user_id(rc)});
    audit(tx, rc, "create", "dataset", id, {{"name", *name}, {"uri", *uri}});
    return tx.exec(dataset_select() + "WHERE id = $1", {id});
  });
  return json_response(201, dataset_json(r, 0));
}

http::Response get_dataset(ApiContext& ctx, http::RequestContext& rc) {
  auto r = ctx.db.transact(
      [&](db::Transaction& tx) {
        auto id = find_dataset_id(tx, rc.param("id"));
        if (!id) throw http::not_found("no dataset " + rc.param("id"));
        return tx.exec(dataset_select() + "WHERE id = $1", {*id});
      },
      db::TxMode::read_only);
  return json_response(200, dataset_json(r, 0));
}

http::Response delete_dataset(ApiContext& ctx, http::RequestContext& rc) {
  ctx.db.transact([&](db::Transaction& tx) {
    auto id = find_dataset_id(tx, rc.param("id"));
    if (!id) throw http::not_found("no dataset " + rc.param("id"));
    auto r = tx.exec(
        "SELECT created_by, (SELECT count(*) FROM runs WHERE dataset_id = $1) AS runs "
        "FROM datasets WHERE id = $1",
        {*id});
    if (!rc.principal->is_admin() && r.at(0, "created_by") != user_id(rc))
      throw http::forbidden("only the dataset's creator or an admin may delete it");
    if (r.int64(0, "runs") > 0)
      throw http::conflict("runs refer to this dataset; delete them first");
    tx.exec("DELETE FROM datasets WHERE id = $1", {*id});
    audit(tx, rc, "delete", "dataset", *id);
  });
  return http::Response::empty(204);
}

}  // namespace

void register_dataset_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/datasets", http::Access::reader, list_datasets);
  routes.add("POST", "/api/v1/datasets", http::Access::writer, create_dataset);
  routes.add("GET", "/api/v1/datasets/{id}", http::Access::reader, get_dataset);
  routes.add("DELETE", "/api/v1/datasets/{id}", http::Access::writer, delete_dataset);
}

}  // namespace podium::api
