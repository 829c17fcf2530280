#include "tests/integration/support/fake_kubectl.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/integration/support/env.h"

namespace podium::it {

namespace fs = std::filesystem;

FakeKubectl::FakeKubectl()
    : dir_(fs::temp_directory_path() /
           ("podium-fake-kubectl-" + std::to_string(getpid()) + "-" + unique_name("d"))) {
  fs::create_directories(dir_ / "bin");
  const fs::path script = dir_ / "bin" / "kubectl";
  // The server gives kubectl only PATH, HOME, LANG and KUBECONFIG: the directory is written in.
  std::ofstream(script) << "#!/bin/sh\nd='" << dir_.string() << "'\n"
                        << "for a in \"$@\"; do case \"$a\" in\n"
                           "  apply) cat > \"$d/applied\"; exit 0;;\n"
                           "  delete) exit 0;;\n"
                           "  pods) echo '{\"items\":[]}'; exit 0;;\n"
                           "  jobset) echo '{\"metadata\":{\"name\":\"x\"},\"spec\":{\"suspend\":"
                           "false},\"status\":{}}'; exit 0;;\n"
                           "esac; done\nexit 1\n";
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
}

FakeKubectl::~FakeKubectl() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string FakeKubectl::path_env() const {
  return (dir_ / "bin").string() + ":/usr/bin:/bin";
}

std::string FakeKubectl::applied() const {
  std::ifstream in(dir_ / "applied");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace podium::it
