#pragma once
// A stand-in `kubectl` for the Kubernetes executor's integration tests: a shell script in a
// directory of its own, put first on the server's PATH. apply records what it was given (stdin),
// delete succeeds, get answers a JobSet that runs and no pods; anything else exits 1.

#include <filesystem>
#include <string>

namespace podium::it {

class FakeKubectl {
 public:
  FakeKubectl();
  ~FakeKubectl();
  FakeKubectl(const FakeKubectl&) = delete;
  FakeKubectl& operator=(const FakeKubectl&) = delete;

  // PATH for the server: the script's directory, then the system's.
  std::string path_env() const;
  // What the last `kubectl apply` read from stdin ("" before any).
  std::string applied() const;

 private:
  std::filesystem::path dir_;
};

}  // namespace podium::it
