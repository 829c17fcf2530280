// Code bundles: PUT /api/v1/bundles/{digest} stores the archive `podium runs submit --code`
// packed (checked: digest, gzip'd ustar, safe paths, limits); GET returns its facts or bytes;
// agents fetch the bundle of a run they hold a rank of, and ranks under Slurm or Kubernetes the
// bundle of their own attempt's run with its attach token (docs/agent-protocol.md).
#include <sodium.h>

#include <chrono>

#include "backend/api/api_context.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"
#include "backend/common/problem.h"
#include "engine/bundle/archive.h"
#include "engine/bundle/bundle_files.h"

namespace podium::api {

namespace {

using nlohmann::json;

constexpr size_t kChunkBytes = 1 << 20;
// The whole upload, instead of the read deadline.
constexpr std::chrono::seconds kUploadDeadline{600};

std::string to_hex(std::string_view bytes) {
  std::string out(bytes.size() * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                 bytes.size());
  out.pop_back();
  return out;
}

std::string from_hex(std::string_view hex) {
  std::string out(hex.size() / 2, '\0');
  size_t len = 0;
  if (sodium_hex2bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), hex.data(),
                     hex.size(), nullptr, &len, nullptr) != 0)
    throw std::runtime_error("a stored bundle chunk is not hex");
  out.resize(len);
  return out;
}

const std::string& digest_param(const http::RequestContext& rc) {
  const auto& d = rc.params.at("digest");
  if (!bundle::valid_digest(d))
    throw http::bad_request(
        "a bundle is named by \"sha256:<64 lowercase hex>\", not '" + d.substr(0, 80) + "'",
        {{"digest", "must be sha256:<64 lowercase hex>"}});
  return d;
}

std::string bundle_select() {
  return "SELECT b.digest, b.size_bytes, b.files, b.uncompressed_bytes, b.chunks, u.username AS "
         "created_by, " +
         rfc3339("b.created_at") +
         " AS created_at FROM code_bundles b LEFT JOIN users u ON u.id = b.created_by "
         "WHERE b.digest = $1";
}

json bundle_json(const db::Result& r) {
  return {{"digest", r.at(0, "digest")},
          {"size_bytes", r.int64(0, "size_bytes")},
          {"files", r.int64(0, "files")},
          {"uncompressed_bytes", r.int64(0, "uncompressed_bytes")},
          {"created_by", nullable_string(r, 0, "created_by")},
          {"created_at", r.at(0, "created_at")}};
}

// The archive's chunks, one short read-only transaction each, so that a download holds one
// chunk in memory whatever the bundle's size.
class ChunkStream : public http::BodyStream {
 public:
  ChunkStream(ApiContext& ctx, std::string digest, int chunks)
      : ctx_(ctx), digest_(std::move(digest)), chunks_(chunks) {}
  bool next(std::string& chunk) override {
    if (seq_ >= chunks_) return false;
    auto r = ctx_.db.transact(
        [&](db::Transaction& tx) {
          return tx.exec(
              "SELECT encode(bytes, 'hex') AS hex FROM code_bundle_chunks WHERE digest = $1 AND "
              "seq = $2::int",
              {digest_, std::to_string(seq_)});
        },
        db::TxMode::read_only);
    if (r.empty()) return false;  // cut short: the client's digest check fails loudly
    chunk = from_hex(r.at(0, "hex"));
    ++seq_;
    return true;
  }

 private:
  ApiContext& ctx_;
  std::string digest_;
  int chunks_;
  int seq_ = 0;
};

http::Response archive_response(ApiContext& ctx, const std::string& digest, const db::Result& r) {
  http::Response res;
  res.status = 200;
  res.set_header("Content-Type", "application/gzip");
  res.set_header("Cache-Control", "private, max-age=31536000, immutable");
  res.set_header("X-Podium-Bundle-Digest", digest);
  res.stream = std::make_shared<ChunkStream>(ctx, digest, static_cast<int>(r.int64(0, "chunks")));
  return res;
}

