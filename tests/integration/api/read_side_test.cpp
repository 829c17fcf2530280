// The read side of runs against a real podium-server and PostgreSQL: POST /runs/import of MaxText
// logs (as a host prints them, under Ray, through kubectl), GET /runs/{id}/metrics (latest
// execution per step, downsampling that keeps extremes), GET /runs/{id}/summary (steady step
// time, TFLOP/s, MFU per device, HBM, goodput, cost), GET /compare, and the CLI on top of them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// A realistic MaxText log: almodel-8b on tpu7x-64, 30 steps. Step 0 compiles (310 s), steps 1-2
// warm up, step 12 is an asynchronous-dispatch artefact (0.05 s) paid for by step 13 (3.55 s);
// the other steps take 1.80-1.82 s.

constexpr double kTflopsPerStep = 180.0;   // "Per train step: Total TFLOPs" per device
constexpr double kTokensPerStep = 4096.0;  // per_device_batch_size 1 x max_target_length 4096
constexpr int kSteps = 30;
constexpr double kTpu7xPeakPerDevice = 1153.5;  // per device: half of the chip's 2307

double fixture_seconds(int step) {
  if (step == 0) return 310.512;
  if (step == 1) return 2.604;
  if (step == 2) return 2.115;
  if (step == 12) return 0.05;
  if (step == 13) return 3.55;
  return 1.80 + 0.01 * (step % 3);
}

double fixture_loss(int step) {
  return 10.0 - 0.25 * step;
}

bool steady_step(int step) {
  return step >= 3 && step != 12 && step != 13;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double expected_step_seconds() {
  std::vector<double> v;
  for (int s = 0; s < kSteps; ++s)
    if (steady_step(s)) v.push_back(fixture_seconds(s));
  return median(v);
}

double expected_tflops() {
  std::vector<double> v;
  for (int s = 0; s < kSteps; ++s)
    if (steady_step(s)) v.push_back(std::round(kTflopsPerStep / fixture_seconds(s) * 1000) / 1000);
  return median(v);
}

std::string step_line(int step, double seconds, double loss,
                      double tflops_per_step = kTflopsPerStep) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "completed step: %d, seconds: %.3f, TFLOP/s/device: %.3f, Tokens/s/device: %.3f, "
                "total_weights: 4096, loss: %.3f",
                step, seconds, tflops_per_step / seconds, kTokensPerStep / seconds, loss);
  return buf;
}

enum class Flavor { host, ray, kubectl };

std::string maxtext_log(Flavor flavor) {
  std::vector<std::string> lines = {
      "I1121 16:40:00.000000 140 pyconfig.py:900] Config param model_name: almodel-8b",
      "I1121 16:40:00.000001 140 pyconfig.py:900] Config param per_device_batch_size: 1.0",
      "I1121 16:40:00.000002 140 pyconfig.py:900] Config param max_target_length: 4096",
      "I1121 16:40:00.000003 140 pyconfig.py:900] Config param steps: 30",
      "I1121 16:40:00.000004 140 pyconfig.py:900] Config param remat_policy: full",
      "I1121 16:40:00.000005 140 pyconfig.py:900] Config param ici_fsdp_parallelism: 16",
      "I1121 16:40:00.000006 140 pyconfig.py:900] Config param ici_tensor_parallelism: 4",
      "I1121 16:40:00.000007 140 pyconfig.py:900] Config param enable_checkpointing: False",
      "I1121 16:40:00.000008 140 pyconfig.py:900] Config param opt_type: muon",
      "System Information: Jax Version: 0.6.2, Jaxlib Version: 0.6.2",
      "Memstats: After params initialized:",
      "\tUsing (GB) 44.63 / 94.75 (47.102902%) on TPU_0(process=0,(0,0,0,0))",
      "\tUsing (GB) 44.60 / 94.75 (47.071240%) on TPU_1(process=0,(0,0,0,1))",
      "I1121 16:41:05.000000 140 max_utils.py:741] Total memory size: 60.1 GB, Output size: 30.0 "
      "GB, Temp size: 20.1 GB, Argument size: 30.0 GB, Host temp size: 0.0 GB.",
      "Per train step:",
      " Total TFLOPs: 180.00 ",
      " split as 91.20% learnable weight flops and 8.80% attention flops",
      "I1121 16:41:05.100000 140 metric_logger.py:275] number parameters: 8.071 billion",
  };
  for (int s = 0; s < kSteps; ++s) {
    lines.push_back("I1121 16:46:01.000000 140 metric_logger.py:190] " +
                    step_line(s, fixture_seconds(s), fixture_loss(s)));
    if (s == 2) {
      lines.push_back("Memstats: After first optimizer step:");
      lines.push_back("\tUsing (GB) 81.20 / 94.75 (85.699208%) on TPU_0(process=0,(0,0,0,0))");
    }
    if (s == 20) lines.push_back("completed profiler activation/deactivation step: 20");
  }
  lines.push_back("I1121 16:47:00.000000 140 train.py:700] Training completed.");

  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    switch (flavor) {
      case Flavor::host:
        break;
      case Flavor::ray:
        // Every worker prints the step lines; Ray deduplicates some of them.
        if (line.find("completed step") != std::string::npos) {
          out += "(RayTrainWorker pid=130521, ip=10.60.7.8) " + line + "\n";
          line += " [repeated 7x across cluster]";
        }
        line = "\x1b[36m(RayTrainWorker pid=130520, ip=10.60.7.7)\x1b[0m " + line;
        break;
      case Flavor::kubectl:
        line = "[pod/maxtext-slice-0-0-x7k2p/jax-tpu] 2025-11-21T16:46:01.123456789Z " + line;
        break;
    }
    out += line + "\n";
  }
  return out;
}

