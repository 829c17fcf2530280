#pragma once
// The module's one way to close a descriptor it owns: closed once, then marked closed (-1), so a
// later cleanup path cannot close a number the process has since reused.

#include <unistd.h>

namespace podium::process::detail {

inline void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace podium::process::detail
