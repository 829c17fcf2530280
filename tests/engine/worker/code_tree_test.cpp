#include "engine/worker/code_tree.h"

#include <gtest/gtest.h>

#include "engine/bundle/archive.h"
#include "engine/bundle/bundle_files.h"
#include "engine/worker/assignment.h"
#include "tests/engine/worker/fakes.h"
#include "tests/engine/worker/temp_dir.h"

namespace podium::worker {
namespace {

namespace fs = std::filesystem;
using testing::FakeControlPlane;
using testing::TempDir;

struct Bundle {
  std::string bytes;
  std::string digest;
};

Bundle make_bundle(const std::string& text) {
  bundle::BundleWriter w;
  w.add_file("app/main.py", false, text);
  w.add_file("run.sh", true, "#!/bin/sh\n");
  Bundle b;
  b.bytes = w.finish();
  b.digest = bundle::bundle_digest(b.bytes);
  return b;
}

Assignment assignment_for(const Bundle& b, const std::string& attempt, int rank) {
  Assignment a;
  a.attempt_id = attempt;
  a.rank = rank;
  a.code_bundle = b.digest;
  a.code_bundle_bytes = static_cast<std::int64_t>(b.bytes.size());
  return a;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

const auto no_wait = [](std::chrono::milliseconds) { return true; };

TEST(CodeTree, FetchesOnceUnpacksPerRankAndStartsEachAttemptFromTheBundle) {
  TempDir dir;
  FakeControlPlane api;
  const auto b = make_bundle("print('v1')\n");
  api.answer = [&](const testing::RecordedCall& c) -> std::optional<ApiResult> {
    if (c.path == "bundles/" + b.digest) return classify(200, b.bytes);
    return classify(404, "{}");
  };
  CodeTreeOptions o;
  o.agent_workdir = dir.path();
  auto t0 = prepare_code_tree(api, assignment_for(b, "att_1", 0), o, no_wait);
  ASSERT_EQ(t0.error, "");
  EXPECT_EQ(t0.dir, dir.path() / "code" / "att_1" / "rank-0");
  EXPECT_EQ(read(t0.dir / "app" / "main.py"), "print('v1')\n");
  EXPECT_NE(fs::status(t0.dir / "run.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
  // What the rank wrote into its tree is gone when the rank is delivered again.
  std::ofstream(t0.dir / "app" / "scratch.txt") << "left by the first try";
  auto again = prepare_code_tree(api, assignment_for(b, "att_1", 0), o, no_wait);
  ASSERT_EQ(again.error, "");
  EXPECT_FALSE(fs::exists(again.dir / "app" / "scratch.txt"));
  auto t1 = prepare_code_tree(api, assignment_for(b, "att_1", 1), o, no_wait);
  ASSERT_EQ(t1.error, "");
  EXPECT_EQ(read(t1.dir / "app" / "main.py"), "print('v1')\n");
  // One download; the other two came from <workdir>/bundles/.
  EXPECT_EQ(api.snapshot().size(), 1u);
  EXPECT_TRUE(fs::exists(dir.path() / "bundles" / (b.digest.substr(7) + ".tar.gz")));
}

TEST(CodeTree, ADamagedCacheOrACorruptedDownloadIsFetchedAgain) {
  TempDir dir;
  FakeControlPlane api;
  const auto b = make_bundle("x = 1\n");
  int served = 0;
  api.answer = [&](const testing::RecordedCall&) -> std::optional<ApiResult> {
    // The first answer is cut short on the way; the second is whole.
    return classify(200, ++served == 1 ? b.bytes.substr(0, b.bytes.size() / 2) : b.bytes);
  };
  CodeTreeOptions o;
  o.agent_workdir = dir.path();
  int waits = 0;
  auto t = prepare_code_tree(api, assignment_for(b, "att_1", 0), o,
                             [&](std::chrono::milliseconds) { return ++waits < 5; });
  ASSERT_EQ(t.error, "");
  EXPECT_EQ(served, 2);
  EXPECT_EQ(waits, 1);
  // Damage the cached archive: the next rank fetches again instead of unpacking garbage.
  std::ofstream(dir.path() / "bundles" / (b.digest.substr(7) + ".tar.gz"), std::ios::trunc)
      << "garbage";
  auto t2 = prepare_code_tree(api, assignment_for(b, "att_2", 0), o, no_wait);
  ASSERT_EQ(t2.error, "");
  EXPECT_EQ(served, 3);
  EXPECT_EQ(read(t2.dir / "app" / "main.py"), "x = 1\n");
}

TEST(CodeTree, ARefusalOrGivingUpIsAnErrorTheRankReports) {
  TempDir dir;
  FakeControlPlane api;
  const auto b = make_bundle("y\n");
  CodeTreeOptions o;
  o.agent_workdir = dir.path();
  api.answer = [&](const testing::RecordedCall&) -> std::optional<ApiResult> {
    return classify(403, R"({"status":403,"detail":"worker w holds no live rank"})");
  };
  auto refused = prepare_code_tree(api, assignment_for(b, "att_1", 0), o, no_wait);
  EXPECT_NE(refused.error.find("holds no live rank"), std::string::npos) << refused.error;
  api.answer = [&](const testing::RecordedCall&) -> std::optional<ApiResult> {
    return classify(503, "{}");
  };
  int waits = 0;
  auto gave_up = prepare_code_tree(api, assignment_for(b, "att_1", 0), o,
                                   [&](std::chrono::milliseconds) { return ++waits < 3; });
  EXPECT_NE(gave_up.error.find("gave up"), std::string::npos) << gave_up.error;
  EXPECT_EQ(waits, 3);
  EXPECT_FALSE(fs::exists(dir.path() / "code" / "att_1" / "rank-0"));
}

// Issue 28.3: the same wrong bytes again and again are the stored bundle itself, not the way:
// after max_digest_mismatches downloads the rank fails, naming both digests.
TEST(CodeTree, ABundleThatNeverMatchesItsDigestFailsTheRank) {
  TempDir dir;
  FakeControlPlane api;
  const auto b = make_bundle("z\n");
  const auto wrong = make_bundle("tampered\n");
  int served = 0;
  api.answer = [&](const testing::RecordedCall&) -> std::optional<ApiResult> {
    ++served;
    return classify(200, wrong.bytes);
  };
  CodeTreeOptions o;
  o.agent_workdir = dir.path();
  int waits = 0;
  auto t = prepare_code_tree(api, assignment_for(b, "att_1", 0), o,
                             [&](std::chrono::milliseconds) { return ++waits < 100; });
  EXPECT_EQ(served, 3);
  EXPECT_EQ(waits, 2);
  EXPECT_EQ(t.error.rfind(kCodeBundleUnusable, 0), 0u) << t.error;
  EXPECT_NE(t.error.find("digest is " + wrong.digest + ", not " + b.digest), std::string::npos)
      << t.error;
  EXPECT_FALSE(fs::exists(dir.path() / "code" / "att_1" / "rank-0"));
  EXPECT_FALSE(fs::exists(dir.path() / "bundles" / (b.digest.substr(7) + ".tar.gz")));
}

// Retries of a server that stays away end at retry_deadline (time spent waiting), not never.
TEST(CodeTree, RetriesEndAtTheDeadline) {
  TempDir dir;
  FakeControlPlane api;
  const auto b = make_bundle("w\n");
  api.answer = [&](const testing::RecordedCall&) -> std::optional<ApiResult> {
    return classify(503, "{}");
  };
  CodeTreeOptions o;
  o.agent_workdir = dir.path();
  o.retry_deadline = std::chrono::seconds(20);
  std::chrono::milliseconds slept{0};
  auto t =
      prepare_code_tree(api, assignment_for(b, "att_1", 0), o, [&](std::chrono::milliseconds d) {
        slept += d;
        return true;
      });
  // 0.5 + 1 + 2 + 4 + 8 = 15.5 s waited; the next 10 s pause would pass 20 s.
  EXPECT_EQ(slept, std::chrono::milliseconds(15500));
  EXPECT_EQ(api.snapshot().size(), 6u);
  EXPECT_EQ(t.error.rfind(kCodeBundleUnusable, 0), 0u) << t.error;
  EXPECT_NE(t.error.find("gave up"), std::string::npos) << t.error;
}

TEST(CodeTree, OnlyTheMostRecentTreesAreKept) {
  TempDir dir;
  FakeControlPlane api;
  const auto b = make_bundle("z\n");
  api.answer = [&](const testing::RecordedCall&) -> std::optional<ApiResult> {
    return classify(200, b.bytes);
  };
  CodeTreeOptions o;
  o.agent_workdir = dir.path();
  o.keep_trees = 3;
  for (int i = 0; i < 6; ++i) {
    auto t = prepare_code_tree(api, assignment_for(b, "att_" + std::to_string(i), 0), o, no_wait);
    ASSERT_EQ(t.error, "");
    // Distinct modification times, oldest first.
    fs::last_write_time(dir.path() / "code" / ("att_" + std::to_string(i)),
                        fs::file_time_type::clock::now() - std::chrono::hours(10 - i));
  }
  int kept = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path() / "code")) ++kept;
  EXPECT_EQ(kept, 3);
  EXPECT_TRUE(fs::exists(dir.path() / "code" / "att_5"));
  EXPECT_FALSE(fs::exists(dir.path() / "code" / "att_0"));
}

TEST(AssignmentBundle, ParsesTheBundleAndAllowsARelativeWorkdirInsideIt) {
  const std::string digest = "sha256:" + std::string(64, 'b');
  nlohmann::json j = {{"attempt_id", "att_1"},
                      {"rank", 0},
                      {"command", {"python3", "main.py"}},
                      {"workdir", "app"},
                      {"code_bundle", {{"digest", digest}, {"size_bytes", 1234}}}};
  auto parsed = parse_assignment(j);
  ASSERT_TRUE(std::holds_alternative<Assignment>(parsed));
  const auto& a = std::get<Assignment>(parsed);
  EXPECT_EQ(a.invalid, "");
  EXPECT_EQ(a.code_bundle, digest);
  EXPECT_EQ(a.code_bundle_bytes, 1234);
  for (const auto& bad : {nlohmann::json{{"digest", "sha256:zz"}, {"size_bytes", 1}},
                          nlohmann::json{{"digest", digest}, {"size_bytes", 0}},
                          nlohmann::json("sha256:" + std::string(64, 'b'))}) {
    auto k = j;
    k["code_bundle"] = bad;
    EXPECT_NE(std::get<Assignment>(parse_assignment(k)).invalid, "") << bad.dump();
  }
  auto escaping = j;
  escaping["workdir"] = "../../etc";
  EXPECT_NE(std::get<Assignment>(parse_assignment(escaping)).invalid, "");
  auto no_bundle = j;
  no_bundle.erase("code_bundle");
  EXPECT_NE(std::get<Assignment>(parse_assignment(no_bundle)).invalid, "");
}

}  // namespace
}  // namespace podium::worker
