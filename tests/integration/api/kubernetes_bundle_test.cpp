// Code bundles on Kubernetes (issue 28.3), through the real server with a fake `kubectl` on its
// PATH (apply records what it was given): a run submitted with a bundle gets a JobSet whose rank
// containers carry PODIUM_CODE_BUNDLE, the ranks' assignment names the bundle, and the attempt's
// attach token (from the Secret kubectl applied) fetches that bundle and no other run's; an
// attach token of another run cannot fetch it either.

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "engine/bundle/archive.h"
#include "engine/bundle/bundle_files.h"
#include "tests/integration/support/fake_kubectl.h"
#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

FakeKubectl& fake() {
  static FakeKubectl f;
  return f;
}

class KubernetesBundles : public PodiumTest {
 protected:
  Podium::Options options() const override {
    Podium::Options o;
    o.env = {{"PATH", fake().path_env()}};
    return o;
  }

  struct Uploaded {
    std::string bytes;
    std::string digest;
  };
  Uploaded upload(const std::string& marker) {
    bundle::BundleWriter w;
    w.add_file("marker.txt", false, marker + "\n");
    Uploaded u;
    u.bytes = w.finish();
    u.digest = bundle::bundle_digest(u.bytes);
    auto r = podium().admin().raw("PUT", "/api/v1/bundles/" + u.digest, u.bytes,
                                  {{"Content-Type", "application/gzip"}});
    EXPECT_EQ(r.status, 201) << r;
    return u;
  }

  // Submits a run with the bundle and waits until kubectl applied its JobSet; returns the run id,
  // what was applied, and the attach token from the applied Secret.
  struct Applied {
    std::string run_id;
    std::string manifest;
    std::string token;
  };
  Applied submit_applied(const std::string& cluster, const std::string& digest) {
    auto admin = podium().admin();
    auto run = podium().submit_run(admin, cluster, unique_name("coded"),
                                   {{"code_bundle", digest}, {"command", {"/bin/true"}}});
    Applied out;
    out.run_id = run["id"];
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      auto a = admin.get("/api/v1/runs/" + out.run_id + "/attempts");
      if (a.status == 200 && !a.json["items"].empty() && a.json["items"][0]["engine"].is_object() &&
          a.json["items"][0]["engine"]["job_id"].is_string())
        break;
      std::this_thread::sleep_for(100ms);
    }
    out.manifest = fake().applied();
    EXPECT_NE(out.manifest.find(out.run_id), std::string::npos) << "never applied: " << out.run_id;
    const auto at = out.manifest.find("token: pda_");
    if (at != std::string::npos)
      out.token = out.manifest.substr(at + 7, out.manifest.find('\n', at) - at - 7);
    return out;
  }
};

json join(int host, const std::string& address) {
  return {{"engine", "kubernetes"},
          {"rank", host},
          {"world", 4},
          {"slice", 0},
          {"host", host},
          {"address", address},
          {"hostname", "pod" + std::to_string(host)}};
}

TEST_F(KubernetesBundles, TheJobSetCarriesTheBundleAndTheAttachTokenFetchesOnlyItsOwn) {
  const std::string cluster = unique_name("gke");
  podium().create_cluster(cluster, "v6e-16",
                          {{"executor", {{"kind", "kubernetes"}, {"image", "img:1"}}}});
  const auto mine = upload("mine");
  const auto theirs = upload("theirs");

  const auto a = submit_applied(cluster, mine.digest);
  ASSERT_FALSE(a.token.empty()) << a.manifest;
  // Each rank container: the bundle's digest as a literal value (no secret beside the token's
  // secretKeyRef, which the manifest already had).
  EXPECT_NE(a.manifest.find("- name: PODIUM_CODE_BUNDLE\n"), std::string::npos) << a.manifest;
  EXPECT_NE(a.manifest.find(mine.digest), std::string::npos) << a.manifest;
  // `podium runs manifest` shows the same wiring, without the token.
  auto shown = podium().admin().get("/api/v1/runs/" + a.run_id + "/manifest");
  ASSERT_EQ(shown.status, 200) << shown;
  const std::string shown_text = shown.json["manifest"];
  EXPECT_NE(shown_text.find("PODIUM_CODE_BUNDLE"), std::string::npos) << shown_text;
  EXPECT_EQ(shown_text.find(a.token), std::string::npos);

  auto rank = podium().as(a.token);
  // The attach token fetches its run's bundle (before and after joining), byte for byte.
  auto fetched = rank.get("/api/v1/agent/bundles/" + mine.digest);
  ASSERT_EQ(fetched.status, 200) << fetched;
  EXPECT_TRUE(fetched.body == mine.bytes);
  // Another run's bundle: 403, even though it exists.
  EXPECT_TRUE(is_problem(rank.get("/api/v1/agent/bundles/" + theirs.digest), 403));

  // Every rank joins; the assignment names the bundle as an agent's does.
  json last;
  for (int h = 0; h < 4; ++h) {
    auto reply = rank.post("/api/v1/agent/attach", join(h, "10.3.0." + std::to_string(h)));
    ASSERT_EQ(reply.status, h < 3 ? 202 : 200) << h << ": " << reply;
    if (h == 3) last = reply.json;
  }
  ASSERT_TRUE(last["code_bundle"].is_object()) << last;
  EXPECT_EQ(last["code_bundle"]["digest"], mine.digest);
  EXPECT_EQ(last["code_bundle"]["size_bytes"], mine.bytes.size());

  // The other run's rank cannot fetch this run's bundle with its own token.
  const auto b = submit_applied(cluster, theirs.digest);
  ASSERT_FALSE(b.token.empty()) << b.manifest;
  ASSERT_NE(b.token, a.token);
  auto other = podium().as(b.token);
  EXPECT_TRUE(is_problem(other.get("/api/v1/agent/bundles/" + mine.digest), 403));
  EXPECT_EQ(other.get("/api/v1/agent/bundles/" + theirs.digest).status, 200);

  // Once the attempt is over its token fetches nothing.
  const int cancelled =
      podium().admin().post("/api/v1/runs/" + a.run_id + "/cancel", json::object()).status;
  EXPECT_TRUE(cancelled == 200 || cancelled == 202) << cancelled;
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i) {
    const int s = rank.get("/api/v1/agent/bundles/" + mine.digest).status;
    refused = s == 401 || s == 403;
    if (!refused) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(refused) << "an ended attempt's token still fetches its bundle";
}

}  // namespace
}  // namespace podium::it
