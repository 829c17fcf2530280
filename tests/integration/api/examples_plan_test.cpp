// `podium plan -f` passes every run spec in examples/, against a server that has the clusters the
// examples' headers tell users to create (the real CLI binary, the real server).
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

namespace fs = std::filesystem;

struct CliResult {
  int exit_code = -1;
  std::string output;
};

CliResult run_cli(const std::string& server, const std::string& token, const fs::path& file) {
  // The token goes by environment, as users pass it; popen's shell sees only the quoted paths.
  const std::string cmd = "PODIUM_SERVER='" + server + "' PODIUM_TOKEN='" + token + "' '" +
                          binary("podium").string() + "' plan -f '" + file.string() + "' 2>&1";
  CliResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class Examples : public PodiumTest {};

TEST_F(Examples, EveryExamplePlansWithoutErrors) {
  // What each example's header says to create.
  const std::map<std::string, std::pair<std::string, int>> clusters = {
      {"demo", {"cpu-2x2", 2}},
      {"v6e-8-vm", {"v6e-8", 1}},
      {"ironwood-64", {"tpu7x-64", 1}},
      {"v6e-16x2", {"v6e-16", 2}},
      {"a3mega", {"h100-mega-80gb-8", 2}}};
  for (const auto& [name, shape] : clusters)
    podium().create_cluster(name, shape.first, {{"num_slices", shape.second}});
  // examples/reference.yaml reads the demo dataset the quick start registers.
  podium().create_dataset(podium().admin(), "demo-text", {{"format", "text"}, {"tokens", 2097152}});

  int planned = 0;
  for (const auto& entry : fs::directory_iterator(repo_root() / "examples")) {
    if (entry.path().extension() != ".yaml") continue;
    ++planned;
    const CliResult r = run_cli(podium().url(), podium().server().admin_token(), entry.path());
    EXPECT_EQ(r.exit_code, 0) << entry.path().filename() << ":\n" << r.output;
    EXPECT_NE(r.output.find("Plan: OK"), std::string::npos) << entry.path().filename() << ":\n"
                                                            << r.output;
  }
  EXPECT_GE(planned, 5);
}

}  // namespace
}  // namespace podium::it
