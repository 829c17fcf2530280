// GET /metrics: Prometheus text with request counters and latency histograms per route (the
// pattern, not the raw path), database pool gauges and build information.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses the sample lines of the text exposition format (comments skipped).
std::vector<Sample> parse(const std::string& text, std::string* error) {
  std::vector<Sample> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    size_t i = line.find_first_of("{ ");
    if (i == std::string::npos) {
      *error = "no value: " + line;
      return out;
    }
    s.name = line.substr(0, i);
    if (line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const size_t eq = line.find("=\"", i);
        if (eq == std::string::npos) {
          *error = "bad labels: " + line;
          return out;
        }
        std::string key = line.substr(i, eq - i), value;
        size_t j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\' && j + 1 < line.size()) ++j;
          value += line[j];
        }
        s.labels[key] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      ++i;
    }
    try {
      s.value = std::stod(line.substr(i));
    } catch (const std::exception&) {
      *error = "bad value: " + line;
      return out;
    }
    out.push_back(std::move(s));
  }
  return out;
}

// The value of the sample with that name and (at least) these labels; nullopt when none.
std::optional<double> sample_value(const std::vector<Sample>& samples, const std::string& name,
                                   const std::map<std::string, std::string>& labels) {
  for (const auto& s : samples) {
    if (s.name != name) continue;
    bool all = true;
    for (const auto& [k, v] : labels)
      if (!s.labels.count(k) || s.labels.at(k) != v) all = false;
    if (all) return s.value;
  }
  return std::nullopt;
}

class Metrics : public PodiumTest {};

TEST_F(Metrics, RequestCountersLatencyPoolAndBuildInfo) {
  auto admin = podium().admin();
  auto anon = podium().anonymous();
  require_status(admin.post("/api/v1/clusters", {{"name", "m1"}, {"accelerator", "cpu-1"}}), 201);
  for (int i = 0; i < 3; ++i) require_status(admin.get("/api/v1/clusters"), 200);
  EXPECT_EQ(admin.get("/api/v1/clusters/m1").status, 200);
  EXPECT_EQ(admin.get("/api/v1/clusters/no-such-cluster-xyz").status, 404);
  EXPECT_EQ(anon.get("/api/v1/clusters").status, 401);
  EXPECT_EQ(admin.get("/api/v1/definitely-not-a-route-abc").status, 404);

  auto r = anon.get("/metrics");
  ASSERT_EQ(r.status, 200) << r;
  EXPECT_THAT(r.content_type(), ::testing::StartsWith("text/plain")) << r.content_type();
  std::string error;
  auto samples = parse(r.body, &error);
  ASSERT_TRUE(error.empty()) << error << "\n" << r.body;

  for (const char* family : {"podium_http_requests_total", "podium_http_request_duration_seconds",
                             "podium_db_pool_connections", "podium_build_info"})
    EXPECT_NE(r.body.find(std::string("# TYPE ") + family + " "), std::string::npos)
        << "no # TYPE for " << family;

  const std::string requests = "podium_http_requests_total";
  EXPECT_EQ(sample_value(samples, requests,
                         {{"method", "GET"}, {"route", "/api/v1/clusters"}, {"status", "200"}}),
            3.0)
      << r.body;
  EXPECT_EQ(sample_value(samples, requests,
                         {{"method", "POST"}, {"route", "/api/v1/clusters"}, {"status", "201"}}),
            1.0);
  EXPECT_EQ(
      sample_value(samples, requests,
                   {{"method", "GET"}, {"route", "/api/v1/clusters/{id}"}, {"status", "200"}}),
      1.0);
  EXPECT_EQ(
      sample_value(samples, requests,
                   {{"method", "GET"}, {"route", "/api/v1/clusters/{id}"}, {"status", "404"}}),
      1.0);
  EXPECT_EQ(sample_value(samples, requests,
                         {{"method", "GET"}, {"route", "/api/v1/clusters"}, {"status", "401"}}),
            1.0);
  // Route labels are patterns: raw paths (unbounded cardinality) never appear.
  EXPECT_EQ(r.body.find("no-such-cluster-xyz"), std::string::npos);
  EXPECT_EQ(r.body.find("definitely-not-a-route-abc"), std::string::npos);

  const std::string bucket = "podium_http_request_duration_seconds_bucket";
  auto inf = sample_value(samples, bucket,
                          {{"method", "GET"}, {"route", "/api/v1/clusters"}, {"le", "+Inf"}});
  ASSERT_TRUE(inf.has_value()) << r.body;
  EXPECT_GE(*inf, 4.0);  // 3 x 200 + 1 x 401
  // Buckets are cumulative.
  double previous = 0;
  int buckets = 0;
  for (const auto& s : samples)
    if (s.name == bucket && s.labels.at("route") == "/api/v1/clusters" &&
        s.labels.at("method") == "GET") {
      EXPECT_GE(s.value, previous)
          << "bucket le=" << s.labels.at("le") << " is smaller than the one before";
      previous = s.value;
      ++buckets;
    }
  EXPECT_GE(buckets, 5);
  EXPECT_TRUE(sample_value(samples, "podium_http_request_duration_seconds_count",
                           {{"route", "/api/v1/clusters"}})
                  .has_value());
  EXPECT_TRUE(sample_value(samples, "podium_http_request_duration_seconds_sum",
                           {{"route", "/api/v1/clusters"}})
                  .has_value());

  EXPECT_TRUE(sample_value(samples, "podium_db_pool_connections", {{"state", "idle"}}).has_value())
      << r.body;
  EXPECT_TRUE(
      sample_value(samples, "podium_db_pool_connections", {{"state", "in_use"}}).has_value())
      << r.body;
  auto build = sample_value(samples, "podium_build_info", {});
  ASSERT_TRUE(build.has_value()) << r.body;
  EXPECT_EQ(*build, 1.0);
  for (const auto& s : samples) {
    if (s.name == "podium_build_info") {
      EXPECT_TRUE(s.labels.count("version") && !s.labels.at("version").empty())
          << "build_info without a version";
    }
  }

  // Counters count: one more request, one more in the counter.
  EXPECT_EQ(admin.get("/api/v1/clusters").status, 200);
  auto again = parse(anon.get("/metrics").body, &error);
  EXPECT_EQ(sample_value(again, requests,
                         {{"method", "GET"}, {"route", "/api/v1/clusters"}, {"status", "200"}}),
            4.0);
  // The metrics endpoint counts itself under its own route.
  EXPECT_TRUE(
      sample_value(again, requests, {{"route", "/metrics"}, {"status", "200"}}).has_value());
}

}  // namespace
}  // namespace podium::it

