// GET /runs/{id}/logs?q=: a case-insensitive substring search within one run's lines, paged like
// the plain listing, combined with its other filters, refused when too long.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

class LogSearch : public PodiumTest {
 protected:
  // An imported run of 12 lines (attempt 1, rank 0): steps 0..9 and two warnings.
  std::string import_run() {
    std::string log;
    for (int s = 0; s < 10; ++s) {
      log += "completed step: " + std::to_string(s) +
             ", seconds: 1.0, TFLOP/s/device: 80.0, Tokens/s/device: 4096.0, total_weights: "
             "4096, loss: 2.0\n";
      if (s == 3) log += "W1125 train.py:88] NaN detected in gradients, skipping update\n";
      if (s == 7) log += "W1125 train.py:88] nan DETECTED again\n";
    }
    return import_log(log);
  }

  // An imported run whose log is `log`: its id.
  std::string import_log(const std::string& log) {
    auto r = podium().admin().post("/api/v1/runs/import", {{"name", unique_name("search")},
                                                           {"accelerator", "v6e-8"},
                                                           {"num_slices", 1},
                                                           {"model", "llama3-8b"},
                                                           {"log", log}});
    require_status(r, 201);
    return r.json["id"];
  }

  json get(const std::string& path) {
    auto r = podium().admin().get(path);
    require_status(r, 200);
    return r.json;
  }
};

TEST_F(LogSearch, FindsTheRunsMatchingLinesIgnoringCase) {
  const std::string id = import_run();
  auto all = get("/api/v1/runs/" + id + "/logs");
  ASSERT_EQ(all["items"].size(), 12u);

  auto found = get("/api/v1/runs/" + id + "/logs?q=NaN%20Detected");
  ASSERT_EQ(found["items"].size(), 2u) << found.dump();
  EXPECT_EQ(found["items"][0]["line"],
            "W1125 train.py:88] NaN detected in gradients, skipping update");
  EXPECT_EQ(found["items"][1]["line"], "W1125 train.py:88] nan DETECTED again");
  EXPECT_LT(found["items"][0]["seq"].get<int>(), found["items"][1]["seq"].get<int>());
  EXPECT_TRUE(found["next_cursor"].is_null());

  // Nothing matches: an empty page. An empty q is no filter.
  EXPECT_TRUE(get("/api/v1/runs/" + id + "/logs?q=segfault")["items"].empty());
  EXPECT_EQ(get("/api/v1/runs/" + id + "/logs?q=")["items"].size(), 12u);
}

TEST_F(LogSearch, FoldsTheCaseOfLettersBeyondAscii) {
  // An ASCII term is compared byte-wise lowered (the fast path); any other term with the
  // database's full case folding. Both must find what a person would.
  std::string log;
  for (int s = 0; s < 3; ++s)
    log += "completed step: " + std::to_string(s) +
           ", seconds: 1.0, TFLOP/s/device: 80.0, Tokens/s/device: 4096.0, total_weights: "
           "4096, loss: 2.0\n";
  log += "E1125 Prüfsumme FALSCH für Shard 7\n";
  log += "E1125 PRÜFSUMME falsch für Shard 9\n";
  const std::string id = import_log(log);
  // "prüfsumme" (ü as %C3%BC): both lines, whatever the case of Ü.
  EXPECT_EQ(get("/api/v1/runs/" + id + "/logs?q=pr%C3%BCfsumme")["items"].size(), 2u);
  EXPECT_EQ(get("/api/v1/runs/" + id + "/logs?q=PR%C3%9CFSUMME")["items"].size(), 2u);
  // ASCII terms on lines that hold other characters.
  EXPECT_EQ(get("/api/v1/runs/" + id + "/logs?q=falsch%20F")["items"].size(), 2u);
  EXPECT_EQ(get("/api/v1/runs/" + id + "/logs?q=shard%209")["items"].size(), 1u);
}

TEST_F(LogSearch, PagesAndCombinesWithTheOtherFilters) {
  const std::string id = import_run();
  auto first = get("/api/v1/runs/" + id + "/logs?q=completed%20step&limit=6");
  ASSERT_EQ(first["items"].size(), 6u);
  ASSERT_TRUE(first["next_cursor"].is_string());
  auto rest = get("/api/v1/runs/" + id + "/logs?q=completed%20step&limit=6&cursor=" +
                  first["next_cursor"].get<std::string>());
  ASSERT_EQ(rest["items"].size(), 4u) << rest.dump();
  EXPECT_TRUE(rest["next_cursor"].is_null());
  for (const auto& page : {first, rest})
    for (const auto& item : page["items"])
      EXPECT_EQ(item["line"].get<std::string>().rfind("completed step: ", 0), 0u) << item;

  // After the first warning's seq only the second one remains.
  auto warn = get("/api/v1/runs/" + id + "/logs?q=detected");
  const auto after = warn["items"][0]["seq"].get<int>();
  auto later = get("/api/v1/runs/" + id + "/logs?q=detected&after=" + std::to_string(after));
  ASSERT_EQ(later["items"].size(), 1u);
  EXPECT_EQ(later["items"][0]["line"], "W1125 train.py:88] nan DETECTED again");
  // Another rank has no lines.
  EXPECT_TRUE(get("/api/v1/runs/" + id + "/logs?q=detected&rank=1")["items"].empty());
}

TEST_F(LogSearch, RefusesATooLongSearch) {
  const std::string id = import_run();
  auto r = podium().admin().get("/api/v1/runs/" + id + "/logs?q=" + std::string(257, 'x'));
  EXPECT_EQ(r.status, 400) << r;
  EXPECT_EQ(podium().admin().get("/api/v1/runs/" + id + "/logs?q=" + std::string(256, 'x')).status,
            200);
}

}  // namespace
}  // namespace podium::it
