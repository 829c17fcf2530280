#include "engine/cli/views.h"

#include <gtest/gtest.h>

namespace podium::cli {
namespace {

TEST(Views, RunsTable) {
  const Json runs = Json::parse(R"([
    {"id":"r1","name":"llama","state":"running","cluster":"v7","model":"llama2-7b","last_step":120,"restarts":0,
     "created_at":"2025-03-01T10:00:00Z"},
    {"id":"r2","name":"mix","state":"failed","failure_class":"oom","cluster":{"id":"c1","name":"v5p"},
     "model":"mixtral-8x7b","last_step":null,"restarts":2,"created_at":"2025-03-02T11:30:00.5Z"}
  ])");
  EXPECT_EQ(
      render_table(run_columns(), runs),
      "ID   NAME    STATE          CLUSTER   MODEL          STEP   RESTARTS   CREATED\n"
      "r1   llama   running        v7        llama2-7b       120          0   2025-03-01 10:00:00\n"
      "r2   mix     failed (oom)   v5p       mixtral-8x7b      -          2   2025-03-02 "
      "11:30:00\n");
}

TEST(Views, ClustersTableFromAcceleratorObjectOrString) {
  const Json clusters = Json::parse(R"([
    {"name":"v7-train","accelerator":{"type":"tpu7x-64","topology":"2x4x4"},"num_slices":1,"capacity":"spot",
     "zone":"us-central1-c","hosts":{"expected":8,"registered":3,"healthy":3},"created_at":"2025-01-01T00:00:00Z"},
    {"name":"cpu","accelerator":"cpu-2","num_slices":2}
  ])");
  const std::string table = render_table(cluster_columns(), clusters);
  EXPECT_NE(table.find("v7-train   tpu7x-64      2x4x4"), std::string::npos) << table;
  EXPECT_NE(table.find("3/8"), std::string::npos);
  EXPECT_NE(table.find("cpu        cpu-2         -"), std::string::npos) << table;
}

TEST(Views, ModelsTableUsesCatalogFields) {
  const Json models = Json::parse(R"([{"name":"llama2-7b","workload":"maxtext","moe":false,
    "architecture":{"decoder_block":"llama2","base_num_decoder_layers":32},
    "parameters":{"total":6738415616,"active_per_token":6476271616}}])");
  const std::string table = render_table(model_columns(), models);
  EXPECT_NE(table.find("llama2-7b   maxtext    llama2        32    6.74B    6.48B   no"),
            std::string::npos)
      << table;
}

TEST(Views, PlanWithErrors) {
  const Json plan = Json::parse(R"({
    "ok":false,
    "errors":[{"code":"hbm_exceeded","message":"needs 131.2 GiB per device, 96 GiB available","hint":"set remat_policy: full"}],
    "warnings":[{"code":"data_exhausted","message":"data runs out at step 900"}],
    "topology":{"type":"tpu7x-64","topology":"2x4x4","num_slices":1,"chips":32,"devices":64,"hosts":8},
    "mesh":{"ici":[1,16,4],"dcn":[1,1,1],"axes":["data","fsdp","tensor"]},
    "memory":{"per_device_gib":131.2,"capacity_gib":96,"fits":false,"breakdown":{"params":10.5,"optimizer":21},"basis":"estimate"},
    "data":{"tokens_per_step":1048576,"tokens_available":943718400,"exhausted_at_step":900},
    "estimate":{"tflops_per_device_per_step":764.67,"step_seconds":5.667,"tokens_per_second_per_device":2891.3,"mfu":0.294},
    "alternatives":[{"parallelism":{"ici_fsdp":64},"fits":true}]})");
  const std::string text = render_plan(plan);
  EXPECT_EQ(text.rfind("Plan: ERRORS (1)\n", 0), 0u) << text;
  EXPECT_NE(text.find("  hbm_exceeded: needs 131.2 GiB per device, 96 GiB available\n    hint: set "
                      "remat_policy: full\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Warnings:\n  data_exhausted: data runs out at step 900\n"),
            std::string::npos);
  EXPECT_NE(text.find("  tpu7x-64 2x4x4 x 1 slice(s)\n  chips 32, devices 64, hosts 8\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  axes: [data, fsdp, tensor]\n"), std::string::npos);
  EXPECT_NE(text.find("  131.2 GiB of 96 GiB (DOES NOT FIT), from estimate\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("breakdown (GiB): params 10.5, optimizer 21"), std::string::npos);
  EXPECT_NE(text.find("tokens per step 1.05M, available 944M"), std::string::npos) << text;
  EXPECT_NE(text.find("data runs out at step 900"), std::string::npos);
  EXPECT_NE(text.find("step time 5.667 s, 764.7 TFLOP per device per step"), std::string::npos)
      << text;
  EXPECT_NE(text.find("MFU 29.4%"), std::string::npos);
  EXPECT_NE(text.find("  - parallelism.ici_fsdp=64 fits=true\n"), std::string::npos) << text;
  EXPECT_EQ(plan_verdict(plan), "1 error, 1 warning");
}

TEST(Views, PlanOkMinimal) {
  const Json plan =
      Json::parse(R"({"ok":true,"errors":[],"warnings":[],"data":{"tokens_per_step":10,
    "tokens_available":1000000,"exhausted_at_step":null}})");
  const std::string text = render_plan(plan);
  EXPECT_EQ(text.rfind("Plan: OK\n", 0), 0u);
  EXPECT_EQ(text.find("Errors"), std::string::npos);
  EXPECT_NE(text.find("data lasts for the whole run"), std::string::npos);
  EXPECT_EQ(plan_verdict(plan), "ok, 0 warnings");
}

