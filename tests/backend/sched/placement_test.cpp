#include "backend/sched/placement.h"

#include <algorithm>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::sched {
namespace {

using ::testing::ElementsAre;

ClusterSnapshot cluster(const std::string& id, int slices, int hosts_per_slice) {
  ClusterSnapshot c;
  c.id = id;
  c.hosts_per_slice = hosts_per_slice;
  for (int s = 0; s < slices; ++s) {
    for (int h = 0; h < hosts_per_slice; ++h) {
      c.hosts.push_back(
          HostSnapshot{id + "-w" + std::to_string(s) + "-" + std::to_string(h), s, h, true, false});
    }
  }
  return c;
}

HostSnapshot& host(ClusterSnapshot& c, int slice, int h) {
  auto it = std::find_if(c.hosts.begin(), c.hosts.end(), [&](const HostSnapshot& x) {
    return x.slice_index == slice && x.host_index == h;
  });
  EXPECT_NE(it, c.hosts.end());
  return *it;
}

QueuedRun run(const std::string& id, const std::string& cluster_id, int slices, int hosts,
              Priority p = Priority::medium, std::int64_t created = 0,
              std::optional<int> min_slices = std::nullopt) {
  QueuedRun r;
  r.id = id;
  r.cluster = cluster_id;
  r.num_slices = slices;
  r.hosts_per_slice = hosts;
  r.priority = p;
  r.created_at = created;
  r.min_slices = min_slices;
  return r;
}

const WaitingRun* waiting(const PlacementPlan& plan, const std::string& id) {
  for (const WaitingRun& w : plan.waiting) {
    if (w.run_id == id) return &w;
  }
  return nullptr;
}

std::vector<std::string> placed_ids(const PlacementPlan& plan) {
  std::vector<std::string> ids;
  for (const Placement& p : plan.placements) ids.push_back(p.run_id);
  return ids;
}

TEST(PlacementTest, PlacesAWholeGangWithRanks) {
  auto c = cluster("c", 3, 4);  // e.g. 3 × tpu7x-32 (4 hosts each)
  auto plan = place({c}, {run("r1", "c", 2, 4)});
  ASSERT_EQ(plan.placements.size(), 1u);
  const Placement& p = plan.placements[0];
  EXPECT_THAT(p.slices, ElementsAre(0, 1));
  EXPECT_EQ(p.world_size, 8);
  EXPECT_FALSE(p.elastic_partial);
  ASSERT_EQ(p.hosts.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(p.hosts[static_cast<std::size_t>(i)].rank, i);
    EXPECT_EQ(p.hosts[static_cast<std::size_t>(i)].gang_slice, i / 4);
    EXPECT_EQ(p.hosts[static_cast<std::size_t>(i)].host_index, i % 4);
  }
  EXPECT_EQ(p.hosts[5].worker_id, "c-w1-1");
  EXPECT_TRUE(plan.waiting.empty());
}

TEST(PlacementTest, GangIsAllOrNothing) {
  auto c = cluster("c", 3, 2);
  host(c, 0, 1).busy = true;
  host(c, 2, 0).healthy = false;
  // Only slice 1 is complete, healthy and idle: a 2-slice run gets nothing.
  auto plan = place({c}, {run("r1", "c", 2, 2)});
  EXPECT_TRUE(plan.placements.empty());
  ASSERT_NE(waiting(plan, "r1"), nullptr);
  EXPECT_EQ(waiting(plan, "r1")->reason, WaitReason::waiting_for_capacity);
  EXPECT_EQ(waiting(plan, "r1")->detail, "needs 2 free slices, 1 free now");
  // A 1-slice run skips the partly busy slice 0 and takes slice 1.
  auto one = place({c}, {run("r2", "c", 1, 2)});
  ASSERT_EQ(one.placements.size(), 1u);
  EXPECT_THAT(one.placements[0].slices, ElementsAre(1));
  EXPECT_EQ(one.placements[0].hosts[0].rank, 0);
  EXPECT_EQ(one.placements[0].hosts[0].slice_index, 1);
}

TEST(PlacementTest, IncompleteOrAmbiguousSlicesAreNotUsable) {
  auto c = cluster("c", 3, 2);
  c.hosts.erase(
      std::remove_if(c.hosts.begin(), c.hosts.end(),
                     [](const HostSnapshot& h) { return h.slice_index == 0 && h.host_index == 1; }),
      c.hosts.end());
  host(c, 1, 1).host_index = 0;  // two workers claim host 0 of slice 1
  EXPECT_THAT(free_slices(c), ElementsAre(2));
  EXPECT_THAT(healthy_slices(c), ElementsAre(2));
  c.hosts.push_back(HostSnapshot{"stray", 2, 7, true, false});  // index out of range
  EXPECT_TRUE(free_slices(c).empty());
}

TEST(PlacementTest, PriorityThenAge) {
  auto c = cluster("c", 1, 1);
  auto plan = place({c}, {run("old-medium", "c", 1, 1, Priority::medium, 1),
                          run("new-high", "c", 1, 1, Priority::high, 5)});
  EXPECT_THAT(placed_ids(plan), ElementsAre("new-high"));
  EXPECT_EQ(waiting(plan, "old-medium")->reason, WaitReason::waiting_for_capacity);

  auto age = place(
      {c}, {run("young", "c", 1, 1, Priority::low, 9), run("old", "c", 1, 1, Priority::low, 3)});
  EXPECT_THAT(placed_ids(age), ElementsAre("old"));

  // Same priority and age: id decides, so the plan never depends on input order.
  auto tie1 = place({c}, {run("b", "c", 1, 1), run("a", "c", 1, 1)});
  auto tie2 = place({c}, {run("a", "c", 1, 1), run("b", "c", 1, 1)});
  EXPECT_THAT(placed_ids(tie1), ElementsAre("a"));
  EXPECT_THAT(placed_ids(tie2), ElementsAre("a"));
}

TEST(PlacementTest, HeadOfLineBlocksSmallerRunsOnTheSameClusterOnly) {
  auto c = cluster("c", 4, 2);
  host(c, 0, 0).busy = true;
  host(c, 1, 0).busy = true;  // 2 of 4 slices free
  auto d = cluster("d", 1, 2);
  auto plan = place({c, d}, {run("big", "c", 3, 2, Priority::high, 1),
                             run("small", "c", 1, 2, Priority::medium, 2),
                             run("elsewhere", "d", 1, 2, Priority::very_low, 3)});
  EXPECT_THAT(placed_ids(plan), ElementsAre("elsewhere"));
  EXPECT_EQ(waiting(plan, "big")->reason, WaitReason::waiting_for_capacity);
  EXPECT_EQ(waiting(plan, "small")->reason, WaitReason::blocked);
  EXPECT_EQ(waiting(plan, "small")->detail, "behind run big");
}

TEST(PlacementTest, RunsThatCanNeverFitDoNotBlock) {
  auto c = cluster("c", 2, 2);
  host(c, 1, 1).healthy = false;  // one healthy slice left
  auto plan = place(
      {c},
      {run("huge", "c", 4, 2, Priority::very_high, 1), run("two", "c", 2, 2, Priority::high, 2),
       run("wrong-shape", "c", 1, 4, Priority::high, 3),
       run("lost", "nowhere", 1, 2, Priority::high, 4), run("bad", "c", 0, 2, Priority::high, 5),
       run("ok", "c", 1, 2, Priority::low, 6)});
  EXPECT_THAT(placed_ids(plan), ElementsAre("ok"));
  EXPECT_EQ(waiting(plan, "huge")->reason, WaitReason::never_fits);
  EXPECT_EQ(waiting(plan, "two")->reason, WaitReason::never_fits);
  EXPECT_EQ(waiting(plan, "wrong-shape")->reason, WaitReason::host_shape_mismatch);
  EXPECT_EQ(waiting(plan, "lost")->reason, WaitReason::unknown_cluster);
  EXPECT_EQ(waiting(plan, "bad")->reason, WaitReason::invalid_request);
  EXPECT_EQ(plan.placements.size() + plan.waiting.size(), 6u);
}

TEST(PlacementTest, SeveralRunsShareOneRound) {
  auto c = cluster("c", 5, 1);
  auto plan = place(
      {c}, {run("a", "c", 2, 1, Priority::medium, 1), run("b", "c", 2, 1, Priority::medium, 2),
            run("c3", "c", 2, 1, Priority::medium, 3)});
  ASSERT_EQ(plan.placements.size(), 2u);
  EXPECT_THAT(plan.placements[0].slices, ElementsAre(0, 1));
  EXPECT_THAT(plan.placements[1].slices, ElementsAre(2, 3));
  EXPECT_EQ(waiting(plan, "c3")->reason, WaitReason::waiting_for_capacity);
}

TEST(PlacementTest, ElasticRunTakesWhatIsFreeAboveItsMinimum) {
  auto c = cluster("c", 4, 2);
  host(c, 3, 0).busy = true;  // 3 free
  auto plan = place({c}, {run("e", "c", 4, 2, Priority::medium, 1, 2)});
  ASSERT_EQ(plan.placements.size(), 1u);
  EXPECT_THAT(plan.placements[0].slices, ElementsAre(0, 1, 2));
  EXPECT_TRUE(plan.placements[0].elastic_partial);
  EXPECT_EQ(plan.placements[0].world_size, 6);
  EXPECT_EQ(plan.placements[0].hosts.back().rank, 5);

  host(c, 1, 0).busy = true;
  host(c, 2, 0).busy = true;  // 1 free, below the minimum of 2
  auto below = place({c}, {run("e", "c", 4, 2, Priority::medium, 1, 2)});
  EXPECT_TRUE(below.placements.empty());
  EXPECT_EQ(waiting(below, "e")->reason, WaitReason::waiting_for_capacity);

  auto invalid = place({c}, {run("e", "c", 2, 2, Priority::medium, 1, 3)});
  EXPECT_EQ(waiting(invalid, "e")->reason, WaitReason::invalid_request);
}

TEST(PlacementTest, ElasticRunTakesTheLargestAllowedShapeThatIsFree) {
  auto c = cluster("c", 4, 1);
  host(c, 3, 0).busy = true;  // 3 free; only 2 and 4 slices have a shape that plans
  auto r = run("e", "c", 4, 1, Priority::medium, 1, 1);
  r.allowed_slices = std::vector<int>{4, 2};
  auto plan = place({c}, {r});
  ASSERT_EQ(plan.placements.size(), 1u);
  EXPECT_THAT(plan.placements[0].slices, ElementsAre(0, 1));

  host(c, 1, 0).busy = true;
  host(c, 2, 0).busy = true;  // 1 free: below the smallest allowed count, it waits and blocks
  auto below = place({c}, {r, run("small", "c", 1, 1, Priority::low, 2)});
  EXPECT_TRUE(below.placements.empty());
  EXPECT_EQ(waiting(below, "e")->reason, WaitReason::waiting_for_capacity);
  EXPECT_EQ(waiting(below, "small")->reason, WaitReason::blocked);

  // No count plans: the run never fits and does not hold the queue.
  r.allowed_slices = std::vector<int>{};
  auto none = place({cluster("c", 4, 1)}, {r, run("small", "c", 1, 1, Priority::low, 2)});
  EXPECT_EQ(waiting(none, "e")->reason, WaitReason::never_fits);
  EXPECT_THAT(waiting(none, "e")->detail, ::testing::HasSubstr("has a shape that plans"));
  EXPECT_THAT(placed_ids(none), ElementsAre("small"));
}

TEST(PlacementTest, GrowDecision) {
  auto c = cluster("c", 4, 1);
  host(c, 0, 0).busy = true;
  host(c, 1, 0).busy = true;  // the elastic run itself, on 2 of its 4 slices
  RunningElasticRun e{"e", "c", 4, 2, Priority::medium};

  auto g = check_grow(c, e, {});
  EXPECT_TRUE(g.grow);
  EXPECT_EQ(g.target_slices, 4);
  EXPECT_THAT(g.new_slices, ElementsAre(2, 3));

  host(c, 3, 0).busy = true;
  auto partial = check_grow(c, e, {});
  EXPECT_TRUE(partial.grow);
  EXPECT_EQ(partial.target_slices, 3);
  EXPECT_EQ(partial.reason, "1 of 2 missing slices are free");

  // A queued peer of equal or higher priority is owed the capacity first.
  auto peer = check_grow(c, e, {run("q", "c", 1, 1, Priority::medium, 5)});
  EXPECT_FALSE(peer.grow);
  EXPECT_EQ(peer.target_slices, 2);
  // Lower priority or another cluster does not stop growth.
  EXPECT_TRUE(check_grow(c, e, {run("q", "c", 1, 1, Priority::low, 5)}).grow);
  EXPECT_TRUE(check_grow(c, e, {run("q", "other", 1, 1, Priority::very_high, 5)}).grow);

  host(c, 2, 0).busy = true;
  EXPECT_FALSE(check_grow(c, e, {}).grow);
  EXPECT_FALSE(check_grow(c, RunningElasticRun{"e", "c", 2, 2, Priority::medium}, {}).grow);
}

TEST(PlacementTest, PriorityNamesAndJson) {
  EXPECT_EQ(parse_priority("very-high"), Priority::very_high);
  EXPECT_EQ(parse_priority("very_low"), Priority::very_low);
  EXPECT_FALSE(parse_priority("urgent").has_value());
  for (Priority p :
       {Priority::very_low, Priority::low, Priority::medium, Priority::high, Priority::very_high}) {
    EXPECT_EQ(parse_priority(to_string(p)), p);
  }
  auto c = cluster("c", 2, 2);
  auto j = to_json(place({c}, {run("r", "c", 1, 2), run("x", "c", 5, 2)}));
  EXPECT_EQ(j["placements"][0]["run_id"], "r");
  EXPECT_EQ(j["placements"][0]["hosts"][1]["rank"], 1);
  EXPECT_EQ(j["placements"][0]["hosts"][1]["worker_id"], "c-w0-1");
  EXPECT_EQ(j["waiting"][0]["reason"], "never_fits");
  EXPECT_EQ(to_json(GrowDecision{})["grow"], false);
}

}  // namespace
}  // namespace podium::sched