std::string oom_log() {
  return "I1121 16:40:00.000000 140 pyconfig.py:900] Config param per_device_batch_size: 8\n"
         "Per train step:\n Total TFLOPs: 1440.00 \n"
         "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent "
         "error. Ran out of memory in memory space hbm. Used 180.52G of 94.75G hbm. Exceeded hbm "
         "capacity by 85.77G.\n";
}

json import_body(const std::string& name, const std::string& log,
                 const std::string& accelerator = "tpu7x-64") {
  return {{"name", name},          {"accelerator", accelerator}, {"num_slices", 1},
          {"model", "almodel-8b"}, {"config", json::object()},   {"log", log}};
}

class ReadSide : public PodiumTest {
 protected:
  json import(const json& body, const Api* who = nullptr) {
    auto r = (who ? *who : podium().admin()).post("/api/v1/runs/import", body);
    return require_status(r, 201).json;
  }
  json get_json(const std::string& path) {
    return require_status(podium().admin().get(path), 200).json;
  }
  std::string count(const std::string& table, const std::string& run_name) {
    if (table == "runs")
      return podium().db().scalar("SELECT count(*) FROM runs WHERE name = $1", {run_name});
    return podium().db().scalar(
        "SELECT count(*) FROM " + table + " t JOIN runs r ON r.id = t.run_id WHERE r.name = $1",
        {run_name});
  }
};

// ---------------------------------------------------------------------------------------------
// Import