TEST(Views, MetricsTable) {
  const Json m = Json::parse(
      R"({"steps":[1,2,3],"series":{"loss":[2.5,2.25,null],"step_seconds":[10.0,1.5,1.5]}})");
  EXPECT_EQ(render_metrics(m, {"step_seconds"}),
            "STEP   STEP_SECONDS   LOSS\n"
            "   1             10    2.5\n"
            "   2            1.5   2.25\n"
            "   3            1.5      -\n");
}

TEST(Views, CompareMarksBaselineAndRatios) {
  const Json c = Json::parse(R"({"baseline":"r1","rows":[
    {"run_id":"r1","name":"a","accelerator":"tpu7x-64","topology":"2x4x4","chips":32,"step_seconds":2.0,"mfu":0.4,
     "ratios":{"step_seconds":1.0,"mfu":1.0}},
    {"run_id":"r2","name":"b","accelerator":"v5p-128","topology":"4x4x4","chips":64,"step_seconds":3.0,"mfu":0.3,
     "step_seconds_ratio":1.5,"mfu_ratio":0.75}]})");
  const std::string text = render_compare(c);
  EXPECT_NE(text.find("a *"), std::string::npos) << text;
  // A step time 1.5 times the baseline's is a slow-down; MFU's ratio is plain.
  EXPECT_NE(text.find("3 (1.5× slower)"), std::string::npos) << text;
  EXPECT_NE(text.find("30% (0.75×)"), std::string::npos) << text;
  EXPECT_NE(text.find("2 (1.0×)"), std::string::npos) << text;
  EXPECT_NE(text.find("* baseline"), std::string::npos);
}

// Issue 31 point 6: the seed's 2x4x4 against 2x2x1, a 29.5 times shorter step and 60 times the
// TFLOP/s, read as such (not "x0.0339").
TEST(Views, CompareReadsALargeSpeedupAsSuch) {
  const Json c = Json::parse(R"({"baseline":"r1","rows":[
    {"run_id":"r1","name":"2x2x1","step_seconds":29.5,"tflops_per_device":1.5,
     "ratios":{"step_seconds":1.0,"tflops_per_device":1.0}},
    {"run_id":"r2","name":"2x4x4","step_seconds":1.0,"tflops_per_device":90,
     "ratios":{"step_seconds":0.03389830508474576,"tflops_per_device":60.0}}]})");
  const std::string text = render_compare(c);
  EXPECT_NE(text.find("1 (29.5× faster)"), std::string::npos) << text;
  EXPECT_NE(text.find("90 (60×)"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.0339"), std::string::npos) << text;
  // The columns stay aligned: every line of the table is as wide (in characters) as the header.
  auto width = [](std::string_view line) {
    size_t n = 0;
    for (char ch : line) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    return n;
  };
  const size_t header_end = text.find('\n');
  const size_t row1_end = text.find('\n', header_end + 1);
  const size_t row2_end = text.find('\n', row1_end + 1);
  const std::string_view t(text);
  const size_t row2_width = width(t.substr(row1_end + 1, row2_end - row1_end - 1));
  EXPECT_EQ(width(t.substr(0, header_end)), row2_width) << text;
}

}  // namespace
}  // namespace podium::cli

namespace podium::cli {
namespace {

// Issue 26 point 3: the seed's tpu7x 2x2x1 run at 0.05 % MFU against the planner's expectation
// reads as underperforming with both figures, in the table and below it.
TEST(Views, CompareFlagsAnUnderperformingRunWithBothFigures) {
  const Json c = Json::parse(R"({"baseline":"r1","rows":[
    {"run_id":"r1","name":"2x4x4","tflops_per_device":99.4,"ratios":{"tflops_per_device":1.0},
     "plan_check":{"verdict":"as_planned","tflops_per_device":99.4,"expected_tflops_per_device":346.05,
                   "ratio":0.2872,"threshold":0.1}},
    {"run_id":"r2","name":"2x2x1","tflops_per_device":0.577,"ratios":{"tflops_per_device":0.0058},
     "plan_check":{"verdict":"underperforming","tflops_per_device":0.577,
                   "expected_tflops_per_device":346.05,"ratio":0.001667,"threshold":0.1}},
    {"run_id":"r3","name":"cpu","plan_check":null}]})");
  const std::string text = render_compare(c);
  EXPECT_NE(text.find("VS PLAN"), std::string::npos) << text;
  EXPECT_NE(text.find("0.287×"), std::string::npos) << text;
  EXPECT_NE(text.find("0.00167× UNDERPERFORMING"), std::string::npos) << text;
  EXPECT_NE(text.find("2x2x1 is underperforming: 0.577 TFLOP/s/device measured, 346.1 expected "
                      "by the plan (0.00167×)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("2x4x4 is"), std::string::npos) << text;
}

TEST(Views, PlanCheckTextReadsAFlagOrAVerdict) {
  // A run's flags.underperforming carries no verdict: it is one.
  EXPECT_EQ(
      plan_check_text(Json::parse(
          R"({"tflops_per_device":0.577,"expected_tflops_per_device":346.05,"ratio":0.001667})")),
      "underperforming: 0.577 TFLOP/s/device measured, 346.1 expected by the plan (0.00167×)");
  EXPECT_EQ(plan_check_text(Json::parse(R"({"verdict":"as_planned","tflops_per_device":330,
              "expected_tflops_per_device":367.2,"ratio":0.8987})")),
            "as planned: 330 TFLOP/s/device measured, 367.2 expected by the plan (0.899×)");
  EXPECT_EQ(plan_check_text(Json(nullptr)), "");
  EXPECT_EQ(plan_check_text(Json::parse(R"({"ratio":"x"})")), "");
  EXPECT_EQ(plan_check_cell(nullptr), "-");
}

}  // namespace
}  // namespace podium::cli
