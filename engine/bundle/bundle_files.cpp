#include "engine/bundle/bundle_files.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "engine/bundle/ignore_rules.h"

namespace podium::bundle {

namespace fs = std::filesystem;

std::string bundle_digest(std::string_view bytes) {
  unsigned char out[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(out, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex = "sha256:";
  for (unsigned char c : out) {
    hex.push_back(kHex[c >> 4]);
    hex.push_back(kHex[c & 15]);
  }
  return hex;
}

bool valid_digest(std::string_view digest) {
  constexpr std::string_view kPrefix = "sha256:";
  if (digest.size() != kPrefix.size() + 64 || digest.substr(0, kPrefix.size()) != kPrefix)
    return false;
  return std::all_of(digest.begin() + kPrefix.size(), digest.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

namespace {

std::string read_whole(const fs::path& p, std::uint64_t max) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw BundleError("cannot read " + p.string() + ": " + std::strerror(errno));
  std::string out;
  std::array<char, 65536> buf;
  while (in.read(buf.data(), buf.size()) || in.gcount() > 0) {
    out.append(buf.data(), static_cast<size_t>(in.gcount()));
    if (out.size() > max)
      throw BundleError("the bundle's files add up to more than " + std::to_string(max) +
                        " bytes (at " + p.string() + ")");
  }
  if (in.bad()) throw BundleError("cannot read " + p.string());
  return out;
}

struct Packer {
  const fs::path& root;
  const BundleLimits& limits;
  const std::function<void(std::uint64_t)>& progress;
  BundleWriter writer;
  IgnoreRules rules;
  std::uint64_t excluded = 0;

  // DIR's path inside its git work tree ("" when DIR is the top or not in one): ignore rules
  // are kept relative to the work tree's top, as git reads them.
  std::string prefix;
  std::string in_repo(const std::string& rel) const {
    if (prefix.empty()) return rel;
    return rel.empty() ? prefix : prefix + "/" + rel;
  }

  void walk(const std::string& rel) {
    const fs::path dir = rel.empty() ? root : root / rel;
    if (auto gi = dir / ".gitignore"; fs::is_regular_file(gi))
      rules.add_file(in_repo(rel), read_whole(gi, 1 << 20));
    std::error_code ec;
    std::vector<std::string> names;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      names.push_back(it->path().filename().string());
    if (ec) throw BundleError("cannot list " + dir.string() + ": " + ec.message());
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      const std::string path = rel.empty() ? name : rel + "/" + name;
      const fs::path full = root / path;
      const auto st = fs::symlink_status(full, ec);
      if (ec) throw BundleError("cannot stat " + full.string() + ": " + ec.message());
      const bool is_dir = fs::is_directory(st);
      if (name == ".git" || rules.excluded(in_repo(path), is_dir)) {
        ++excluded;
        continue;
      }
      if (is_dir) {
        walk(path);
      } else if (fs::is_regular_file(st)) {
        const auto perms = st.permissions();
        const bool exec =
            (perms & (fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec)) !=
            fs::perms::none;
        writer.add_file(path, exec, read_whole(full, limits.max_uncompressed_bytes));
        if (progress) progress(writer.summary().entries);
      } else if (fs::is_symlink(st)) {
        const auto target = fs::read_symlink(full, ec);
        if (ec) throw BundleError("cannot read the link " + full.string() + ": " + ec.message());
        if (auto why = check_link_target(path, target.string()); !why.empty())
          throw BundleError("cannot pack " + why + " (list it in .podiumignore to leave it out)");
        writer.add_symlink(path, target.string());
      } else {
        ++excluded;  // sockets, FIFOs, devices: nothing a program's code is made of
      }
    }
  }
};

}  // namespace

PackedBundle pack_directory(const fs::path& root, const BundleLimits& limits,
                            const std::function<void(std::uint64_t)>& progress) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw BundleError(root.string() + " is not a directory");
  Packer p{root, limits, progress, BundleWriter(limits), {}, 0, {}};
  // Inside a git work tree, the .gitignore files above DIR apply too (from the top down).
  const fs::path abs = fs::weakly_canonical(fs::absolute(root, ec), ec);
  std::vector<fs::path> above;
  for (fs::path d = abs.parent_path(); !d.empty() && !fs::exists(abs / ".git", ec);
       d = d.parent_path()) {
    above.push_back(d);
    if (fs::exists(d / ".git", ec)) {
      p.prefix = fs::relative(abs, d, ec).generic_string();
      for (auto it = above.rbegin(); it != above.rend(); ++it) {
        if (auto gi = *it / ".gitignore"; fs::is_regular_file(gi, ec))
          p.rules.add_file(fs::relative(*it, d, ec).generic_string() == "."
                               ? ""
                               : fs::relative(*it, d, ec).generic_string(),
                           read_whole(gi, 1 << 20));
      }
      break;
    }
    if (d == d.parent_path()) break;
  }
  if (auto pi = root / ".podiumignore"; fs::is_regular_file(pi))
    p.rules.add_file(p.prefix, read_whole(pi, 1 << 20));
  p.walk("");
  if (p.writer.summary().entries == 0)
    throw BundleError("nothing to pack under " + root.string() + " (everything is excluded)");
  PackedBundle out;
  out.summary = p.writer.summary();
  out.bytes = p.writer.finish();
  out.digest = bundle_digest(out.bytes);
  out.excluded = p.excluded;
  return out;
}

BundleSummary unpack_bundle(std::string_view bytes, const fs::path& destination,
                            const BundleLimits& limits) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(destination, ec)))
    throw BundleError(destination.string() + " exists already");
  const fs::path staging = destination.parent_path() / (destination.filename().string() +
                                                        ".partial-" + std::to_string(::getpid()));
  fs::remove_all(staging, ec);
  fs::create_directories(staging, ec);
  if (ec) throw BundleError("cannot create " + staging.string() + ": " + ec.message());

  int fd = -1;
  std::string current;
  std::vector<std::pair<std::string, std::string>> links;
  auto close_current = [&] {
    if (fd >= 0 && ::close(fd) != 0) {
      fd = -1;
      throw BundleError("cannot write " + current + ": " + std::strerror(errno));
    }
    fd = -1;
  };
  try {
    auto summary = read_bundle(
        bytes, limits,
        [&](const BundleEntry& e) {
          close_current();
          const fs::path target = staging / e.path;
          fs::create_directories(target.parent_path(), ec);
          if (ec) throw BundleError("cannot create " + target.parent_path().string());
          if (e.kind == EntryKind::symlink) {
            links.emplace_back(e.path, e.link_target);
            return;
          }
          current = target.string();
          fd = ::open(current.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      e.executable ? 0755 : 0644);
          if (fd < 0) throw BundleError("cannot create " + current + ": " + std::strerror(errno));
        },
        [&](std::string_view data) {
          while (!data.empty()) {
            const auto n = ::write(fd, data.data(), data.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw BundleError("cannot write " + current + ": " + std::strerror(errno));
            data.remove_prefix(static_cast<size_t>(n));
          }
        });
    close_current();
    for (const auto& [path, target] : links) {
      const fs::path at = staging / path;
      fs::create_directories(at.parent_path(), ec);
      if (::symlink(target.c_str(), at.c_str()) != 0)
        throw BundleError("cannot create the link " + at.string() + ": " + std::strerror(errno));
    }
    fs::rename(staging, destination, ec);
    if (ec)
      throw BundleError("cannot move the tree to " + destination.string() + ": " + ec.message());
    return summary;
  } catch (...) {
    if (fd >= 0) ::close(fd);
    fs::remove_all(staging, ec);
    throw;
  }
}

}  // namespace podium::bundle