TEST_F(ReadSide, ImportBuildsAFinishedRunFromEveryLogFlavor) {
  const double step_seconds = expected_step_seconds();
  for (Flavor flavor : {Flavor::host, Flavor::ray, Flavor::kubectl}) {
    SCOPED_TRACE(flavor == Flavor::host ? "host" : flavor == Flavor::ray ? "ray" : "kubectl");
    const std::string name = unique_name("imp");
    const std::string log = maxtext_log(flavor);
    auto member = podium().create_user("member");
    auto r = member.api.post("/api/v1/runs/import", import_body(name, log));
    ASSERT_EQ(r.status, 201) << r;
    const json run = r.json;
    const std::string id = run["id"];
    EXPECT_EQ(r.header("location"), "/api/v1/runs/" + id);
    EXPECT_EQ(run["name"], name);
    EXPECT_EQ(run["state"], "succeeded") << run.dump();
    EXPECT_TRUE(run["failure_class"].is_null()) << run.dump();
    EXPECT_EQ(run["imported"], true);
    EXPECT_TRUE(run["cluster_id"].is_null());
    EXPECT_EQ(run["accelerator"], "tpu7x-64");
    EXPECT_EQ(run["num_slices"], 1);
    EXPECT_EQ(run["owner_id"], member.id);
    EXPECT_EQ(run["last_step"], kSteps - 1);
    EXPECT_EQ(run["model"], "almodel-8b");
    EXPECT_TRUE(run["finished_at"].is_string());
    // Configuration from the Config param lines, typed.
    EXPECT_EQ(run["spec"]["config"]["max_target_length"], 4096) << run["spec"].dump();
    EXPECT_EQ(run["spec"]["config"]["per_device_batch_size"], 1.0);
    EXPECT_EQ(run["spec"]["config"]["enable_checkpointing"], false);
    EXPECT_EQ(run["spec"]["config"]["remat_policy"], "full");
    EXPECT_EQ(run["spec"]["max_target_length"], 4096);

    // One attempt without hosts, steps 0..29.
    auto att = get_json("/api/v1/runs/" + id + "/attempts");
    ASSERT_EQ(att["items"].size(), 1u) << att.dump();
    EXPECT_EQ(att["items"][0]["state"], "succeeded");
    EXPECT_EQ(att["items"][0]["first_step"], 0);
    EXPECT_EQ(att["items"][0]["last_step"], kSteps - 1);
    EXPECT_TRUE(att["items"][0]["hosts"].empty());

    // Metrics: every step once, exact values; the profiler boundary is not a step.
    auto m = get_json("/api/v1/runs/" + id + "/metrics");
    std::vector<int> want_steps;
    for (int s = 0; s < kSteps; ++s) want_steps.push_back(s);
    EXPECT_EQ(m["steps"].get<std::vector<int>>(), want_steps) << m.dump();
    for (const char* f : {"step_seconds", "tflops_per_device", "tokens_per_second_per_device",
                          "loss", "total_weights"})
      ASSERT_EQ(m["series"][f].size(), static_cast<size_t>(kSteps)) << f << " " << m.dump();
    for (int s = 0; s < kSteps; ++s) {
      EXPECT_NEAR(m["series"]["step_seconds"][s].get<double>(), fixture_seconds(s), 1e-9) << s;
      EXPECT_NEAR(m["series"]["loss"][s].get<double>(), fixture_loss(s), 1e-9) << s;
      EXPECT_EQ(m["series"]["total_weights"][s], 4096.0);
    }

    // The log lines are stored (attempt 1, rank 0), in order.
    auto logs = get_json("/api/v1/runs/" + id + "/logs?limit=500");
    const size_t want_lines = static_cast<size_t>(std::count(log.begin(), log.end(), '\n'));
    EXPECT_EQ(logs["items"].size(), want_lines);
    EXPECT_EQ(
        podium().db().scalar("SELECT count(*) FROM log_lines WHERE run_id = $1 AND rank = 0 AND "
                             "attempt_number = 1",
                             {id}),
        std::to_string(want_lines));

    // Summary: the steady figure drops compile, warm-up and the artefact pair.
    auto sum = get_json("/api/v1/runs/" + id + "/summary");
    ASSERT_TRUE(sum["step_seconds"].is_number()) << sum.dump(2);
    EXPECT_NEAR(sum["step_seconds"].get<double>(), step_seconds, 1e-9) << sum.dump(2);
    EXPECT_EQ(sum["steady_steps"], 25) << sum.dump(2);
    EXPECT_EQ(sum["steady_state"]["kept_ranges"], json::parse("[[3,11],[14,29]]"))
        << sum["steady_state"].dump();
    std::map<int, std::string> excluded;
    for (const auto& e : sum["steady_state"]["excluded"])
      excluded[e["step"].get<int>()] = e["reason"].get<std::string>();
    EXPECT_EQ(excluded, (std::map<int, std::string>{{0, "compile"},
                                                    {1, "warm_up"},
                                                    {2, "warm_up"},
                                                    {12, "dispatch_artifact"},
                                                    {13, "dispatch_artifact"}}))
        << sum["steady_state"].dump();
    // TFLOP/s/device as logged, MFU against the per-device peak (not the chip's 2307).
    EXPECT_NEAR(sum["tflops_per_device"].get<double>(), expected_tflops(), 1e-6);
    EXPECT_EQ(sum["basis"]["tflops_per_device"], "logged");
    EXPECT_EQ(sum["peak_tflops_per_device"], kTpu7xPeakPerDevice);
    EXPECT_NEAR(sum["mfu"].get<double>(), expected_tflops() / kTpu7xPeakPerDevice, 1e-9);
    EXPECT_GT(sum["mfu"].get<double>(), 0.08);  // ~0.086; per chip it would be ~0.043
    EXPECT_NEAR(sum["tokens_per_second_per_device"].get<double>(),
                std::round(kTokensPerStep / step_seconds * 1000) / 1000, 0.01);
    // HBM: the compiler's total outranks Memstats (hbm_peak.h), whatever their sizes.
    EXPECT_EQ(sum["hbm_gib_used"], 60.1) << sum.dump(2);
    EXPECT_EQ(sum["hbm"]["source"], "compiler_total");
    EXPECT_TRUE(sum["hbm"]["limit_gib"].is_null());
    EXPECT_EQ(sum["hbm"]["capacity_gib_per_device"], 96.0);
    EXPECT_EQ(sum["num_params_billion"], 8.071);
    EXPECT_EQ(sum["tflops_per_step_per_device"], kTflopsPerStep);
    // tpu7x-64: 32 chips, 64 devices, 8 hosts.
    EXPECT_EQ(sum["chips"], 32);
    EXPECT_EQ(sum["devices"], 64);
    EXPECT_EQ(sum["hosts"], 8);
    EXPECT_EQ(sum["topology"], "2x4x4");
    // Goodput from the logged step times: the compile step is the largest badput.
    ASSERT_TRUE(sum["goodput"].is_number()) << sum.dump(2);
    EXPECT_EQ(sum["basis"]["goodput"], "log_steps");
    double total = 0;
    for (int s = 0; s < kSteps; ++s) total += fixture_seconds(s);
    EXPECT_NEAR(sum["goodput_detail"]["wall_seconds"].get<double>(), total, 1e-6);
    // Productive: each step's ideal part (the artefact step counts its 0.05 s only).
    const double productive = sum["goodput_detail"]["productive_seconds"].get<double>();
    EXPECT_GT(productive, (kSteps - 2) * step_seconds);
    EXPECT_LE(productive, kSteps * step_seconds + 1e-6);
    EXPECT_NEAR(sum["goodput"].get<double>(), productive / total, 1e-9);
    EXPECT_NEAR(sum["badput"]["compile"].get<double>(), 310.512 - step_seconds, 1e-6);
    EXPECT_TRUE(sum["cost_per_billion_tokens"].is_null());  // no cluster, no price
    EXPECT_EQ(sum["steps"], kSteps);
    EXPECT_EQ(sum["last_step"], kSteps - 1);
    EXPECT_EQ(sum["restarts"], 0);
    EXPECT_EQ(sum["recoveries"], 0);
  }
}

TEST_F(ReadSide, ImportOfAnOomLogIsAFailedRunOfClassOom) {
  const std::string name = unique_name("oom");
  const json run = import(import_body(name, oom_log()));
  EXPECT_EQ(run["state"], "failed") << run.dump();
  EXPECT_EQ(run["failure_class"], "oom") << run.dump();
  EXPECT_TRUE(run["last_step"].is_null());
  auto att = get_json("/api/v1/runs/" + run["id"].get<std::string>() + "/attempts");
  ASSERT_EQ(att["items"].size(), 1u);
  EXPECT_EQ(att["items"][0]["failure_class"], "oom");
  EXPECT_EQ(att["items"][0]["classification"]["deciding_signature"], "hbm_oom") << att.dump();
  auto sum = get_json("/api/v1/runs/" + run["id"].get<std::string>() + "/summary");
  EXPECT_TRUE(sum["step_seconds"].is_null()) << sum.dump();
  EXPECT_TRUE(sum["mfu"].is_null());
  EXPECT_EQ(sum["steps"], 0);
  auto m = get_json("/api/v1/runs/" + run["id"].get<std::string>() + "/metrics");
  EXPECT_TRUE(m["steps"].empty()) << m.dump();
  EXPECT_EQ(
      podium().db().scalar("SELECT signature FROM attempt_signatures s JOIN attempts a ON a.id = "
                           "s.attempt_id WHERE a.run_id = $1",
                           {run["id"].get<std::string>()}),
      "hbm_oom");
}

