// The RBAC of deploy/kubernetes/executor-rbac.yaml grants the Kubernetes executor exactly the
// verbs its kubectl calls need. The calls are not listed here: the real KubernetesEngine submits,
// observes, cancels and cleans up an attempt against a recording runner, and each recorded
// kubectl command is turned into the API requests kubectl makes for it (the resource and the verb
// the API server authorizes). The Role must grant that set, in the namespace the executor uses,
// and nothing else.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "backend/sched/executors/kubernetes_executor.h"
#include "tests/backend/sched/executors/fake_command_runner.h"
#include "tests/deploy/kubernetes_objects.h"

namespace podium::testing {
namespace {

using nlohmann::json;
using Grant = std::tuple<std::string, std::string, std::string>;  // apiGroup, resource, verb

// API group and plural of the kinds and resource names kubectl is given.
std::pair<std::string, std::string> resource_of(const std::string& name) {
  if (name == "JobSet" || name == "jobset" || name == "jobsets")
    return {"jobset.x-k8s.io", "jobsets"};
  if (name == "Secret" || name == "secret" || name == "secrets") return {"", "secrets"};
  if (name == "Pod" || name == "pod" || name == "pods") return {"", "pods"};
  ADD_FAILURE() << "the executor names a resource this test does not know: " << name;
  return {"?", name};
}

// What the API server authorizes for one kubectl command (argv after the global flags).
std::set<Grant> grants_of(const sched::CommandSpec& call, std::string& namespace_name) {
  std::vector<std::string> args;
  for (const auto& a : call.argv) {
    if (a.rfind("--namespace=", 0) == 0) namespace_name = a.substr(12);
    if (a == "kubectl" || a.rfind("--context=", 0) == 0 || a.rfind("--namespace=", 0) == 0)
      continue;
    args.push_back(a);
  }
  std::set<Grant> out;
  EXPECT_FALSE(args.empty());
  const std::string verb = args.empty() ? "" : args[0];
  if (verb == "apply") {
    // Server-side apply is one PATCH per object; an object that does not exist yet is created
    // by it, which the API server authorizes as create too.
    EXPECT_NE(std::find(args.begin(), args.end(), "--server-side"), args.end());
    for (const auto& object : yaml_documents(call.stdin_text)) {
      const auto [group, resource] = resource_of(object["kind"].get<std::string>());
      out.insert({group, resource, "patch"});
      out.insert({group, resource, "create"});
    }
  } else if (verb == "get") {
    const auto [group, resource] = resource_of(args.at(1));
    // A name after the resource: GET of one object; a label selector: LIST.
    const bool by_name = args.size() > 2 && args[2].rfind("-", 0) != 0;
    out.insert({group, resource, by_name ? "get" : "list"});
    EXPECT_EQ(std::find(args.begin(), args.end(), "--watch"), args.end());
  } else if (verb == "delete") {
    const auto [group, resource] = resource_of(args.at(1));
    out.insert({group, resource, "delete"});
  } else {
    ADD_FAILURE() << "a kubectl subcommand this test cannot map: " << verb;
  }
  return out;
}

std::set<Grant> executor_needs(std::string& namespace_name) {
  auto runner = std::make_shared<sched::FakeRunner>();
  sched::KubernetesEngine engine(runner, {});
  sched::EngineJobSpec spec;
  spec.run_id = "run_9f2c";
  spec.attempt_id = "att_1";
  spec.attempt_number = 1;
  spec.executor.kind = core::ExecutorKind::kubernetes;
  spec.executor.kubernetes.namespace_name = "training";
  spec.accelerator = *core::parse_accelerator("v6e-16").value;
  spec.image = "img:1";
  spec.server_url = "https://podium.example.com";
  auto submitted = engine.submit(spec, "pda_tok");
  EXPECT_TRUE(submitted.job_id) << submitted.error;
  runner->answers = {sched::CommandResult{true, false, 0, 0, R"({"spec":{},"status":{}})", ""},
                     sched::CommandResult{true, false, 0, 0, R"({"items":[]})", ""}};
  engine.observe(spec, *submitted.job_id, false);
  engine.cancel(spec, *submitted.job_id);
  engine.finished(spec, *submitted.job_id);
  std::set<Grant> out;
  for (const auto& call : runner->calls) {
    EXPECT_EQ(call.argv.at(0), "kubectl");
    for (const auto& g : grants_of(call, namespace_name)) out.insert(g);
  }
  return out;
}

TEST(DeployKubernetes, RbacGrantsExactlyWhatTheExecutorCalls) {
  std::string namespace_name;
  const std::set<Grant> needed = executor_needs(namespace_name);
  ASSERT_FALSE(needed.empty());

  std::set<Grant> granted;
  bool bound = false;
  for (const auto& o : yaml_documents(read_source_file("deploy/kubernetes/executor-rbac.yaml"))) {
    EXPECT_NE(o["kind"], "ClusterRole") << "the executor works in one namespace";
    EXPECT_NE(o["kind"], "ClusterRoleBinding");
    if (o["kind"] == "Role") {
      EXPECT_EQ(o["metadata"]["namespace"], namespace_name);
      for (const auto& rule : o["rules"]) {
        EXPECT_FALSE(rule.contains("nonResourceURLs"));
        for (const auto& g : rule["apiGroups"])
          for (const auto& r : rule["resources"])
            for (const auto& v : rule["verbs"]) {
              EXPECT_NE(v, "*");
              EXPECT_NE(r, "*");
              granted.insert({g.get<std::string>(), r.get<std::string>(), v.get<std::string>()});
            }
      }
    }
    if (o["kind"] == "RoleBinding") {
      bound = true;
      EXPECT_EQ(o["metadata"]["namespace"], namespace_name);
      EXPECT_EQ(o["roleRef"]["kind"], "Role");
      EXPECT_EQ(o["subjects"][0]["name"], "podium-server");  // the Deployment's account
    }
  }
  EXPECT_TRUE(bound);
  for (const auto& g : granted)
    EXPECT_TRUE(needed.contains(g)) << "granted but never used: " << std::get<0>(g) << "/"
                                    << std::get<1>(g) << " " << std::get<2>(g);
  for (const auto& g : needed)
    EXPECT_TRUE(granted.contains(g)) << "used but not granted: " << std::get<0>(g) << "/"
                                     << std::get<1>(g) << " " << std::get<2>(g);
}

}  // namespace
}  // namespace podium::testing