namespace podium::it {
namespace {

TEST_F(Metrics, EngineGaugesCountRunsWorkersAndIngestedLines) {
  auto admin = podium().admin();
  podium().create_cluster("gauged", "cpu-1");
  auto reg = require_status(
      podium()
          .as(podium().worker_token("gauged"))
          .post("/api/v1/agent/register", {{"cluster", "gauged"}, {"slice", 0}, {"host", 0}}),
      200);
  Api agent = podium().as(reg.json["credential"]);
  const std::string worker = reg.json["worker_id"];
  podium().submit_run(admin, "gauged");
  podium().submit_run(admin, "gauged");  // waits: the one host is busy
  auto a =
      require_status(agent.get("/api/v1/agent/assignment?worker_id=" + worker + "&wait=10"), 200);
  const std::string attempt = a.json["attempt_id"];
  require_status(agent.post("/api/v1/agent/attempts/" + attempt + "/logs",
                            {{"rank", 0},
                             {"seq", 0},
                             {"lines",
                              {"hello",
                               "completed step: 0, seconds: 1.0, TFLOP/s/device: 1.0, "
                               "Tokens/s/device: 10.0, total_weights: 8, loss: 2.5"}}}),
                 200);
  std::string error;
  auto samples = parse(podium().anonymous().get("/metrics").body, &error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_EQ(sample_value(samples, "podium_runs", {{"state", "starting"}}), 1.0);
  EXPECT_EQ(sample_value(samples, "podium_runs", {{"state", "queued"}}), 1.0);
  EXPECT_EQ(sample_value(samples, "podium_workers", {{"cluster", "gauged"}, {"healthy", "true"}}),
            1.0);
  EXPECT_EQ(sample_value(samples, "podium_live_attempts", {{"state", "starting"}}), 1.0);
  EXPECT_EQ(sample_value(samples, "podium_log_lines_ingested_total", {}), 2.0);
  EXPECT_EQ(sample_value(samples, "podium_metric_steps_ingested_total", {}), 1.0);
}

}  // namespace
}  // namespace podium::it
