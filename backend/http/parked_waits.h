#pragma once
// The registry of parked waits (Deferred responses, idle event streams): which connection to
// wake for which key. No Beast here: a wait is a callback that ends it on its connection's
// strand (session.h), registered under "channel:key" keys (Wait::keys).
//
// The registry holds weak references: a wait that ended is skipped, and erased when its key is
// next woken or when it unregisters itself.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace podium::http {

struct ParkedWait {
  std::function<void()> wake;  // posts the end of the wait to its connection's strand
};

class ParkedWaits {
 public:
  void add(const std::vector<std::string>& keys, const std::shared_ptr<ParkedWait>& wait);
  void remove(const std::vector<std::string>& keys, const ParkedWait* wait);
  // Wakes the waits under "channel:key"; key "*" every wait of the channel, channel "" every
  // wait. The callbacks run after the registry's lock is released.
  void wake(const std::string& channel, const std::string& key);
  int count() const;  // waits registered and not yet ended

 private:
  mutable std::mutex mu_;
  std::multimap<std::string, std::weak_ptr<ParkedWait>> by_key_;  // guarded by mu_
};

}  // namespace podium::http
