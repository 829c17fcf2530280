#pragma once
// The delivery side of the webhook outbox (migrations/0021_webhooks.sql). Each pass takes the
// oldest due delivery with SELECT ... FOR UPDATE SKIP LOCKED, POSTs it and records the attempt in
// the same transaction: a replica that dies mid-attempt releases the row (its transaction rolls
// back) and the delivery is tried again, by it after a restart or by another replica; two
// replicas never work on one row at once. A receiver may see an event twice only when a server
// died after the receiver answered and before the commit: the event id is the same on every
// try, so receivers deduplicate on it.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "backend/common/config.h"
#include "backend/common/periodic_task.h"
#include "backend/db/database.h"
#include "backend/notify/address_guard.h"
#include "backend/notify/retry_schedule.h"
#include "backend/notify/webhook_http.h"

namespace podium::notify {

struct DeliverySettings {
  RetryPolicy retry;
  AllowList allow;
  HttpLimits http;
  std::string public_url;  // links in the text; "" for none
};

// The webhooks.* configuration; links in messages point at `dashboard_url`.
DeliverySettings delivery_settings(const ServerConfig& config, std::string dashboard_url);

// Injected in tests: the wall clock that decides what is due and when retries happen, and the
// jitter draw in [0, 1).
using WallClock = std::function<std::chrono::system_clock::time_point()>;
using JitterDraw = std::function<double()>;

// The outcome of one pass.
enum class DeliveryPass { idle, delivered, retry_scheduled, given_up };

// One due delivery, if any: attempted and recorded.
DeliveryPass deliver_one(db::Database& db, const DeliverySettings& settings, const WallClock& now,
                         const JitterDraw& draw);

// The server's loop: `threads` workers, each passing over due deliveries until none is left, then
// waiting `poll` (or a wake()).
class DeliveryLoop {
 public:
  DeliveryLoop(db::Database& db, DeliverySettings settings, int threads,
               std::chrono::milliseconds poll, std::shared_ptr<spdlog::logger> log);
  ~DeliveryLoop();
  void start();
  void stop();
  void wake();

 private:
  db::Database& db_;
  const DeliverySettings settings_;
  std::shared_ptr<spdlog::logger> log_;
  std::vector<std::unique_ptr<PeriodicTask>> workers_;
};

}  // namespace podium::notify
