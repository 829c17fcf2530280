#include "backend/common/open_files_limit.h"

#include <sys/resource.h>

#include <algorithm>

namespace podium {

OpenFilesLimit raise_open_files_limit(std::uint64_t wanted) {
  OpenFilesLimit out;
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return out;
  out.soft_before = out.soft = lim.rlim_cur;
  out.hard = lim.rlim_max;
  const rlim_t target = lim.rlim_max == RLIM_INFINITY
                            ? static_cast<rlim_t>(wanted)
                            : std::min(static_cast<rlim_t>(wanted), lim.rlim_max);
  if (lim.rlim_cur != RLIM_INFINITY && target > lim.rlim_cur) {
    rlimit raised = lim;
    raised.rlim_cur = target;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) out.soft = target;
  }
  return out;
}

}  // namespace podium
