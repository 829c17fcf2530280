#pragma once
// The credential cache's view of NOTIFY podium_auth (sent by migration 0013's triggers) through
// the server's notification hub.

#include <cstdint>

#include "backend/common/credential_cache.h"
#include "backend/db/notification_hub.h"

namespace podium::api {

inline constexpr const char* kAuthChannel = "podium_auth";

class HubCredentialChanges : public http::CredentialChanges {
 public:
  explicit HubCredentialChanges(const db::NotificationHub& hub) : hub_(hub) {}
  bool watching() const override { return hub_.listening(); }
  std::uint64_t position() const override { return hub_.generation(); }
  bool changed_since(std::uint64_t position) const override {
    return hub_.fired_any(kAuthChannel, position);
  }

 private:
  const db::NotificationHub& hub_;
};

}  // namespace podium::api