http::Response put_bundle(ApiContext& ctx, http::RequestContext& rc) {
  const auto digest = digest_param(rc);
  const std::string& body = rc.request.body;
  if (body.empty()) throw http::bad_request("the request body holds no bundle");
  const auto actual = bundle::bundle_digest(body);
  if (actual != digest)
    throw http::bad_request("the body's digest is " + actual + ", not " + digest +
                                " (the upload was altered or cut short)",
                            {{"digest", "does not match the body"}});
  bundle::BundleLimits limits;
  limits.max_compressed_bytes = ctx.config.max_bundle_bytes;
  bundle::BundleSummary summary;
  try {
    summary = bundle::inspect_bundle(body, limits);
  } catch (const bundle::BundleError& e) {
    throw http::bad_request(std::string("not a usable code bundle: ") + e.what());
  }
  const auto chunks = (body.size() + kChunkBytes - 1) / kChunkBytes;
  auto [status, row] = ctx.db.transact([&](db::Transaction& tx) {
    auto inserted = tx.exec(
        "INSERT INTO code_bundles (digest, size_bytes, files, uncompressed_bytes, chunks, "
        "created_by) VALUES ($1, $2::bigint, $3::bigint, $4::bigint, $5::int, $6) ON CONFLICT "
        "(digest) DO NOTHING RETURNING digest",
        {digest, std::to_string(body.size()), std::to_string(summary.entries),
         std::to_string(summary.uncompressed_bytes), std::to_string(chunks), user_id(rc)});
    if (!inserted.empty()) {
      for (size_t i = 0; i < chunks; ++i)
        tx.exec(
            "INSERT INTO code_bundle_chunks (digest, seq, bytes) VALUES ($1, $2::int, "
            "decode($3, 'hex'))",
            {digest, std::to_string(i),
             to_hex(std::string_view(body).substr(i * kChunkBytes, kChunkBytes))});
      audit(tx, rc, "bundle.create", "bundle", digest,
            {{"size_bytes", body.size()}, {"files", summary.entries}});
    }
    return std::pair{inserted.empty() ? 200 : 201, tx.exec(bundle_select(), {digest})};
  });
  auto res = json_response(status, bundle_json(row));
  res.set_header("Location", "/api/v1/bundles/" + digest);
  return res;
}

db::Result find_bundle(ApiContext& ctx, const std::string& digest) {
  auto r = ctx.db.transact([&](db::Transaction& tx) { return tx.exec(bundle_select(), {digest}); },
                           db::TxMode::read_only);
  if (r.empty()) throw http::not_found("no bundle " + digest);
  return r;
}

http::Response get_bundle(ApiContext& ctx, http::RequestContext& rc) {
  return json_response(200, bundle_json(find_bundle(ctx, digest_param(rc))));
}

http::Response get_bundle_archive(ApiContext& ctx, http::RequestContext& rc) {
  const auto digest = digest_param(rc);
  return archive_response(ctx, digest, find_bundle(ctx, digest));
}

// A host's agent may fetch only the bundle of a run it holds a live rank of; a rank under an
// external engine (its attach token) only the bundle of its own attempt's run, while that
// attempt lives. A cluster's worker token (which may only register) fetches nothing.
http::Response get_agent_bundle(ApiContext& ctx, http::RequestContext& rc) {
  const auto digest = digest_param(rc);
  const auto& worker = rc.principal->worker_id;
  const auto& attempt = rc.principal->attempt_id;
  if (!attempt.empty()) {
    auto mine = ctx.db.transact(
        [&](db::Transaction& tx) {
          return tx.exec(
              "SELECT 1 FROM attempts a JOIN runs r ON r.id = a.run_id WHERE a.id = $1 AND "
              "a.finished_at IS NULL AND a.ending_cause IS NULL AND r.code_bundle = $2",
              {attempt, digest});
        },
        db::TxMode::read_only);
    if (mine.empty())
      throw http::forbidden("attempt " + attempt + " is ending or over, or its run does not use " +
                            digest);
    return archive_response(ctx, digest, find_bundle(ctx, digest));
  }
  if (worker.empty())
    throw http::forbidden(
        "bundles are fetched with the credential a host's registration returned, or a rank's "
        "attach token");
  auto held = ctx.db.transact(
      [&](db::Transaction& tx) {
        return tx.exec(
            "SELECT 1 FROM attempt_hosts ah JOIN attempts a ON a.id = "
            "ah.attempt_id JOIN runs r ON r.id = a.run_id WHERE ah.worker_id = $1 "
            "AND ah.ended_at IS NULL AND r.code_bundle = $2 LIMIT 1",
            {worker, digest});
      },
      db::TxMode::read_only);
  if (held.empty())
    throw http::forbidden("worker " + worker + " holds no live rank of a run that uses " + digest);
  return archive_response(ctx, digest, find_bundle(ctx, digest));
}

}  // namespace

void register_bundle_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  // Uploads are larger than any other body (limits.max_bundle_bytes) and may take minutes.
  routes.add("PUT", "/api/v1/bundles/{digest}", http::Access::writer, put_bundle,
             http::large_body(ctx.config.max_bundle_bytes, kUploadDeadline));
  routes.add("GET", "/api/v1/bundles/{digest}", http::Access::reader, get_bundle);
  routes.add("GET", "/api/v1/bundles/{digest}/archive", http::Access::reader, get_bundle_archive);
  routes.add("GET", "/api/v1/agent/bundles/{digest}", http::Access::agent, get_agent_bundle);
}

}  // namespace podium::api
