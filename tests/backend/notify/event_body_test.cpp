// The delivered JSON and its Slack line (backend/notify/event_body.h).
#include "backend/notify/event_body.h"

#include <gtest/gtest.h>

namespace podium::notify {
namespace {

EventFacts facts(const std::string& type) {
  EventFacts f;
  f.event_id = "evt_42";
  f.type = type;
  f.created_at = "2026-11-27T12:00:00.000000Z";
  f.run = {{"id", "run_1"},
           {"name", "llama <8b> & co"},
           {"state", "failed"},
           {"failure_class", "oom"},
           {"last_step", 39}};
  return f;
}

TEST(EventBody, HasTheContractFields) {
  const auto b = event_body(facts("run.succeeded"));
  EXPECT_EQ(b["id"], "evt_42");
  EXPECT_EQ(b["type"], "run.succeeded");
  EXPECT_EQ(b["created_at"], "2026-11-27T12:00:00.000000Z");
  EXPECT_EQ(b["run"]["id"], "run_1");
  EXPECT_EQ(b["text"], "Podium: run llama &lt;8b&gt; &amp; co (run_1) succeeded at step 39");
}

TEST(EventBody, TextSaysWhatHappenedOnOneLine) {
  auto f = facts("run.failed");
  f.cause = "attempt 1 oom: RESOURCE_EXHAUSTED\nsecond line";
  f.run_url = "https://podium.example/runs/run_1";
  const std::string t = event_text(f);
  EXPECT_EQ(t,
            "Podium: run llama &lt;8b&gt; &amp; co (run_1) failed (oom): attempt 1 oom: "
            "RESOURCE_EXHAUSTED second line <https://podium.example/runs/run_1>");
  EXPECT_NE(event_text(facts("run.stalled")).find("stalled"), std::string::npos);
  EXPECT_NE(event_text(facts("run.preempted")).find("preempted"), std::string::npos);
  EXPECT_NE(event_text(facts("run.refused")).find("refused"), std::string::npos);
}

}  // namespace
}  // namespace podium::notify
