#include "backend/http/parked_waits.h"

#include <iterator>

namespace podium::http {

void ParkedWaits::add(const std::vector<std::string>& keys,
                      const std::shared_ptr<ParkedWait>& wait) {
  std::lock_guard lock(mu_);
  for (const auto& k : keys) by_key_.emplace(k, wait);
}

void ParkedWaits::remove(const std::vector<std::string>& keys, const ParkedWait* wait) {
  std::lock_guard lock(mu_);
  for (const auto& k : keys) {
    auto [b, e] = by_key_.equal_range(k);
    for (auto it = b; it != e;) {
      auto sp = it->second.lock();
      it = !sp || sp.get() == wait ? by_key_.erase(it) : std::next(it);
    }
  }
}

void ParkedWaits::wake(const std::string& channel, const std::string& key) {
  std::vector<std::shared_ptr<ParkedWait>> hit;
  {
    std::lock_guard lock(mu_);
    auto take = [&](std::multimap<std::string, std::weak_ptr<ParkedWait>>::iterator it) {
      if (auto sp = it->second.lock()) hit.push_back(std::move(sp));
      return by_key_.erase(it);
    };
    if (channel.empty()) {
      for (auto it = by_key_.begin(); it != by_key_.end();) it = take(it);
    } else if (key == "*") {
      const std::string prefix = channel + ":";
      for (auto it = by_key_.lower_bound(prefix);
           it != by_key_.end() && it->first.compare(0, prefix.size(), prefix) == 0;)
        it = take(it);
    } else {
      auto [b, e] = by_key_.equal_range(channel + ":" + key);
      for (auto it = b; it != e;) it = take(it);
    }
  }
  for (auto& w : hit) w->wake();
}

int ParkedWaits::count() const {
  std::lock_guard lock(mu_);
  int n = 0;
  for (const auto& [k, w] : by_key_) n += w.expired() ? 0 : 1;
  return n;
}

}  // namespace podium::http
