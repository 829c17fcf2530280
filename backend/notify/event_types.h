#pragma once
// The run events a webhook can subscribe to (docs/openapi.yaml WebhookEvent). Which run_events
// row is which type is decided in PostgreSQL (migrations/0021_webhooks.sql,
// podium_webhook_event_type), where the outbox rows are written.

#include <array>
#include <string_view>

namespace podium::notify {

inline constexpr std::array<std::string_view, 8> kEventTypes = {
    "run.started",   "run.succeeded", "run.failed",          "run.stalled",
    "run.preempted", "run.recovered", "run.underperforming", "run.refused"};

bool is_event_type(std::string_view name);

}  // namespace podium::notify
