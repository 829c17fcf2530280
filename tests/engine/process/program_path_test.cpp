#include "engine/process/program_path.h"

#include <gtest/gtest.h>

namespace podium::process {
namespace {

TEST(ProcessProgramPath, SearchesTheChildsPath) {
  EXPECT_EQ(path_of({"A=1", "PATH=/x:/y"}, "/fallback"), "/x:/y");
  EXPECT_EQ(path_of({"A=1"}, "/fallback"), "/fallback");
  EXPECT_EQ(find_program("sh", "/no/such/dir:/bin"), "/bin/sh");
  // Not executable or not a regular file: skipped.
  EXPECT_EQ(find_program("passwd", "/etc:/nowhere"), "passwd");
  EXPECT_EQ(find_program("bin", "/"), "bin");
  EXPECT_EQ(find_program("./rel/tool", "/bin"), "./rel/tool");
  EXPECT_EQ(find_program("no-such-program-podium", "/bin:/usr/bin"), "no-such-program-podium");
}

}  // namespace
}  // namespace podium::process
