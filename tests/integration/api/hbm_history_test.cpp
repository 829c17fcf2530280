// Memory verdicts from history, end to end through the API: imported real-format logs of the
// domain brief's ALModel case (tpu7x-64, fsdp 16 x tensor 4, remat full, muon) calibrate the
// plans of other shapes; an OOM log is quoted; a parameter footprint is no peak.
#include <gtest/gtest.h>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

std::string almodel_log(double batch, int seq, const std::string& memory_lines, bool steps) {
  std::string log;
  auto param = [&](const std::string& k, const std::string& v) {
    log += "I1121 16:40:00.000000 140 pyconfig.py:900] Config param " + k + ": " + v + "\n";
  };
  param("model_name", "almodel-8b");
  param("per_device_batch_size", std::to_string(batch));
  param("max_target_length", std::to_string(seq));
  param("ici_fsdp_parallelism", "16");
  param("ici_tensor_parallelism", "4");
  param("remat_policy", "full");
  param("opt_type", "muon");
  log +=
      "Memstats: After params initialized:\n"
      "\tUsing (GB) 6.21 / 94.75 (6.554090%) on TPU_0(process=0,(0,0,0,0))\n";
  log += memory_lines;
  if (steps) {
    for (int s = 0; s < 12; ++s)
      log +=
          "I1121 16:46:01.000000 140 metric_logger.py:190] completed step: " + std::to_string(s) +
          ", seconds: 3.100, TFLOP/s/device: 250.000, Tokens/s/device: 1321.290, "
          "total_weights: 262144, loss: 9.500\n";
  }
  return log;
}

class HbmHistory : public PodiumTest {
 protected:
  json import(const std::string& name, const std::string& log) {
    auto r = podium().admin().post("/api/v1/runs/import", json{{"name", name},
                                                               {"accelerator", "tpu7x-64"},
                                                               {"num_slices", 1},
                                                               {"model", "almodel-8b"},
                                                               {"config", json::object()},
                                                               {"log", log}});
    return require_status(r, 201).json;
  }
  json plan(double batch, int seq) {
    const json spec = {{"name", "next"},
                       {"cluster", cluster_},
                       {"model", "almodel-8b"},
                       {"config_file", "configs/almodel-8b.yml"},  // MaxText has no almodel-8b
                       {"workload", "maxtext"},
                       {"steps", 10},
                       {"per_device_batch_size", batch},
                       {"max_target_length", seq},
                       {"parallelism", {{"ici_fsdp", 16}, {"ici_tensor", 4}}},
                       {"config", {{"remat_policy", "full"}, {"opt_type", "muon"}}}};
    return require_status(podium().admin().post("/api/v1/plan", spec), 200).json;
  }
  void SetUp() override {
    PodiumTest::SetUp();
    cluster_ = unique_name("ironwood");
    podium().create_cluster(cluster_, "tpu7x-64");
  }
  std::string cluster_;
};

TEST_F(HbmHistory, ParamsInitializedIsNotThePeak) {
  const json run = import(unique_name("params"), almodel_log(1, 4096, "", true));
  auto sum =
      require_status(
          podium().admin().get("/api/v1/runs/" + run["id"].get<std::string>() + "/summary"), 200)
          .json;
  EXPECT_TRUE(sum["hbm_gib_used"].is_null()) << sum["hbm"];
  // And it calibrates nothing: the plan stays on the estimate.
  EXPECT_EQ(plan(1, 4096)["memory"]["basis"], "estimate");
}

TEST_F(HbmHistory, OneRealRunDecidesTheOtherShapesAndAnOomIsQuoted) {
  const json measured =
      import(unique_name("b1s4096"),
             almodel_log(1, 4096,
                         "Memstats: After first optimizer step:\n"
                         "\tUsing (GB) 63.90 / 94.75 (67.4%) on TPU_0(process=0,(0,0,0,0))\n",
                         true));
  auto sum = require_status(podium().admin().get("/api/v1/runs/" +
                                                 measured["id"].get<std::string>() + "/summary"),
                            200)
                 .json;
  EXPECT_EQ(sum["hbm_gib_used"], 63.9);
  EXPECT_EQ(sum["hbm"]["source"], "memstats_after_step");

  json same = plan(1, 4096);
  EXPECT_EQ(same["memory"]["verdict"], "fits") << same["memory"].dump(2);
  EXPECT_EQ(same["memory"]["fits"], true);
  EXPECT_EQ(same["memory"]["basis"], "history");
  EXPECT_EQ(same["memory"]["source"]["run"], measured["id"]);
  json longer = plan(1, 8192);
  EXPECT_EQ(longer["memory"]["verdict"], "does_not_fit") << longer["memory"].dump(2);
  EXPECT_EQ(longer["memory"]["fits"], false);
  EXPECT_EQ(longer["errors"][0]["code"], "hbm_exceeded");
  json bigger = plan(4, 8192);
  EXPECT_EQ(bigger["memory"]["verdict"], "does_not_fit");

  // The b1/s8192 run that ran out of memory: its requirement is what the verdict quotes.
  const json oom = import(
      unique_name("b1s8192"),
      almodel_log(1, 8192,
                  "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile "
                  "permanent error. Ran out of memory in memory space hbm. Used 112.90G of "
                  "94.75G hbm. Exceeded hbm capacity by 18.15G.\n",
                  false));
  EXPECT_EQ(oom["failure_class"], "oom");
  longer = plan(1, 8192);
  EXPECT_EQ(longer["memory"]["verdict"], "does_not_fit");
  EXPECT_EQ(longer["memory"]["source"]["run"], oom["id"]) << longer["memory"].dump(2);
  EXPECT_EQ(longer["memory"]["source"]["kind"], "oom_required");
  EXPECT_EQ(longer["memory"]["low_gib"], 112.9);
  const std::string message = longer["errors"][0]["message"];
  EXPECT_NE(message.find("112.9"), std::string::npos) << message;
  EXPECT_NE(message.find("oom_required"), std::string::npos) << message;
  // The smaller shape still fits with both runs fitted.
  same = plan(1, 4096);
  EXPECT_EQ(same["memory"]["verdict"], "fits") << same["memory"].dump(2);
  EXPECT_EQ(same["memory"]["observations"], 2);
}

}  // namespace
}  // namespace podium::it
