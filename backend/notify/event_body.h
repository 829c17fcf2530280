#pragma once
// The JSON a webhook receives: {"id","type","created_at","run":{...},"text"}. `text` is one line
// that Slack's incoming webhooks accept as a message (&, < and > escaped as Slack asks), so a
// Slack URL works as a target without an adapter.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace podium::notify {

struct EventFacts {
  std::string event_id;    // "evt_<run_events.id>": the same on every retry and every webhook
  std::string type;        // run.succeeded, ...
  std::string created_at;  // RFC 3339, the event's time
  std::string cause;       // the run_events cause ("" when none)
  nlohmann::json detail;   // run_events.detail (figures of named kinds), or null
  nlohmann::json run;      // {"id","name","state","owner","cluster","failure_class",...}
  std::string run_url;     // <public_url>/runs/<id>, "" when the server has no public URL
};

// One line: "Podium: run <name> (<id>) succeeded at step 39 — <url>".
std::string event_text(const EventFacts& facts);
nlohmann::json event_body(const EventFacts& facts);

}  // namespace podium::notify
