// `podium-worker attach` with a code bundle (issue 28.3): the rank starts in its unpacked copy
// of the bundle, fetched with the attach token's control plane; a bundle that cannot be had (the
// job names another one, or the bytes never match the digest) fails the rank with exit 127 and
// the code_bundle_unusable line before anything is launched.
#include "engine/worker/attach.h"

#include <gtest/gtest.h>

#include <fstream>

#include "engine/bundle/archive.h"
#include "engine/bundle/bundle_files.h"
#include "engine/worker/code_tree.h"
#include "tests/engine/worker/fakes.h"
#include "tests/engine/worker/temp_dir.h"

namespace podium::worker {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::FakeControlPlane;
using testing::FakeLauncher;
using testing::TempDir;

struct Bundle {
  std::string bytes;
  std::string digest;
};

Bundle make_bundle(const std::string& marker) {
  bundle::BundleWriter w;
  w.add_file("app/marker.txt", false, marker);
  Bundle b;
  b.bytes = w.finish();
  b.digest = bundle::bundle_digest(b.bytes);
  return b;
}

core::AttachIdentity identity() {
  core::AttachIdentity id;
  id.engine = "slurm";
  id.rank = 0;
  id.world = 1;
  id.engine_job = "77";
  return id;
}

json assignment(const Bundle& b) {
  return {{"attempt_id", "att_1"},
          {"run_id", "run_1"},
          {"run_name", "run_1"},
          {"rank", 0},
          {"command", {"/bin/sh", "show.sh"}},
          {"env", json::object()},
          {"workdir", "app"},
          {"checkpoint_dir", nullptr},
          {"grace_seconds", 1},
          {"code_bundle", {{"digest", b.digest}, {"size_bytes", b.bytes.size()}}}};
}

struct Harness {
  TempDir dir;
  std::shared_ptr<FakeControlPlane> api = std::make_shared<FakeControlPlane>();
  std::shared_ptr<FakeLauncher> launcher = std::make_shared<FakeLauncher>();
  AttachOptions options;
  std::atomic<bool> stop{false};
  Harness() {
    options.workdir = dir.path();
    options.join_timeout = std::chrono::seconds(10);
    // The rank exits 0 at once when it is started.
    launcher->state->exit = ExitStatus{0, std::nullopt};
    launcher->state->output_done = true;
  }
  // Serves the assignment and `served` as the bundle's bytes.
  void serve(const json& a, const std::string& digest, const std::string& served) {
    api->answer = [a, digest, served](const testing::RecordedCall& c) -> std::optional<ApiResult> {
      if (c.path == "attach") return classify(200, a.dump());
      if (c.path == "bundles/" + digest) return classify(200, served);
      return std::nullopt;
    };
  }
  int run() {
    return run_attach(identity(), options, api, launcher, std::make_shared<SteadyClock>(), stop);
  }
  std::string logged() {
    std::string all;
    for (const auto& c : api->snapshot())
      if (c.path.find("/logs") != std::string::npos)
        for (const auto& l : c.body["lines"]) all += l.get<std::string>() + "\n";
    return all;
  }
  std::optional<int> reported_exit() {
    for (const auto& c : api->snapshot())
      if (c.path.find("/status") != std::string::npos && c.body.value("state", "") == "exited")
        return c.body["exit_code"].get<int>();
    return std::nullopt;
  }
};

TEST(AttachBundle, TheRankStartsInItsUnpackedCopy) {
  Harness h;
  const auto b = make_bundle("hello\n");
  h.options.code_bundle = b.digest;
  h.serve(assignment(b), b.digest, b.bytes);
  EXPECT_EQ(h.run(), 0);
  ASSERT_EQ(h.launcher->specs.size(), 1u);
  const fs::path tree = h.dir.path() / "code" / "att_1" / "rank-0";
  EXPECT_EQ(h.launcher->specs[0].cwd, tree / "app");
  std::ifstream in(tree / "app" / "marker.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "hello\n");
  bool has_code_dir = false;
  for (const auto& e : h.launcher->specs[0].env)
    if (e == "PODIUM_CODE_DIR=" + tree.string()) has_code_dir = true;
  EXPECT_TRUE(has_code_dir);
}

TEST(AttachBundle, AJobThatNamesAnotherBundleFailsTheRankBeforeItStarts) {
  Harness h;
  const auto b = make_bundle("assigned\n");
  const auto other = make_bundle("in the job\n");
  h.options.code_bundle = other.digest;
  h.serve(assignment(b), b.digest, b.bytes);
  EXPECT_EQ(h.run(), 127);
  EXPECT_TRUE(h.launcher->specs.empty());
  EXPECT_EQ(h.reported_exit(), 127);
  const std::string logs = h.logged();
  EXPECT_NE(logs.find(std::string("podium-worker: cannot start the process: invalid assignment: ") +
                      kCodeBundleUnusable + "the job names " + other.digest),
            std::string::npos)
      << logs;
  // Nothing was fetched for a bundle the job did not ask for.
  for (const auto& c : h.api->snapshot()) EXPECT_EQ(c.path.rfind("bundles/", 0), std::string::npos);
}

TEST(AttachBundle, BytesThatNeverMatchTheDigestFailTheRank) {
  Harness h;
  const auto b = make_bundle("named\n");
  const auto tampered = make_bundle("tampered\n");
  h.options.code_bundle = b.digest;
  h.serve(assignment(b), b.digest, tampered.bytes);
  EXPECT_EQ(h.run(), 127);
  EXPECT_TRUE(h.launcher->specs.empty());
  EXPECT_EQ(h.reported_exit(), 127);
  const std::string logs = h.logged();
  EXPECT_NE(logs.find(std::string("podium-worker: cannot start the process: ") +
                      kCodeBundleUnusable + "the server sent"),
            std::string::npos)
      << logs;
  EXPECT_NE(logs.find("digest is " + tampered.digest + ", not " + b.digest), std::string::npos)
      << logs;
}

}  // namespace
}  // namespace podium::worker
