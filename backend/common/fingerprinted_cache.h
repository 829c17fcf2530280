#pragma once
// Answers kept in this process's memory, each under a key and the fingerprint of what it was
// computed from: a lookup with another fingerprint finds nothing (and drops the stale answer).
// Bounded by the bytes of the keys and answers kept; the least recently used go first.
// Thread-safe. GET /runs/{id}/metrics keeps settled runs' charts in one (run_metrics_routes.cpp).

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace podium {

class FingerprintedCache {
 public:
  explicit FingerprintedCache(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // The answer stored for `key` when it was stored under `fingerprint`.
  std::optional<std::string> find(const std::string& key, const std::string& fingerprint);
  // Stores (or replaces) the answer for `key`; an answer larger than the bound is not kept.
  void put(const std::string& key, const std::string& fingerprint, std::string body);
  std::size_t bytes() const;

 private:
  struct Entry {
    std::string key;
    std::string fingerprint;
    std::string body;
  };
  void erase(std::list<Entry>::iterator it);

  mutable std::mutex mutex_;
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::list<Entry> order_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace podium
