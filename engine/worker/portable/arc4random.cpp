// Only in the portable podium-worker (PODIUM_WORKER_PORTABLE). The static libstdc++ of Debian 12
// calls arc4random from std::random_device, and glibc has it only since 2.36: linked from
// libc, the agent would refuse to start on Ubuntu 22.04 (glibc 2.35, the TPU VM images). This
// definition comes first in the link, so the binary asks glibc for getrandom (2.25) instead (and
// glibc 2.31, which the portable build links against, has no arc4random at all).
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

extern "C" uint32_t arc4random() noexcept {
  uint32_t value = 0;
  auto* bytes = reinterpret_cast<unsigned char*>(&value);
  size_t got = 0;
  while (got < sizeof value) {
    const ssize_t n = ::getrandom(bytes + got, sizeof value - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      // arc4random cannot fail: without the kernel's generator there is no safe value to return.
      std::abort();
    }
  }
  return value;
}
