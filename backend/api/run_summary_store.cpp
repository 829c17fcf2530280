#include "backend/api/run_summary_store.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <utility>

namespace podium::api {

namespace {

using nlohmann::json;

// Over `runs r LEFT JOIN clusters c`: whether the run is settled, and its fingerprint. Settled
// includes its plan-against-actual verdict being decided (plan_check.h): deciding writes the run
// row, which would make a summary stored before it stale at once.
constexpr const char* kSettledSql =
    "(r.state IN ('succeeded', 'failed', 'cancelled') AND r.finished_at IS NOT NULL AND "
    "r.plan_check IS NOT NULL AND "
    "NOT EXISTS (SELECT 1 FROM attempts a WHERE a.run_id = r.id AND COALESCE(a.finished_at, "
    "CASE WHEN a.state IN ('succeeded', 'failed', 'cancelled') THEN a.ending_at END) IS NULL))";
constexpr const char* kFingerprintSql =
    "(r.xmin::text || '/' || COALESCE(c.xmin::text, '-') || '/' || "
    "COALESCE((SELECT string_agg(a.xmin::text, ',' ORDER BY a.number) FROM attempts a WHERE "
    "a.run_id = r.id), ''))";

// The summary's form: bumped when members are added, so that older stored ones are recomputed.
constexpr const char* kSummaryForm = "2";

// What the options add to the fingerprint: "/2/plan<0.1x5" (form, threshold, steady steps).
std::string options_suffix(const SummaryOptions& options) {
  return std::string("/") + kSummaryForm + "/plan<" +
         nlohmann::json(options.plan_check.underperforming_ratio).dump() + "x" +
         std::to_string(options.plan_check.min_steady_steps);
}

}  // namespace

json summary_of(db::Transaction& tx, const std::string& run_id,
                std::vector<SummaryToStore>& to_store, const SummaryOptions& options) {
  static const std::string sql = std::string("SELECT ") + kSettledSql + " AS settled, " +
                                 kFingerprintSql +
                                 " AS fingerprint, s.fingerprint AS stored_fingerprint, "
                                 "s.summary::text AS stored "
                                 "FROM runs r LEFT JOIN clusters c ON c.id = r.cluster_id "
                                 "LEFT JOIN run_summaries s ON s.run_id = r.id WHERE r.id = $1";
  auto fp = tx.exec(sql, {run_id});
  const bool settled = !fp.empty() && fp.boolean(0, "settled");
  const std::string fingerprint =
      fp.empty() ? "" : fp.at(0, "fingerprint") + options_suffix(options);
  if (settled && fp.opt(0, "stored_fingerprint") == fingerprint) {
    json stored = json::parse(fp.at(0, "stored"), nullptr, /*allow_exceptions=*/false);
    if (stored.is_object()) return stored;
  }
  json summary = summarize(load_run_facts(tx, run_id), options);  // 404 when unknown
  if (settled) to_store.push_back({run_id, fingerprint, summary});
  return summary;
}

int store_summaries(db::Database& db, const std::vector<SummaryToStore>& summaries) {
  int stored = 0;
  for (const SummaryToStore& s : summaries) {
    try {
      db.exec_alone(
          "INSERT INTO run_summaries (run_id, fingerprint, summary) VALUES ($1, $2, $3::jsonb) "
          "ON CONFLICT (run_id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, "
          "summary = EXCLUDED.summary, computed_at = now()",
          {s.run_id, s.fingerprint, s.summary.dump()});
      ++stored;
    } catch (const std::exception& e) {
      spdlog::debug("summary of {} not stored: {}", s.run_id, e.what());
    }
  }
  return stored;
}

int precompute_summaries(db::Database& db, int max_runs, const SummaryOptions& options) {
  static const std::string sql =
      std::string(
          "SELECT r.id FROM runs r LEFT JOIN clusters c ON c.id = r.cluster_id "
          "LEFT JOIN run_summaries s ON s.run_id = r.id "
          "WHERE r.finished_at > now() - interval '7 days' AND ") +
      kSettledSql + " AND (s.run_id IS NULL OR s.fingerprint <> " + kFingerprintSql +
      " || $2) ORDER BY r.finished_at DESC LIMIT $1::int";
  auto due = db.transact(
      [&](db::Transaction& tx) {
        return tx.exec(sql, {std::to_string(max_runs), options_suffix(options)});
      },
      db::TxMode::read_only);
  int stored = 0;
  for (size_t i = 0; i < due.size(); ++i) {
    std::vector<SummaryToStore> computed;
    try {
      db.transact(
          [&](db::Transaction& tx) {
            computed.clear();
            summary_of(tx, due.at(i, "id"), computed, options);
          },
          db::TxMode::read_only);
    } catch (const std::exception& e) {
      // Deleted since it was listed, or not summarizable: the others go on.
      spdlog::debug("summary of {} not computed: {}", due.at(i, "id"), e.what());
      continue;
    }
    stored += store_summaries(db, computed);
  }
  return stored;
}

}  // namespace podium::api