TEST_F(ReadSide, DataExhaustedRunExcludesItsSlowLastStep) {
  std::string log;
  for (int s = 0; s < 10; ++s) log += step_line(s, s == 0 ? 200.0 : s == 9 ? 9.5 : 2.0, 5.0) + "\n";
  log += "Traceback (most recent call last):\n    raise StopIteration\nStopIteration\n";
  const json run = import(import_body(unique_name("exh"), log, "v5p-128"));
  EXPECT_EQ(run["state"], "failed");
  EXPECT_EQ(run["failure_class"], "data_exhausted");
  EXPECT_EQ(run["last_step"], 9);
  auto sum = get_json("/api/v1/runs/" + run["id"].get<std::string>() + "/summary");
  EXPECT_EQ(sum["step_seconds"], 2.0) << sum.dump(2);
  bool last_excluded = false;
  for (const auto& e : sum["steady_state"]["excluded"])
    if (e["step"] == 9) last_excluded = e["reason"] == "data_exhausted";
  EXPECT_TRUE(last_excluded) << sum["steady_state"].dump();
  EXPECT_EQ(sum["steady_state"]["kept_ranges"], json::parse("[[3,8]]"));
  // v5p: one device per chip, peak 459.
  EXPECT_NEAR(sum["mfu"].get<double>(), (kTflopsPerStep / 2.0) / 459.0, 1e-6);
}

TEST_F(ReadSide, ImportRefusesBadInputAndStoresNothing) {
  auto admin = podium().admin();
  const std::string name = unique_name("bad");
  const std::string log = maxtext_log(Flavor::host);

  auto r = admin.post("/api/v1/runs/import", import_body(name, log, "tpu9-64"));
  EXPECT_TRUE(is_problem(r, 422)) << r;
  EXPECT_TRUE(has_field_error(r, "accelerator")) << r;
  EXPECT_TRUE(r.json.contains("valid_choices") && !r.json["valid_choices"].empty()) << r;
  // A size tpu7x does not have: the valid sizes are named.
  r = admin.post("/api/v1/runs/import", import_body(name, log, "tpu7x-63"));
  EXPECT_TRUE(is_problem(r, 422)) << r;

  r = admin.post("/api/v1/runs/import", import_body(name, ""));
  EXPECT_TRUE(is_problem(r, 400)) << r;
  EXPECT_TRUE(has_field_error(r, "log")) << r;
  r = admin.post("/api/v1/runs/import", import_body(name, " \n\n \n"));
  EXPECT_TRUE(is_problem(r, 400)) << r;
  EXPECT_TRUE(has_field_error(r, "log")) << r;

  json body = import_body(name, log);
  body.erase("model");
  body["colour"] = "blue";
  r = admin.post("/api/v1/runs/import", body);
  EXPECT_TRUE(is_problem(r, 400)) << r;
  EXPECT_TRUE(has_field_error(r, "model")) << r;
  EXPECT_TRUE(has_field_error(r, "colour")) << r;

  body = import_body("has space", log);
  EXPECT_TRUE(has_field_error(admin.post("/api/v1/runs/import", body), "name"));
  body = import_body(name, log);
  body["num_slices"] = 0;
  EXPECT_TRUE(has_field_error(admin.post("/api/v1/runs/import", body), "num_slices"));
  body = import_body(name, log);
  body["config"] = "remat_policy=full";
  EXPECT_TRUE(has_field_error(admin.post("/api/v1/runs/import", body), "config"));

  // Text that is no MaxText log at all.
  r = admin.post("/api/v1/runs/import", import_body(name, "hello\nworld\n"));
  EXPECT_TRUE(is_problem(r, 422)) << r;
  EXPECT_TRUE(has_field_error(r, "log")) << r;

  // A viewer may not import.
  auto viewer = podium().create_user("viewer");
  EXPECT_TRUE(is_problem(viewer.api.post("/api/v1/runs/import", import_body(name, log)), 403));

  EXPECT_EQ(count("runs", name), "0");
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM runs WHERE imported"), "0");
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM log_lines"), "0");
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM metrics"), "0");
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM attempts"), "0");
}

TEST_F(ReadSide, BodyConfigOverridesTheLogsConfigParams) {
  json body = import_body(unique_name("cfg"), maxtext_log(Flavor::host));
  body["config"] = {{"remat_policy", "minimal"}, {"max_target_length", 2048}};
  body["num_slices"] = 2;
  const json run = import(body);
  EXPECT_EQ(run["spec"]["config"]["remat_policy"], "minimal");
  EXPECT_EQ(run["spec"]["config"]["max_target_length"], 2048);
  EXPECT_EQ(run["spec"]["config"]["opt_type"], "muon");
  EXPECT_EQ(run["num_slices"], 2);
  auto sum = get_json("/api/v1/runs/" + run["id"].get<std::string>() + "/summary");
  EXPECT_EQ(sum["chips"], 64);
  EXPECT_EQ(sum["devices"], 128);
  EXPECT_EQ(sum["max_target_length"], 2048.0);
}

// ---------------------------------------------------------------------------------------------
// Metrics

