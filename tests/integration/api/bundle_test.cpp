// Code bundles over the API: upload checked byte for byte, stored in PostgreSQL and served back
// unchanged; runs name them (422 when unknown) on every executor's clusters; an agent fetches only
// the bundle of a run it holds a rank of (attach tokens: kubernetes_bundle_test.cpp).
#include <gtest/gtest.h>

#include "engine/bundle/archive.h"
#include "engine/bundle/bundle_files.h"
#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;

struct Bundle {
  std::string bytes;
  std::string digest;
  std::uint64_t uncompressed = 0;
};

Bundle make_bundle(const std::string& marker, size_t filler = 0) {
  bundle::BundleWriter w;
  w.add_file("train.py", false, "print('" + marker + "')\n");
  w.add_file("bin/run.sh", true, "#!/bin/sh\nexec python3 train.py\n");
  // Incompressible filler: several 1 MiB chunks in the database.
  std::string noise(filler, '\0');
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (auto& c : noise) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  if (filler) w.add_file("data/noise.bin", false, noise);
  Bundle b;
  b.uncompressed = w.summary().uncompressed_bytes;
  b.bytes = w.finish();
  b.digest = bundle::bundle_digest(b.bytes);
  return b;
}

const std::vector<std::pair<std::string, std::string>> kGzip = {
    {"Content-Type", "application/gzip"}};

TEST(Bundles, UploadIsCheckedStoredOnceAndServedBackUnchanged) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium podium;
  auto member = podium.create_user("member");
  const auto b = make_bundle(unique_name("m"), 3 << 20);  // 3+ MiB: four chunks

  auto created = member.api.raw("PUT", "/api/v1/bundles/" + b.digest, b.bytes, kGzip);
  ASSERT_EQ(created.status, 201) << created;
  EXPECT_EQ(created.json["digest"], b.digest);
  EXPECT_EQ(created.json["size_bytes"], b.bytes.size());
  EXPECT_EQ(created.json["files"], 3);
  EXPECT_EQ(created.json["created_by"], member.username);
  // The same bytes again: nothing new, 200.
  auto again = member.api.raw("PUT", "/api/v1/bundles/" + b.digest, b.bytes, kGzip);
  EXPECT_EQ(again.status, 200) << again;
  EXPECT_EQ(again.json["created_at"], created.json["created_at"]);

  auto facts = member.api.get("/api/v1/bundles/" + b.digest);
  ASSERT_EQ(facts.status, 200) << facts;
  EXPECT_EQ(facts.json["uncompressed_bytes"].get<std::uint64_t>(), b.uncompressed);
  auto archive = member.api.get("/api/v1/bundles/" + b.digest + "/archive");
  ASSERT_EQ(archive.status, 200);
  EXPECT_EQ(archive.content_type(), "application/gzip");
  EXPECT_EQ(archive.body.size(), b.bytes.size());
  EXPECT_TRUE(archive.body == b.bytes);
  EXPECT_EQ(bundle::bundle_digest(archive.body), b.digest);
}

TEST(Bundles, BadUploadsAreRefusedAndStoreNothing) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium podium({.settings = {"limits.max_bundle_bytes=65536", "limits.max_body_bytes=16384"}});
  auto member = podium.create_user("member");
  const auto b = make_bundle("x");
  const auto other = make_bundle("y");

  // The body is not what the digest names (cut short, or another bundle).
  EXPECT_TRUE(is_problem(member.api.raw("PUT", "/api/v1/bundles/" + b.digest,
                                        b.bytes.substr(0, b.bytes.size() - 10), kGzip),
                         400));
  EXPECT_TRUE(
      is_problem(member.api.raw("PUT", "/api/v1/bundles/" + b.digest, other.bytes, kGzip), 400));
  // Not a bundle, though the digest matches.
  const std::string junk = "definitely not a gzip archive";
  auto r = member.api.raw("PUT", "/api/v1/bundles/" + bundle::bundle_digest(junk), junk, kGzip);
  EXPECT_TRUE(is_problem(r, 400)) << r;
  // A digest of another form.
  EXPECT_TRUE(is_problem(member.api.raw("PUT", "/api/v1/bundles/md5:abc", b.bytes, kGzip), 400));
  EXPECT_TRUE(is_problem(member.api.get("/api/v1/bundles/sha256:XYZ"), 400));
  // Bundles have their own limit, above limits.max_body_bytes; other routes keep theirs.
  const auto medium = make_bundle("m", 30000);
  ASSERT_GT(medium.bytes.size(), 16384u);
  EXPECT_EQ(member.api.raw("PUT", "/api/v1/bundles/" + medium.digest, medium.bytes, kGzip).status,
            201);
  EXPECT_TRUE(is_problem(member.api.raw("POST", "/api/v1/runs", std::string(30000, ' '),
                                        {{"Content-Type", "application/json"}}),
                         413));
  const auto big = make_bundle("z", 200000);
  EXPECT_TRUE(
      is_problem(member.api.raw("PUT", "/api/v1/bundles/" + big.digest, big.bytes, kGzip), 413));
  for (const auto& d : {b.digest, bundle::bundle_digest(junk), big.digest})
    EXPECT_TRUE(is_problem(member.api.get("/api/v1/bundles/" + d), 404)) << d;
  // A viewer may not upload.
  auto viewer = podium.create_user("viewer");
  EXPECT_TRUE(
      is_problem(viewer.api.raw("PUT", "/api/v1/bundles/" + b.digest, b.bytes, kGzip), 403));
}

