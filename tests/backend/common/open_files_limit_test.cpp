#include "backend/common/open_files_limit.h"

#include <sys/resource.h>

#include <gtest/gtest.h>

namespace podium {
namespace {

rlim_t current_soft() {
  rlimit lim{};
  EXPECT_EQ(::getrlimit(RLIMIT_NOFILE, &lim), 0);
  return lim.rlim_cur;
}

TEST(OpenFilesLimit, RaisesTheSoftLimitUpToTheHardLimitAndNeverLowersIt) {
  rlimit original{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &original), 0);
  if (original.rlim_max != RLIM_INFINITY && original.rlim_max <= 64)
    GTEST_SKIP() << "hard open-file limit too low to test";
  // Start from a low soft limit, as Debian's 1,024 is below what the server needs.
  rlimit low = original;
  low.rlim_cur = 64;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);

  auto r = raise_open_files_limit(128);
  EXPECT_EQ(r.soft_before, 64u);
  EXPECT_EQ(r.soft, 128u);
  EXPECT_EQ(current_soft(), 128u);

  r = raise_open_files_limit(100);  // below the current: unchanged
  EXPECT_EQ(r.soft, 128u);
  EXPECT_EQ(current_soft(), 128u);

  r = raise_open_files_limit(UINT64_MAX / 2);  // beyond the hard limit: the hard limit
  if (original.rlim_max != RLIM_INFINITY) {
    EXPECT_EQ(r.soft, original.rlim_max);
    EXPECT_EQ(current_soft(), original.rlim_max);
  }
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &original), 0);
}

}  // namespace
}  // namespace podium