class ReadSideLong : public ReadSide {
 protected:
  // 12000 steps: loss 5 +- a little, one spike (step 7777) and one dip (step 3333).
  static std::string long_log() {
    std::string log;
    for (int s = 0; s < 12000; ++s) {
      double loss = 5.0 + 0.001 * (s % 7);
      if (s == 7777) loss = 42.0;
      if (s == 3333) loss = 0.5;
      log += step_line(s, 1.0 + 0.001 * (s % 5), loss) + "\n";
    }
    return log;
  }
};

TEST_F(ReadSideLong, MetricsAreDownsampledKeepingExtremes) {
  const json run = import(import_body(unique_name("long"), long_log()));
  const std::string base = "/api/v1/runs/" + run["id"].get<std::string>() + "/metrics";

  // Default: at most 1000 points, every series aligned, first, last and the extremes kept.
  auto m = get_json(base);
  const auto steps = m["steps"].get<std::vector<int64_t>>();
  EXPECT_LE(steps.size(), 1000u);
  EXPECT_GE(steps.size(), 300u);
  EXPECT_TRUE(std::is_sorted(steps.begin(), steps.end()));
  EXPECT_EQ(steps.front(), 0);
  EXPECT_EQ(steps.back(), 11999);
  for (const auto& [k, v] : m["series"].items()) EXPECT_EQ(v.size(), steps.size()) << k;
  auto at = [&](const json& mm, int64_t step) -> json {
    const auto st = mm["steps"].get<std::vector<int64_t>>();
    auto it = std::find(st.begin(), st.end(), step);
    if (it == st.end()) return "absent";
    return mm["series"]["loss"][static_cast<size_t>(it - st.begin())];
  };
  EXPECT_EQ(at(m, 7777), 42.0);
  EXPECT_EQ(at(m, 3333), 0.5);

  m = get_json(base + "?fields=loss&max_points=50");
  EXPECT_LE(m["steps"].size(), 50u);
  EXPECT_EQ(m["series"].size(), 1u) << m.dump();
  EXPECT_EQ(at(m, 7777), 42.0);
  EXPECT_EQ(at(m, 3333), 0.5);

  // A step range, not downsampled when it fits.
  m = get_json(base + "?fields=loss,step_seconds&from_step=7770&to_step=7780");
  EXPECT_EQ(
      m["steps"].get<std::vector<int64_t>>(),
      (std::vector<int64_t>{7770, 7771, 7772, 7773, 7774, 7775, 7776, 7777, 7778, 7779, 7780}));
  EXPECT_EQ(m["series"]["loss"][7], 42.0);

  // Above the maximum: served at the maximum (10000 points of 12000).
  m = get_json(base + "?fields=loss&max_points=100000");
  EXPECT_LE(m["steps"].size(), 10000u);
  EXPECT_GT(m["steps"].size(), 5000u);
}

// A range longer than 128 x max_points steps is reduced in the database to fine buckets'
// extremes (run_metrics_routes.cpp), a shorter one is read whole: on both paths (12,000 steps at
// 50 points, reduced; at 200, read whole) the latest execution of a redone step, its extra fields
// and a spike still show; a superseded execution's spike does not.
TEST_F(ReadSideLong, LongRangesKeepLatestExecutionsAndTheirExtremes) {
  const json run = import(import_body(unique_name("longredo"), long_log()));
  const std::string id = run["id"];
  podium().db().query(
      "INSERT INTO attempts (id, run_id, number, state, num_slices, world_size, slices, "
      "coordinator_port, finished_at) VALUES ($1, $2, 2, 'succeeded', 1, 8, '{0}', 0, now())",
      {id + "-a2", id});
  // Attempt 2 redid steps 9000..9010; attempt 1's step 9003 had a spike attempt 2 did not.
  podium().db().query(
      "INSERT INTO metrics (run_id, attempt_id, attempt_number, step, step_seconds, loss, extra) "
      "SELECT $1, $2, 2, s, 1.0, CASE WHEN s = 9005 THEN 77 ELSE 5 END, "
      "jsonb_build_object('lm_loss', CASE WHEN s = 9007 THEN 66 ELSE 4 END) "
      "FROM generate_series(9000, 9010) s",
      {id, id + "-a2"});
  podium().db().query(
      "UPDATE metrics SET loss = 99 WHERE run_id = $1 AND step = 9003 AND attempt_number = 1",
      {id});
  for (const std::size_t points : {50u, 200u}) {
    SCOPED_TRACE("max_points=" + std::to_string(points));
    auto m = get_json("/api/v1/runs/" + id +
                      "/metrics?fields=loss,lm_loss&max_points=" + std::to_string(points));
    const auto steps = m["steps"].get<std::vector<int64_t>>();
    EXPECT_LE(steps.size(), points);
    EXPECT_EQ(steps.front(), 0);
    EXPECT_EQ(steps.back(), 11999);
    auto value = [&](const char* series, int64_t step) -> json {
      auto it = std::find(steps.begin(), steps.end(), step);
      if (it == steps.end()) return "absent";
      return m["series"][series][static_cast<size_t>(it - steps.begin())];
    };
    EXPECT_EQ(value("loss", 7777), 42.0) << m.dump();
    EXPECT_EQ(value("loss", 3333), 0.5);
    EXPECT_EQ(value("loss", 9005), 77.0);
    EXPECT_EQ(value("lm_loss", 9007), 66.0);
    for (const auto& v : m["series"]["loss"]) EXPECT_NE(v, 99.0) << m.dump();
  }
}

