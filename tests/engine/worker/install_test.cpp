// podium-worker install into a scratch root (--root, --no-enable: nothing on this machine is
// touched or enabled): the unit passes `systemd-analyze verify` against that root, the token is
// only in the root-only environment file, and the arguments are checked.
#include "engine/worker/install.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

namespace podium::worker {
namespace {

namespace fs = std::filesystem;

const char* const kToken = "pdw_0123456789abcdefTOKEN";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A command's exit status and everything it printed (stdout and stderr).
std::pair<int, std::string> capture(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return {-1, ""};
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class ScratchRoot {
 public:
  ScratchRoot()
      : dir_(fs::temp_directory_path() /
             ("podium-install-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++))) {
    fs::create_directories(dir_);
  }
  ~ScratchRoot() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& path() const { return dir_; }
  // What systemd-analyze needs of a root besides our unit: the system's own units (targets).
  void add_system_units() const {
    fs::create_directories(dir_ / "usr/lib/systemd");
    fs::copy("/usr/lib/systemd/system", dir_ / "usr/lib/systemd/system",
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  fs::path dir_;
};

ParsedInstall parse(const std::vector<std::string>& args,
                    std::map<std::string, std::string> env = {},
                    std::map<std::string, std::string> files = {}) {
  return parse_install_flags(
      args,
      [env](const std::string& k) -> std::optional<std::string> {
        auto it = env.find(k);
        return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
      },
      [files](const std::string& k) -> std::optional<std::string> {
        auto it = files.find(k);
        return it == files.end() ? std::nullopt : std::optional<std::string>(it->second);
      });
}

std::vector<std::string> good_args(const std::string& root) {
  return {"--server",     "https://podium.example.com:8443",
          "--cluster",    "v6e-train",
          "--slice",      "1",
          "--host",       "3",
          "--run-as",     "podium-train",
          "--token-file", "/tmp/token",
          "--root",       root,
          "--no-enable"};
}

TEST(WorkerInstall, WritesAUnitSystemdAnalyzeAccepts) {
  if (::access("/usr/bin/systemd-analyze", X_OK) != 0)
    GTEST_SKIP() << "systemd-analyze is not installed (scripts/setup.sh installs systemd)";
  ScratchRoot root;
  root.add_system_units();
  const auto parsed =
      parse(good_args(root.path()), {}, {{"/tmp/token", std::string(kToken) + "\n"}});
  ASSERT_TRUE(parsed.options) << parsed.error;
  auto options = *parsed.options;
  options.binary = "/bin/true";  // a small executable; the default is this test binary
  std::vector<std::vector<std::string>> ran;
  const std::string error = install_worker(options, [&](const auto& argv) {
    ran.push_back(argv);
    return 0;
  });
  ASSERT_EQ(error, "");
  EXPECT_TRUE(ran.empty());  // --no-enable: no systemctl at all

  const fs::path unit = root.path() / "etc/systemd/system/podium-worker.service";
  const auto [status, output] = capture("systemd-analyze verify --root=" + root.path().string() +
                                        " /etc/systemd/system/podium-worker.service");
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output, "") << "systemd-analyze warned:\n" << output;

  // The binary the unit starts is there and executable.
  EXPECT_EQ(::access((root.path() / "usr/local/bin/podium-worker").c_str(), X_OK), 0);
  // The token only in the environment file, which only root reads.
  const fs::path env = root.path() / "etc/podium/worker.env";
  struct stat st {};
  ASSERT_EQ(::stat(env.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(env.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  const std::string env_text = slurp(env);
  EXPECT_NE(env_text.find(std::string("PODIUM_TOKEN=") + kToken + "\n"), std::string::npos);
  EXPECT_NE(env_text.find("PODIUM_WORKER_ARGS=\"--cluster v6e-train --slice 1 --host 3\"\n"),
            std::string::npos)
      << env_text;
  EXPECT_NE(env_text.find("PODIUM_SERVER=\"https://podium.example.com:8443\"\n"),
            std::string::npos);
  EXPECT_NE(env_text.find("PODIUM_RUN_AS=podium-train\n"), std::string::npos);
  const std::string unit_text = slurp(unit);
  EXPECT_EQ(unit_text.find(kToken), std::string::npos);
  EXPECT_NE(unit_text.find("EnvironmentFile=/etc/podium/worker.env\n"), std::string::npos);
  ASSERT_EQ(::stat(unit.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);

  // The check can fail: a unit systemd would not run as written is reported.
  std::ofstream(unit) << unit_text.substr(0, unit_text.find("ExecStart=")) << "[Install]\n";
  const auto broken = capture("systemd-analyze verify --root=" + root.path().string() +
                              " /etc/systemd/system/podium-worker.service");
  EXPECT_TRUE(broken.first != 0 || !broken.second.empty()) << broken.second;

  // Installing again (new token) replaces the files in place.
  auto again = parse(good_args(root.path()), {}, {{"/tmp/token", "pdw_second"}});
  ASSERT_TRUE(again.options);
  again.options->binary = "/bin/true";
  ASSERT_EQ(install_worker(*again.options, [](const auto&) { return 0; }), "");
  EXPECT_NE(slurp(env).find("PODIUM_TOKEN=pdw_second\n"), std::string::npos);
  EXPECT_EQ(slurp(unit), worker_unit_text());
}

TEST(WorkerInstall, EnablingUnderARootOnlyLinksTheUnitThere) {
  ScratchRoot root;
  auto args = good_args(root.path());
  args.pop_back();  // enable
  auto parsed = parse(args, {}, {{"/tmp/token", kToken}});
  ASSERT_TRUE(parsed.options) << parsed.error;
  EXPECT_EQ(enable_commands(*parsed.options),
            (std::vector<std::vector<std::string>>{{"systemctl", "--root=" + root.path().string(),
                                                    "enable", "podium-worker.service"}}));
  // On the real root: reload, enable, start.
  parsed.options->root = "/";
  EXPECT_EQ(enable_commands(*parsed.options),
            (std::vector<std::vector<std::string>>{
                {"systemctl", "daemon-reload"},
                {"systemctl", "enable", "--now", "podium-worker.service"}}));
  parsed.options->enable = false;
  EXPECT_TRUE(enable_commands(*parsed.options).empty());
  // A failing systemctl is reported (the runner stands in for it: nothing runs here).
  parsed.options->enable = true;
  parsed.options->root = root.path().string();
  parsed.options->binary = "/bin/true";
  const std::string error = install_worker(*parsed.options, [](const auto&) { return 1; });
  EXPECT_NE(error.find("systemctl --root="), std::string::npos) << error;
}

TEST(WorkerInstall, ArgumentsAreChecked) {
  const std::string root = "/tmp";
  auto error_of = [&](std::vector<std::string> args, std::map<std::string, std::string> env = {},
                      std::map<std::string, std::string> files = {{"/tmp/token", kToken}}) {
    return parse(args, env, files).error;
  };
  EXPECT_EQ(error_of(good_args(root)), "");
  // Never the token on a command line.
  auto with_flag = good_args(root);
  with_flag.push_back("--token=pdw_x");
  EXPECT_NE(error_of(with_flag).find("command line"), std::string::npos);
  // The token from the environment when no file is named; none at all is an error.
  auto no_file = good_args(root);
  no_file.erase(no_file.begin() + 10, no_file.begin() + 12);
  EXPECT_EQ(error_of(no_file, {{"PODIUM_TOKEN", kToken}}), "");
  EXPECT_NE(error_of(no_file).find("no token"), std::string::npos);
  EXPECT_NE(error_of(good_args(root), {}, {}).find("cannot read the token"), std::string::npos);
  // A token or a name that could break out of the environment file.
  EXPECT_NE(error_of(good_args(root), {}, {{"/tmp/token", "pdw_x\nPODIUM_RUN_AS=root"}}), "");
  auto cluster = good_args(root);
  cluster[3] = "a b";
  EXPECT_NE(error_of(cluster), "");
  auto server = good_args(root);
  server[1] = "https://x\"y";
  EXPECT_NE(error_of(server), "");
  auto slice = good_args(root);
  slice[5] = "-1";
  EXPECT_NE(error_of(slice), "");
  auto run_as = good_args(root);
  run_as.erase(run_as.begin() + 8, run_as.begin() + 10);
  EXPECT_NE(error_of(run_as).find("--run-as"), std::string::npos);
  EXPECT_EQ(error_of(run_as, {{"PODIUM_RUN_AS", "trainer"}}), "");
  auto relative = good_args(root);
  relative[13] = "relative/dir";
  EXPECT_NE(error_of(relative).find("--root"), std::string::npos);
  EXPECT_NE(error_of({"--bogus"}).find("unknown"), std::string::npos);
}

}  // namespace
}  // namespace podium::worker
