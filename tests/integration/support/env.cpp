#include "tests/integration/support/env.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <random>
#include <stdexcept>

namespace podium::it {

namespace fs = std::filesystem;

namespace {
std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}
}  // namespace

std::optional<std::string> test_database_url() {
  return env("PODIUM_TEST_DATABASE_URL");
}

fs::path bin_dir() {
  if (auto d = env("PODIUM_BIN_DIR")) return *d;
  // Run by hand from <build>/bin: the binaries sit next to the test executable.
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(".") : self.parent_path();
}

fs::path binary(const std::string& name) {
  return bin_dir() / name;
}

fs::path repo_root() {
  if (auto r = env("PODIUM_ROOT")) return *r;
  // The build names it: __FILE__ is relative under ccache's base directory.
  return PODIUM_SOURCE_DIR;
}

fs::path postgres_bin_dir() {
  return env("PODIUM_PG_BIN_DIR").value_or("/usr/lib/postgresql/15/bin");
}

bool have_postgres_binaries() {
  std::error_code ec;
  return fs::exists(postgres_bin_dir() / "pg_ctl", ec) &&
         fs::exists(postgres_bin_dir() / "postgres", ec);
}

std::string random_hex() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^
                                          (static_cast<uint64_t>(::getpid()) << 32)};
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

std::string unique_name(const std::string& prefix) {
  return prefix + "-" + random_hex().substr(0, 8);
}

TempDir::TempDir(const std::string& prefix) {
  std::string templ = "/tmp/" + prefix + "-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp " + templ + " failed");
  ::chmod(templ.c_str(), 0755);
  path_ = templ;
}

TempDir::~TempDir() {
  if (keep_) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string file_tail(const fs::path& file, int lines) {
  std::ifstream in(file);
  if (!in) return "";
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    last.push_back(std::move(line));
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += l + "\n";
  return out;
}

int run_shell(const std::string& command_line, std::string* out) {
  FILE* p = ::popen(command_line.c_str(), "r");
  if (p == nullptr) return -1;
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) text += buf;
  const int rc = ::pclose(p);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (out != nullptr) *out = std::move(text);
  if (rc == -1) return -1;
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + (WIFSIGNALED(rc) ? WTERMSIG(rc) : 0);
}

}  // namespace podium::it