// A settled run's answer is kept in memory under its run and attempt rows' versions: served again
// while they stand (even if a row under it were edited by hand), recomputed once the run row is
// written, as ingestion does in the transaction that writes metrics.
TEST_F(ReadSideLong, SettledRunsAnswersAreKeptUntilTheRunChanges) {
  const json run = import(import_body(unique_name("longcache"), long_log()));
  const std::string id = run["id"];
  const std::string url = "/api/v1/runs/" + id + "/metrics?fields=loss";
  auto spike_at_6000 = [&](const json& m) {
    const auto st = m["steps"].get<std::vector<int64_t>>();
    auto it = std::find(st.begin(), st.end(), 6000);
    return it != st.end() && m["series"]["loss"][static_cast<size_t>(it - st.begin())] == 55.0;
  };
  const json first = get_json(url);
  EXPECT_FALSE(spike_at_6000(first));
  podium().db().query("UPDATE metrics SET loss = 55 WHERE run_id = $1 AND step = 6000", {id});
  EXPECT_EQ(get_json(url), first);
  podium().db().query("UPDATE runs SET last_step = last_step WHERE id = $1", {id});
  EXPECT_TRUE(spike_at_6000(get_json(url)));
}

TEST_F(ReadSide, MetricsServeEachStepsLatestExecutionAndExtraFields) {
  // A run with two attempts: attempt 2 redid steps 5..9 (rows written as ingestion writes them).
  const json run = import(import_body(unique_name("redo"), maxtext_log(Flavor::host)));
  const std::string id = run["id"];
  podium().db().query(
      "INSERT INTO attempts (id, run_id, number, state, num_slices, world_size, slices, "
      "coordinator_port) VALUES ($1, $2, 2, 'succeeded', 1, 8, '{0}', 0)",
      {id + "-a2", id});
  podium().db().query(
      "INSERT INTO metrics (run_id, attempt_id, attempt_number, step, step_seconds, loss, extra) "
      "SELECT $1, $2, 2, s, 1.5, 100 + s, jsonb_build_object('lm_loss', 50 + s) "
      "FROM generate_series(5, 9) s",
      {id, id + "-a2"});
  auto m = get_json("/api/v1/runs/" + id + "/metrics?fields=loss,lm_loss&from_step=3&to_step=11");
  EXPECT_EQ(m["steps"].get<std::vector<int>>(), (std::vector<int>{3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(m["series"]["loss"][0].get<double>(), fixture_loss(3));
  EXPECT_EQ(m["series"]["loss"][2], 105.0) << m.dump();  // attempt 2's execution of step 5
  EXPECT_EQ(m["series"]["loss"][6], 109.0);
  EXPECT_EQ(m["series"]["lm_loss"][0], nullptr);
  EXPECT_EQ(m["series"]["lm_loss"][2], 55.0);
}

TEST_F(ReadSide, MetricsRefuseBadParameters) {
  auto admin = podium().admin();
  const json run = import(import_body(unique_name("params"), maxtext_log(Flavor::host)));
  const std::string base = "/api/v1/runs/" + run["id"].get<std::string>() + "/metrics";

  auto r = admin.get(base + "?fields=loss,perplexity");
  EXPECT_TRUE(is_problem(r, 400)) << r;
  EXPECT_TRUE(has_field_error(r, "fields")) << r;
  EXPECT_THAT(r.json["detail"].get<std::string>(), ::testing::HasSubstr("step_seconds")) << r;
  EXPECT_THAT(r.json["valid_fields"].get<std::vector<std::string>>(),
              ::testing::Contains("tokens_per_second_per_device"));
  for (const char* q :
       {"?max_points=0", "?max_points=-3", "?max_points=abc", "?max_points=", "?from_step=-1",
        "?to_step=x", "?from_step=9&to_step=3", "?fields=", "?fields=loss,,step_seconds"}) {
    r = admin.get(base + q);
    EXPECT_TRUE(is_problem(r, 400)) << q << " " << r;
  }
  EXPECT_TRUE(is_problem(admin.get("/api/v1/runs/run_nope/metrics"), 404));
  EXPECT_TRUE(is_problem(admin.get("/api/v1/runs/run_nope/summary"), 404));
}

// ---------------------------------------------------------------------------------------------
// Summary of a run on a cluster with a price (facts written as the engine writes them)

TEST_F(ReadSide, SummaryOfAClusterRunHasGoodputFromTimestampsAndCost) {
  const std::string cluster = unique_name("priced");
  podium().create_cluster(cluster, "v6e-16", {{"price_per_chip_hour", 2.7}});
  auto member = podium().create_user("member");
  json spec = {{"per_device_batch_size", 2}, {"max_target_length", 2048}, {"force", true}};
  const json run = podium().submit_run(member.api, cluster, unique_name("priced"), spec);
  const std::string id = run["id"];
  // Submitted at t0, queued 60 s, hosts took 10 s, 20 steps of 2 s (step 0: 30 s), done at +150 s.
  auto& db = podium().db();
  db.query(
      "UPDATE runs SET state = 'succeeded', created_at = now() - interval '150 seconds', "
      "started_at = now() - interval '90 seconds', finished_at = now(), last_step = 19 "
      "WHERE id = $1",
      {id});
  db.query(
      "INSERT INTO attempts (id, run_id, number, state, num_slices, world_size, slices, "
      "coordinator_port, created_at, running_at, finished_at) VALUES ($1, $2, 1, 'succeeded', "
      "1, 4, '{0}', 0, now() - interval '90 seconds', now() - interval '80 seconds', now())",
      {id + "-a1", id});
  db.query(
      "INSERT INTO metrics (run_id, attempt_id, attempt_number, step, step_seconds, "
      "tokens_per_second_per_device, loss) SELECT $1, $2, 1, s, CASE WHEN s = 0 THEN 30 ELSE 2 "
      "END, 4096.0 / CASE WHEN s = 0 THEN 30 ELSE 2 END, 3 FROM generate_series(0, 19) s",
      {id, id + "-a1"});

  auto sum = get_json("/api/v1/runs/" + id + "/summary");
  EXPECT_EQ(sum["step_seconds"], 2.0) << sum.dump(2);
  EXPECT_EQ(sum["basis"]["goodput"], "timestamps");
  EXPECT_NEAR(sum["goodput_detail"]["wall_seconds"].get<double>(), 150, 1);
  EXPECT_NEAR(sum["badput"]["queueing"].get<double>(), 60, 1) << sum.dump(2);
  EXPECT_NEAR(sum["badput"]["infrastructure_recovery"].get<double>(), 10, 1);
  EXPECT_NEAR(sum["badput"]["compile"].get<double>(), 28, 1e-6);
  EXPECT_NEAR(sum["goodput"].get<double>(), 40.0 / 150.0, 0.01);
  // Tokens/s/device logged (2048 per step); no TFLOP/s logged: derived when an estimate exists.
  EXPECT_EQ(sum["tokens_per_second_per_device"], 2048.0);
  EXPECT_EQ(sum["basis"]["tokens_per_second_per_device"], "logged");
  EXPECT_TRUE(sum["tflops_per_device"].is_null() || sum["basis"]["tflops_per_device"] != "logged")
      << sum.dump(2);
  // v6e-16: 16 chips, 16 devices. Per step: 16 x 2.7 $/h x 2 s / 3600 = 0.024 $ for
  // 4096 x 16 = 65536 tokens -> 0.024 / 65536 x 1e9 = 366.2 $ per billion tokens.
  ASSERT_TRUE(sum["cost_per_billion_tokens"].is_number()) << sum.dump(2);
  EXPECT_NEAR(sum["cost_per_billion_tokens"].get<double>(), 16 * 2.7 * 2 / 3600.0 / 65536 * 1e9,
              1e-6);
  EXPECT_EQ(sum["price_per_chip_hour"], 2.7);
}

// ---------------------------------------------------------------------------------------------
// Compare

TEST_F(ReadSide, CompareLinesRunsUpAgainstTheBaseline) {
  auto admin = podium().admin();
  const json a = import(import_body(unique_name("small"), maxtext_log(Flavor::host)));
  // A smaller model on the same slice size: every step 29x faster.
  constexpr double kFast = 0.062;
  std::string log;
  for (int s = 0; s < 20; ++s)
    log += step_line(s, s == 0 ? 100.0 : kFast, fixture_loss(s), 6.0) + "\n";
  const json b = import(import_body(unique_name("large"), log, "tpu7x-2x4x4"));
  const std::string ida = a["id"], idb = b["id"];

  auto c = get_json("/api/v1/compare?runs=" + ida + "," + idb);
  EXPECT_EQ(c["baseline"], ida);
  ASSERT_EQ(c["rows"].size(), 2u) << c.dump(2);
  const json& ra = c["rows"][0];
  const json& rb = c["rows"][1];
  EXPECT_EQ(ra["run_id"], ida);
  EXPECT_EQ(rb["run_id"], idb);
  for (const char* k :
       {"accelerator", "topology", "chips", "devices", "hosts", "per_device_batch_size",
        "max_target_length", "step_seconds", "tflops_per_device", "tokens_per_second_per_device",
        "mfu", "hbm_gib_used", "goodput", "cost_per_billion_tokens", "ratios"})
    EXPECT_TRUE(ra.contains(k)) << k;
  EXPECT_EQ(ra["accelerator"], "tpu7x-64");
  EXPECT_EQ(rb["topology"], "2x4x4");
  EXPECT_EQ(ra["ratios"]["step_seconds"], 1.0);
  EXPECT_NEAR(rb["ratios"]["step_seconds"].get<double>(), kFast / expected_step_seconds(), 1e-9);
  EXPECT_NEAR(rb["ratios"]["tflops_per_device"].get<double>(),
              rb["tflops_per_device"].get<double>() / ra["tflops_per_device"].get<double>(), 1e-9);
  EXPECT_EQ(rb["ratios"]["chips"], 1.0);
  // Run b's log has no Memstats: no HBM figure, so no ratio either.
  EXPECT_TRUE(rb["hbm_gib_used"].is_null());
  EXPECT_TRUE(rb["ratios"]["hbm_gib_used"].is_null());
  EXPECT_TRUE(rb["ratios"]["cost_per_billion_tokens"].is_null());

  c = get_json("/api/v1/compare?runs=" + ida + "," + idb + "&baseline=" + idb);
  EXPECT_EQ(c["baseline"], idb);
  EXPECT_NEAR(c["rows"][0]["ratios"]["step_seconds"].get<double>(), expected_step_seconds() / kFast,
              1e-9);

  // Bad requests.
  EXPECT_TRUE(is_problem(admin.get("/api/v1/compare"), 400));
  EXPECT_TRUE(has_field_error(admin.get("/api/v1/compare?runs=" + ida), "runs"));
  EXPECT_TRUE(has_field_error(admin.get("/api/v1/compare?runs=" + ida + "," + ida), "runs"));
  EXPECT_TRUE(has_field_error(admin.get("/api/v1/compare?runs=" + ida + ",," + idb), "runs"));
  std::string many = ida;
  for (int i = 0; i < 20; ++i) many += ",run_x" + std::to_string(i);
  EXPECT_TRUE(has_field_error(admin.get("/api/v1/compare?runs=" + many), "runs"));
  auto r = admin.get("/api/v1/compare?runs=" + ida + "," + idb + "&baseline=run_other");
  EXPECT_TRUE(is_problem(r, 400)) << r;
  EXPECT_TRUE(has_field_error(r, "baseline")) << r;
  r = admin.get("/api/v1/compare?runs=" + ida + ",run_unknown");
  EXPECT_TRUE(is_problem(r, 404)) << r;
  EXPECT_THAT(r.json["detail"].get<std::string>(), ::testing::HasSubstr("run_unknown"));
}

// ---------------------------------------------------------------------------------------------
// The CLI against these endpoints

TEST_F(ReadSide, CliImportsALogAndComparesRuns) {
  TempDir dir("podium-read-cli");
  const auto file = dir.path() / "almodel-8b-tpu7x.log";
  std::ofstream(file) << maxtext_log(Flavor::ray);
  const std::string env =
      "PODIUM_SERVER=" + podium().url() + " PODIUM_TOKEN=" + podium().server().admin_token() + " ";
  const std::string cli = env + binary("podium").string();
  std::string out;
  ASSERT_EQ(run_shell(cli + " import-log " + file.string() +
                          " --accelerator tpu7x-64 --model almodel-8b 2>&1",
                      &out),
            0)
      << out;
  EXPECT_THAT(out, ::testing::HasSubstr("almodel-8b-tpu7x")) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("succeeded")) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("last step 29")) << out;
  const std::string id =
      podium().db().scalar("SELECT id FROM runs WHERE name = 'almodel-8b-tpu7x' AND imported");
  ASSERT_FALSE(id.empty());

  ASSERT_EQ(run_shell(cli + " runs summary " + id + " 2>&1", &out), 0) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("step_seconds")) << out;
  ASSERT_EQ(run_shell(cli + " runs metrics " + id + " --fields loss --max-points 10 2>&1", &out), 0)
      << out;
  EXPECT_THAT(out, ::testing::HasSubstr("LOSS")) << out;

  const json other = import(import_body(unique_name("other"), maxtext_log(Flavor::host)));
  ASSERT_EQ(
      run_shell(cli + " compare " + id + " " + other["id"].get<std::string>() + " 2>&1", &out), 0)
      << out;
  EXPECT_THAT(out, ::testing::HasSubstr("baseline")) << out;
  // Equal runs: every ratio reads 1.0x (issue 31: two significant digits, step time as a speed).
  EXPECT_THAT(out, ::testing::HasSubstr("1.81 (1.0\u00d7)")) << out;

  // A bad accelerator: exit nonzero and the valid choices shown.
  EXPECT_NE(run_shell(cli + " import-log " + file.string() +
                          " --accelerator tpu7x-63 --model almodel-8b --name again 2>&1",
                      &out),
            0);
  EXPECT_THAT(out, ::testing::HasSubstr("tpu7x-64")) << out;
}

}  // namespace
}  // namespace podium::it

