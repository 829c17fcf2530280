// Who may decide what runs on a cluster's hosts (launch_policy), against a real server: the
// default lets only admins submit command workloads; an admin opens or narrows it with PATCH.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class LaunchPolicy : public PodiumTest {
 protected:
  // A cluster created without a launch_policy: the default one.
  std::string default_cluster() {
    const std::string name = unique_name("lp");
    require_status(
        podium().admin().post("/api/v1/clusters", {{"name", name}, {"accelerator", "cpu-1"}}), 201);
    return name;
  }
  int runs_named(const std::string& name) {
    auto r = podium().admin().get("/api/v1/runs?q=" + name);
    return r.json.contains("items") ? static_cast<int>(r.json["items"].size()) : -1;
  }
};

TEST_F(LaunchPolicy, ByDefaultOnlyAdminsSubmitCommandWorkloads) {
  const std::string cluster = default_cluster();
  auto c = podium().admin().get("/api/v1/clusters/" + cluster);
  ASSERT_EQ(c.status, 200) << c;
  EXPECT_EQ(c.json["launch_policy"], json({{"command_roles", {"admin"}},
                                           {"entrypoints", json::array()},
                                           {"code_bundle_roles", {"admin", "member"}}}));

  auto member = podium().create_user("member");
  const std::string name = unique_name("cmd");
  auto refused = member.api.post("/api/v1/runs", Podium::run_spec(cluster, name));
  EXPECT_TRUE(is_problem(refused, 403)) << refused;
  EXPECT_THAT(refused.json.value("detail", ""), HasSubstr("launch_policy.command_roles"));
  ASSERT_TRUE(refused.json.contains("errors")) << refused;
  EXPECT_EQ(refused.json["errors"][0]["field"], "workload");
  EXPECT_EQ(runs_named(name), 0) << "a refused submission left a run behind";

  // The admin may; and a member may run the reference workload with its own entrypoint.
  EXPECT_EQ(
      podium().admin().post("/api/v1/runs", Podium::run_spec(cluster, unique_name("a"))).status,
      201);
}

TEST_F(LaunchPolicy, AnAdminOpensCommandsToMembersAndListsEntrypoints) {
  const std::string cluster = default_cluster();
  auto member = podium().create_user("member");
  auto admin = podium().admin();

  // Members may not change the policy.
  EXPECT_TRUE(is_problem(member.api.patch("/api/v1/clusters/" + cluster,
                                          {{"launch_policy", {{"command_roles", {"member"}}}}}),
                         403));
  auto opened = admin.patch(
      "/api/v1/clusters/" + cluster,
      {{"launch_policy",
        {{"command_roles", {"admin", "member"}}, {"entrypoints", {"/opt/maxtext/train.sh"}}}}});
  ASSERT_EQ(opened.status, 200) << opened;
  EXPECT_EQ(opened.json["launch_policy"]["command_roles"], json({"admin", "member"}));
  EXPECT_EQ(member.api.post("/api/v1/runs", Podium::run_spec(cluster, unique_name("m"))).status,
            201);

  // Narrowed again: members keep the listed entrypoint only.
  ASSERT_EQ(admin
                .patch("/api/v1/clusters/" + cluster,
                       {{"launch_policy", {{"entrypoints", {"/opt/maxtext/train.sh"}}}}})
                .status,
            200);
  json spec = Podium::run_spec(cluster, unique_name("ep"));
  spec["workload"] = "maxtext";
  spec["model"] = "llama2-7b";
  spec["steps"] = 10;
  spec.erase("command");
  spec["force"] = true;  // a cpu-1 cluster cannot hold llama2-7b; the plan is not the point here
  spec["entrypoint"] = {"/bin/sh", "-c", "id"};
  auto refused = member.api.post("/api/v1/runs", spec);
  EXPECT_TRUE(is_problem(refused, 403)) << refused;
  EXPECT_THAT(refused.json.value("detail", ""), HasSubstr("launch_policy.entrypoints"));
  spec["name"] = unique_name("ep2");
  spec["entrypoint"] = {"/opt/maxtext/train.sh", "--flag"};
  auto allowed = member.api.post("/api/v1/runs", spec);
  EXPECT_EQ(allowed.status, 201) << allowed;
  spec["name"] = unique_name("env");
  spec["env"] = {{"LD_PRELOAD", "/tmp/x.so"}};
  auto env = member.api.post("/api/v1/runs", spec);
  EXPECT_TRUE(is_problem(env, 403)) << env;
  EXPECT_EQ(env.json["errors"][0]["field"], "env.LD_PRELOAD") << env;
}

TEST_F(LaunchPolicy, AnInvalidPolicyIs422AndChangesNothing) {
  const std::string cluster = default_cluster();
  auto admin = podium().admin();
  auto bad = admin.patch(
      "/api/v1/clusters/" + cluster,
      {{"launch_policy", {{"command_roles", {"admin", "viewer"}}, {"entrypoints", {"../evil"}}}}});
  EXPECT_TRUE(is_problem(bad, 422)) << bad;
  ASSERT_TRUE(bad.json.contains("errors")) << bad;
  EXPECT_EQ(bad.json["errors"].size(), 2u) << bad;
  EXPECT_EQ(admin.get("/api/v1/clusters/" + cluster).json["launch_policy"]["command_roles"],
            json({"admin"}));
  auto create_bad = admin.post(
      "/api/v1/clusters",
      {{"name", unique_name("bad")}, {"accelerator", "cpu-1"}, {"launch_policy", "open"}});
  EXPECT_TRUE(is_problem(create_bad, 422)) << create_bad;
}

}  // namespace
}  // namespace podium::it
