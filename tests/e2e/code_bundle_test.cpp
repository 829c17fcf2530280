// Issue 14 acceptance: `podium runs submit -f run.yaml --code DIR` packs DIR (without what
// .gitignore excludes), uploads it, and the run starts on two agents from the bundle: each rank
// runs in its own unpacked copy, in the spec's relative workdir inside it.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <regex>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class CodeBundles : public E2eTest {};

std::pair<int, std::string> run_shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_F(CodeBundles, ARunSubmittedWithCodeStartsOnTwoAgentsFromTheBundle) {
  const auto cluster = create_cluster("cpu-2", 1);
  start_workers(cluster, 1, 2);

  // The team's code: the program, a module beside it, and what git would not commit.
  const fs::path code = dir() / "code";
  fs::create_directories(code / "app" / "lib");
  std::ofstream(code / "app" / "main.py")
      << "import os, sys\n"
         "sys.path.insert(0, 'lib')\n"
         "import greeting\n"
         "print('bundle rank', os.environ['RANK'], 'cwd', os.getcwd(), flush=True)\n"
         "print('bundle greeting', greeting.TEXT, flush=True)\n"
         "print('bundle secret present', os.path.exists('secret.key'), flush=True)\n"
         "print('bundle code dir', os.environ['PODIUM_CODE_DIR'], flush=True)\n";
  std::ofstream(code / "app" / "lib" / "greeting.py") << "TEXT = 'hello from the bundle'\n";
  std::ofstream(code / "app" / "secret.key") << "not for the cluster\n";
  std::ofstream(code / ".gitignore") << "*.key\n__pycache__/\n";
  fs::create_directories(code / ".git");
  std::ofstream(code / ".git" / "HEAD") << "ref: refs/heads/main\n";

  const std::string name = unique_name("coded");
  const fs::path spec = dir() / "run.yaml";
  std::ofstream(spec) << "name: " << name << "\ncluster: " << cluster
                      << "\nworkload: command\ncommand: [\"/usr/bin/python3\", \"main.py\"]\n"
                         "workdir: app\nmax_restarts: 0\n";
  const std::string cli = "PODIUM_SERVER='" + podium().url() + "' PODIUM_TOKEN='" +
                          podium().server().admin_token() + "' '" + it::binary("podium").string() +
                          "'";
  auto [rc, out] =
      run_shell(cli + " runs submit -f '" + spec.string() + "' --code '" + code.string() + "'");
  ASSERT_EQ(rc, 0) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("(sha256:[0-9a-f]{64})"))) << out;
  const std::string digest = m[1].str();
  EXPECT_NE(out.find("code: 3 files from"), std::string::npos) << out;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("submitted run (run_[0-9a-f]+)"))) << out;
  const std::string id = m[1].str();

  json run;
  ASSERT_TRUE(wait_for_state(id, "succeeded", 120s, &run)) << diagnostics(id);
  EXPECT_EQ(run["spec"]["code_bundle"], digest);
  auto facts = podium().admin().get("/api/v1/bundles/" + digest);
  ASSERT_EQ(facts.status, 200) << facts;
  // .gitignore, app/main.py, app/lib/greeting.py; not secret.key, not .git
  EXPECT_EQ(facts.json["files"], 3) << facts;

  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u);
  const std::string attempt_id = att[0]["id"];
  // The attempt recorded its code (the bundle) and what both ranks' Python was.
  const json& env = att[0]["environment"];
  EXPECT_EQ(env["code_digest"], digest) << env.dump();
  EXPECT_EQ(env.value("ranks_reported", -1), 2) << env.dump();
  EXPECT_TRUE(env["python"].is_string()) << env.dump();
  EXPECT_EQ(run["environment"], env);
  for (int rank = 0; rank < 2; ++rank) {
    std::string joined;
    for (const auto& l : stored_logs(id, attempt_id, rank))
      joined += l["line"].get<std::string>() + "\n";
    SCOPED_TRACE(joined);
    EXPECT_NE(joined.find("bundle rank " + std::to_string(rank) + " cwd "), std::string::npos);
    EXPECT_NE(joined.find("/code/" + attempt_id + "/rank-" + std::to_string(rank) + "/app"),
              std::string::npos);
    EXPECT_NE(joined.find("bundle greeting hello from the bundle"), std::string::npos);
    EXPECT_NE(joined.find("bundle secret present False"), std::string::npos);
    EXPECT_NE(joined.find("bundle code dir /"), std::string::npos);
  }
  // Each agent holds the archive once, under its digest.
  int cached = 0;
  for (const auto& w : workers())
    if (fs::exists(w->options().workdir / "bundles" / (digest.substr(7) + ".tar.gz"))) ++cached;
  EXPECT_EQ(cached, 2);

  // The same tree again: the server has it, nothing is uploaded; the digest is the same.
  std::ofstream(spec) << "name: " << name << "-2\ncluster: " << cluster
                      << "\nworkload: command\ncommand: [\"/usr/bin/python3\", \"main.py\"]\n"
                         "workdir: app\nmax_restarts: 0\n";
  auto [rc2, out2] =
      run_shell(cli + " runs submit -f '" + spec.string() + "' --code '" + code.string() + "'");
  ASSERT_EQ(rc2, 0) << out2;
  EXPECT_NE(out2.find("the server has this bundle already"), std::string::npos) << out2;
  EXPECT_NE(out2.find(digest), std::string::npos) << out2;
  ASSERT_TRUE(std::regex_search(out2, m, std::regex("submitted run (run_[0-9a-f]+)"))) << out2;
  EXPECT_TRUE(wait_for_state(m[1].str(), "succeeded", 120s)) << diagnostics(m[1].str());
}

}  // namespace
}  // namespace podium::e2e