namespace podium::it {
namespace {

// ---------------------------------------------------------------------------------------------
// Planner history: finished runs calibrate the plans of the same model on the same slice type.

TEST_F(ReadSide, PlansRestOnWhatEarlierRunsOfTheSameModelAndSliceMeasured) {
  podium().create_cluster("ironwood", "tpu7x-64");
  auto spec = [](json parallelism) {
    return json{{"name", "next"},
                {"cluster", "ironwood"},
                {"model", "almodel-8b"},
                {"config_file", "configs/almodel-8b.yml"},
                {"workload", "maxtext"},
                {"steps", 10},
                {"per_device_batch_size", 1},
                {"max_target_length", 4096},
                {"parallelism", parallelism},
                {"config", {{"remat_policy", "full"}, {"opt_type", "muon"}}}};
  };
  const json same = {{"ici_fsdp", 16}, {"ici_tensor", 4}};
  auto plan = [&](const json& parallelism) {
    return require_status(podium().admin().post("/api/v1/plan", spec(parallelism)), 200).json;
  };
  json before = plan(same);
  EXPECT_EQ(before["estimate"]["efficiency_basis"], "default") << before["estimate"];
  EXPECT_EQ(before["memory"]["basis"], "estimate") << before["memory"];

  import(import_body(unique_name("measured"), maxtext_log(Flavor::host)));
  json after = plan(same);
  EXPECT_EQ(after["estimate"]["efficiency_basis"], "history") << after["estimate"];
  EXPECT_EQ(after["estimate"]["efficiency_runs"], 1);
  // The measured MFU, against tpu7x's per-device peak (1153.5), not the per-chip one.
  const double mfu = after["estimate"]["mfu"].get<double>();
  EXPECT_NEAR(mfu, expected_tflops() / 1153.5, 0.05 * expected_tflops() / 1153.5);
  // The same sharding, remat and optimizer: the observed HBM (81.2 GiB peak) is the basis.
  EXPECT_EQ(after["memory"]["basis"], "history") << after["memory"];

  // Another sharding: the HBM observation does not transfer; the MFU still does.
  json other = plan({{"ici_fsdp", 64}});
  EXPECT_EQ(other["memory"]["basis"], "estimate") << other["memory"];
  EXPECT_EQ(other["estimate"]["efficiency_basis"], "history");
}

}  // namespace
}  // namespace podium::it
