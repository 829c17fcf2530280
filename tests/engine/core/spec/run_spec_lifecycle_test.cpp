#include "engine/core/spec/run_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

json minimal() {
  return {
      {"name", "r"}, {"cluster", "c"}, {"model", "m"}, {"workload", "reference"}, {"steps", 10}};
}

std::vector<std::string> fields(const Parsed<RunSpec>& r) {
  std::vector<std::string> out;
  for (const FieldError& e : r.errors) out.push_back(e.field);
  return out;
}

TEST(RunSpecLifecycle, DefaultsRestartOnStallAndLeavesTheRestUnset) {
  const Parsed<RunSpec> r = parse_run_spec(minimal());
  ASSERT_THAT(r.errors, IsEmpty());
  EXPECT_EQ(r.value->on_stall, OnStall::restart);
  EXPECT_FALSE(r.value->stall_seconds);
  EXPECT_FALSE(r.value->init_from);
  EXPECT_FALSE(r.value->checkpoint_retention);
  EXPECT_FALSE(r.value->max_recoveries);
  EXPECT_FALSE(r.value->project);
  EXPECT_FALSE(r.value->notes);
  const json j = to_json(*r.value);
  EXPECT_EQ(j["on_stall"], "restart");
  for (const char* key : {"stall_seconds", "init_from", "checkpoint_retention", "max_recoveries",
                          "project", "notes"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_TRUE(j[key].is_null()) << key;
  }
}

TEST(RunSpecLifecycle, ReadsEveryFieldAndRoundTrips) {
  json body = minimal();
  body["on_stall"] = "fail";
  body["stall_seconds"] = 120;
  body["init_from"] = {{"run", "r-abc"}, {"step", 200}};
  body["checkpoint_retention"] = {{"keep_last", 3}, {"keep_every", 1000}};
  body["max_recoveries"] = 5;
  body["project"] = "llama-ablations";
  body["notes"] = "baseline for the remat sweep";
  const Parsed<RunSpec> r = parse_run_spec(body);
  ASSERT_THAT(r.errors, IsEmpty());
  const RunSpec& s = *r.value;
  EXPECT_EQ(s.on_stall, OnStall::fail);
  EXPECT_EQ(s.stall_seconds, 120);
  ASSERT_TRUE(s.init_from);
  EXPECT_EQ(s.init_from->run, "r-abc");
  EXPECT_EQ(s.init_from->step, 200);
  ASSERT_TRUE(s.checkpoint_retention);
  EXPECT_EQ(s.checkpoint_retention->keep_last, 3);
  EXPECT_EQ(s.checkpoint_retention->keep_every, 1000);
  EXPECT_EQ(s.max_recoveries, 5);
  EXPECT_EQ(s.project, "llama-ablations");
  EXPECT_EQ(s.notes, "baseline for the remat sweep");

  const json j = to_json(s);
  EXPECT_EQ(j["init_from"], (json{{"run", "r-abc"}, {"step", 200}}));
  EXPECT_EQ(j["checkpoint_retention"], (json{{"keep_last", 3}, {"keep_every", 1000}}));
  const Parsed<RunSpec> again = parse_run_spec(j);
  ASSERT_THAT(again.errors, IsEmpty());
  EXPECT_EQ(to_json(*again.value), j);
}

TEST(RunSpecLifecycle, RetentionMayNameEitherBound) {
  json body = minimal();
  body["checkpoint_retention"] = {{"keep_every", 50}};
  const Parsed<RunSpec> r = parse_run_spec(body);
  ASSERT_THAT(r.errors, IsEmpty());
  EXPECT_FALSE(r.value->checkpoint_retention->keep_last);
  EXPECT_EQ(r.value->checkpoint_retention->keep_every, 50);
}

TEST(RunSpecLifecycle, NamesTheFieldOfEveryBadValue) {
  json body = minimal();
  body["on_stall"] = "ignore";
  body["stall_seconds"] = 0;
  body["init_from"] = {{"run", ""}, {"step", -1}, {"path", "/x"}};
  body["checkpoint_retention"] = {{"keep_last", 0}, {"forever", true}};
  body["max_recoveries"] = -1;
  body["project"] = "../etc";
  body["notes"] = 7;
  const Parsed<RunSpec> r = parse_run_spec(body);
  EXPECT_FALSE(r.value);
  EXPECT_THAT(fields(r),
              ElementsAre("on_stall", "stall_seconds", "init_from.path", "init_from.run",
                          "init_from.step", "checkpoint_retention.forever",
                          "checkpoint_retention.keep_last", "max_recoveries", "project", "notes"));
}

TEST(RunSpecLifecycle, RefusesAnEmptyRetentionAndAnIncompleteInitFrom) {
  json body = minimal();
  body["checkpoint_retention"] = json::object();
  body["init_from"] = {{"run", "r-abc"}};
  const Parsed<RunSpec> r = parse_run_spec(body);
  EXPECT_THAT(fields(r), ElementsAre("init_from.step", "checkpoint_retention"));
}

TEST(RunSpecLifecycle, BoundsNotesAndStallSeconds) {
  json body = minimal();
  body["notes"] = std::string(64 * 1024 + 1, 'n');
  body["stall_seconds"] = 7 * 24 * 3600 + 1;
  EXPECT_THAT(fields(parse_run_spec(body)), ElementsAre("stall_seconds", "notes"));
  body["notes"] = std::string(64 * 1024, 'n');
  body["stall_seconds"] = 1;
  EXPECT_THAT(parse_run_spec(body).errors, IsEmpty());
}

TEST(CheckpointRetention, ParsesForClustersWithTheirOwnFieldName) {
  std::vector<FieldError> errors;
  auto r = parse_checkpoint_retention(json{{"keep_last", 2}}, "checkpoint_retention", errors);
  ASSERT_TRUE(r);
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_EQ(to_json(*r), (json{{"keep_last", 2}, {"keep_every", nullptr}}));
  EXPECT_FALSE(parse_checkpoint_retention(json("3"), "retention", errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "retention");
}

}  // namespace
}  // namespace podium::core
