#include "backend/common/credential_cache.h"

#include <utility>

namespace podium::http {

CredentialCache::CredentialCache(const CredentialChanges& changes, CredentialCacheOptions options,
                                 std::function<Clock::time_point()> now)
    : changes_(changes), options_(options), now_(std::move(now)) {}

CredentialCache::Ticket CredentialCache::ticket() const {
  Ticket t;
  // watching first: a reconnect between the two reads moves the position past the ticket's.
  t.watching = changes_.watching();
  t.position = changes_.position();
  std::lock_guard lock(mu_);
  t.epoch = epoch_;
  return t;
}

std::optional<Principal> CredentialCache::find(const std::string& key) {
  if (!changes_.watching()) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  if (now_() >= it->second.expires || changes_.changed_since(it->second.position)) {
    entries_.erase(it);
    return std::nullopt;
  }
  return it->second.principal;
}

void CredentialCache::store(const std::string& key, const Principal& principal,
                            const Ticket& ticket, std::optional<Clock::duration> valid_for) {
  if (!ticket.watching || options_.ttl.count() <= 0) return;
  Clock::duration life = options_.ttl;
  if (valid_for && *valid_for < life) life = *valid_for;
  if (life <= Clock::duration::zero()) return;
  const auto now = now_();
  std::lock_guard lock(mu_);
  // What was read may predate a change that has since arrived: keep it only if none did.
  if (ticket.epoch != epoch_ || !changes_.watching() || changes_.changed_since(ticket.position))
    return;
  if (entries_.size() >= options_.max_entries && !entries_.count(key)) {
    for (auto it = entries_.begin(); it != entries_.end();)
      it = now >= it->second.expires ? entries_.erase(it) : std::next(it);
    if (entries_.size() >= options_.max_entries) entries_.clear();
  }
  entries_[key] = Entry{principal, ticket.position, now + life};
}

void CredentialCache::forget_all() {
  std::lock_guard lock(mu_);
  ++epoch_;
  entries_.clear();
}

size_t CredentialCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace podium::http
