#pragma once
// Credentials this process verified recently (a token's or session's hash -> who it is), so that
// a request does not pay a database round trip to learn who sent it. Every API call starts with
// that lookup: it was half the statements of GET /runs/{id} (docs/benchmarks.md, api_get_run).
//
// An entry is served only while nothing can have changed it unseen:
// - any change to a credential's row (revoked, its user disabled or re-roled, a session ended,
//   a host registered again) sends NOTIFY podium_auth from a trigger (migration 0013), in the
//   changing transaction, so every replica hears of it after the commit; an entry read before
//   such a notification is not served after it;
// - while the listening connection is down nothing is served or stored (notifications could be
//   missed), and its reconnect counts as a change;
// - this process's own changes call forget_all() right after their commit, so the same client's
//   next request (revoke, then use) never races the notification;
// - each entry lives at most `ttl` (and a session no longer than it is valid).
// What remains is the notification's delay between replicas: milliseconds after the commit.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "backend/common/principal.h"

namespace podium::http {

// Where the cache learns that credentials may have changed in another process (the server's
// notification hub, on channel podium_auth).
class CredentialChanges {
 public:
  virtual ~CredentialChanges() = default;
  // False while notifications could be missed (the listening connection is down or not up yet).
  virtual bool watching() const = 0;
  // A position in the stream of notifications ...
  virtual std::uint64_t position() const = 0;
  // ... and whether a change arrived after it (a reconnect counts: some may have been missed).
  virtual bool changed_since(std::uint64_t position) const = 0;
};

struct CredentialCacheOptions {
  std::chrono::seconds ttl{10};
  // Beyond this, expired entries are dropped, then all (a flood of distinct tokens, valid or
  // not, cannot grow memory; only valid ones are stored at all).
  size_t max_entries = 10000;
};

class CredentialCache {
 public:
  using Clock = std::chrono::steady_clock;

  CredentialCache(const CredentialChanges& changes, CredentialCacheOptions options,
                  std::function<Clock::time_point()> now = Clock::now);

  // Taken before the database is read: store() keeps what was read only if no change arrived
  // (or forget_all() ran) in between.
  struct Ticket {
    std::uint64_t position = 0;
    std::uint64_t epoch = 0;
    bool watching = false;
  };
  Ticket ticket() const;

  std::optional<Principal> find(const std::string& key);
  // `valid_for` shortens the entry's life below the ttl (a session that expires sooner).
  void store(const std::string& key, const Principal& principal, const Ticket& ticket,
             std::optional<Clock::duration> valid_for = std::nullopt);
  // After this process committed a change to credentials.
  void forget_all();

  size_t size() const;

 private:
  struct Entry {
    Principal principal;
    std::uint64_t position;  // the ticket's: a change after it makes the entry stale
    Clock::time_point expires;
  };

  const CredentialChanges& changes_;
  const CredentialCacheOptions options_;
  const std::function<Clock::time_point()> now_;
  mutable std::mutex mu_;
  std::uint64_t epoch_ = 0;  // bumped by forget_all()
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace podium::http
