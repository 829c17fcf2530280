#include "backend/api/run_summary_cache.h"

#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "backend/api/run_summary.h"

namespace podium::api {

namespace {

using nlohmann::json;

// About 10 kB of JSON each: a few tens of MB at most.
constexpr std::size_t kMaxEntries = 4096;

// Least recently used entries leave first.
class SummaryCache {
 public:
  std::optional<json> find(const std::string& run_id, const std::string& fingerprint) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(run_id);
    if (it == index_.end() || it->second->fingerprint != fingerprint) {
      ++misses_;
      return std::nullopt;
    }
    order_.splice(order_.begin(), order_, it->second);
    ++hits_;
    return it->second->summary;
  }

  void put(const std::string& run_id, const std::string& fingerprint, json summary) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = index_.find(run_id); it != index_.end()) {
      order_.erase(it->second);
      index_.erase(it);
    }
    order_.push_front({run_id, fingerprint, std::move(summary)});
    index_[run_id] = order_.begin();
    while (order_.size() > kMaxEntries) {
      index_.erase(order_.back().run_id);
      order_.pop_back();
    }
  }

  SummaryCacheStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return {order_.size(), hits_, misses_};
  }

 private:
  struct Entry {
    std::string run_id;
    std::string fingerprint;
    json summary;
  };
  std::mutex mu_;
  std::list<Entry> order_;
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
};

SummaryCache& cache() {
  static SummaryCache c;
  return c;
}

}  // namespace

json summary_of(db::Transaction& tx, const std::string& run_id) {
  auto fp = tx.exec(
      "SELECT r.state IN ('succeeded', 'failed', 'cancelled') AND r.finished_at IS NOT NULL AND "
      "NOT EXISTS (SELECT 1 FROM attempts a WHERE a.run_id = r.id AND COALESCE(a.finished_at, "
      "CASE WHEN a.state IN ('succeeded', 'failed', 'cancelled') THEN a.ending_at END) IS NULL) "
      "AS settled, r.xmin::text || '/' || COALESCE(c.xmin::text, '-') || '/' || "
      "COALESCE((SELECT string_agg(a.xmin::text, ',' ORDER BY a.number) FROM attempts a WHERE "
      "a.run_id = r.id), '') AS fingerprint "
      "FROM runs r LEFT JOIN clusters c ON c.id = r.cluster_id WHERE r.id = $1",
      {run_id});
  const bool settled = !fp.empty() && fp.boolean(0, "settled");
  if (settled)
    if (auto hit = cache().find(run_id, fp.at(0, "fingerprint"))) return std::move(*hit);
  json summary = summarize(load_run_facts(tx, run_id));  // 404 when unknown
  if (settled) cache().put(run_id, fp.at(0, "fingerprint"), summary);
  return summary;
}

SummaryCacheStats summary_cache_stats() {
  return cache().stats();
}

}  // namespace podium::api