TEST(Bundles, RunsNameKnownBundlesOnEveryExecutorsClusters) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium podium;
  auto member = podium.create_user("member");
  podium.create_cluster("agents", "cpu-1");
  podium.create_cluster("slurm", "cpu-1",
                        {{"executor", {{"kind", "slurm"}, {"partition", "podium"}}}});
  const auto b = make_bundle("run");
  const auto missing = make_bundle("never uploaded");
  require_status(member.api.raw("PUT", "/api/v1/bundles/" + b.digest, b.bytes, kGzip), 201);

  auto unknown = member.api.post("/api/v1/runs", json{{"name", unique_name("r")},
                                                      {"cluster", "agents"},
                                                      {"workload", "command"},
                                                      {"command", {"true"}},
                                                      {"code_bundle", missing.digest}});
  ASSERT_TRUE(is_problem(unknown, 422)) << unknown;
  EXPECT_NE(unknown.body.find("code_bundle"), std::string::npos);

  // Under Slurm (and Kubernetes) the rank's wrapper fetches and unpacks it.
  auto engine = member.api.post("/api/v1/runs", json{{"name", unique_name("r")},
                                                     {"cluster", "slurm"},
                                                     {"workload", "command"},
                                                     {"command", {"true"}},
                                                     {"code_bundle", b.digest}});
  ASSERT_EQ(engine.status, 201) << engine;
  EXPECT_EQ(engine.json["spec"]["code_bundle"], b.digest);

  auto ok = member.api.post("/api/v1/runs", json{{"name", unique_name("r")},
                                                 {"cluster", "agents"},
                                                 {"workload", "command"},
                                                 {"command", {"python3", "train.py"}},
                                                 {"code_bundle", b.digest},
                                                 {"workdir", "bin"}});
  ASSERT_EQ(ok.status, 201) << ok;
  EXPECT_EQ(ok.json["spec"]["code_bundle"], b.digest);
  EXPECT_EQ(ok.json["spec"]["workdir"], "bin");
  auto row = podium.db().query("SELECT code_bundle FROM runs WHERE id = $1",
                               {ok.json["id"].get<std::string>()});
  EXPECT_EQ(row.at(0, "code_bundle"), b.digest);
}

TEST(Bundles, AnAgentFetchesOnlyTheBundleOfARunItHoldsARankOf) {
  PODIUM_IT_REQUIRE_DATABASE();
  Podium podium;
  auto member = podium.create_user("member");
  podium.create_cluster("agents", "cpu-1");
  const auto b = make_bundle("agent", 1500000);
  const auto other = make_bundle("someone else's");
  require_status(member.api.raw("PUT", "/api/v1/bundles/" + b.digest, b.bytes, kGzip), 201);
  require_status(member.api.raw("PUT", "/api/v1/bundles/" + other.digest, other.bytes, kGzip), 201);

  Api registrar(podium.url(), podium.worker_token("agents"));
  auto reg = require_status(
      registrar.post("/api/v1/agent/register",
                     json{{"cluster", "agents"}, {"slice", 0}, {"host", 0}, {"instance", "b"}}),
      200);
  const std::string worker = reg.json["worker_id"];
  Api agent(podium.url(), reg.json["credential"].get<std::string>());
  // Before any assignment the worker holds nothing.
  EXPECT_TRUE(is_problem(agent.get("/api/v1/agent/bundles/" + b.digest), 403));

  podium.submit_run(member.api, "agents", unique_name("coded"),
                    {{"code_bundle", b.digest}, {"command", {"python3", "train.py"}}});
  auto a =
      require_status(agent.get("/api/v1/agent/assignment?worker_id=" + worker + "&wait=20"), 200);
  ASSERT_TRUE(a.json.contains("code_bundle")) << a;
  EXPECT_EQ(a.json["code_bundle"]["digest"], b.digest);
  EXPECT_EQ(a.json["code_bundle"]["size_bytes"], b.bytes.size());

  auto fetched = agent.get("/api/v1/agent/bundles/" + b.digest);
  ASSERT_EQ(fetched.status, 200);
  EXPECT_TRUE(fetched.body == b.bytes);
  EXPECT_TRUE(is_problem(agent.get("/api/v1/agent/bundles/" + other.digest), 403));
  // A user token is not an agent's.
  EXPECT_TRUE(is_problem(member.api.get("/api/v1/agent/bundles/" + b.digest), 403));
}

}  // namespace
}  // namespace podium::it
