#pragma once
// Code bundles on the filesystem: packing a directory (the `podium runs submit --code DIR` side)
// and unpacking into a fresh directory (the agent side, once per rank and attempt).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "engine/bundle/archive.h"

namespace podium::bundle {

// "sha256:<64 hex>" of the bytes: a bundle's name everywhere (run spec, API, agent cache).
std::string bundle_digest(std::string_view bytes);
// Whether `digest` has that form.
bool valid_digest(std::string_view digest);

struct PackedBundle {
  std::string bytes;   // the compressed archive
  std::string digest;  // bundle_digest(bytes)
  BundleSummary summary;
  std::uint64_t excluded = 0;  // files and directories left out by ignore rules, .git included
};

// Packs the regular files and relative in-tree symbolic links under `root` in a canonical order.
// Left out: ".git", whatever a ".gitignore" (in any directory of the tree, and, when the tree
// is inside a git work tree, in the directories above it up to the work tree's top) or the
// root's ".podiumignore" excludes, and sockets, FIFOs and devices. `progress` (may be empty) is
// called with the count of files packed so far. Throws BundleError (limits, a link leaving the
// tree, unreadable file).
PackedBundle pack_directory(const std::filesystem::path& root, const BundleLimits& limits,
                            const std::function<void(std::uint64_t files)>& progress = {});

// Unpacks into `destination`, which must not exist: the tree is built beside it and renamed
// into place, so a destination that exists is complete. Files are created exclusively and never
// through a symbolic link (links are made last). Throws BundleError; leaves nothing behind then.
BundleSummary unpack_bundle(std::string_view bytes, const std::filesystem::path& destination,
                            const BundleLimits& limits);

}  // namespace podium::bundle
