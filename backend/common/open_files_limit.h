#pragma once
// The process's open-file limit, raised toward what the server's connection limit needs.
// Debian's default soft limit is 1,024 files while the hard limit is far higher: a server with
// limits.max_connections = 4,096 (a pod of 1,000 agents keeps 2-3 keep-alive connections each)
// would fail accept() with EMFILE long before its own limit answered 503.

#include <cstdint>

namespace podium {

struct OpenFilesLimit {
  std::uint64_t soft_before = 0;
  std::uint64_t soft = 0;  // after raising
  std::uint64_t hard = 0;
};

// Raises the soft limit to min(wanted, hard); never lowers it.
OpenFilesLimit raise_open_files_limit(std::uint64_t wanted);

}  // namespace podium
