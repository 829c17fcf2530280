#include "backend/common/fingerprinted_cache.h"

#include <utility>

namespace podium {

std::optional<std::string> FingerprintedCache::find(const std::string& key,
                                                    const std::string& fingerprint) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  if (it->second->fingerprint != fingerprint) {
    erase(it->second);  // stale: the run changed since
    return std::nullopt;
  }
  order_.splice(order_.begin(), order_, it->second);
  return it->second->body;
}

void FingerprintedCache::put(const std::string& key, const std::string& fingerprint,
                             std::string body) {
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) erase(it->second);
  const std::size_t size = key.size() + body.size();
  if (size > max_bytes_) return;
  while (bytes_ + size > max_bytes_ && !order_.empty()) erase(std::prev(order_.end()));
  order_.push_front({key, fingerprint, std::move(body)});
  index_[key] = order_.begin();
  bytes_ += size;
}

std::size_t FingerprintedCache::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

void FingerprintedCache::erase(std::list<Entry>::iterator it) {
  bytes_ -= it->key.size() + it->body.size();
  index_.erase(it->key);
  order_.erase(it);
}

}  // namespace podium
