#include "backend/common/static_files.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace podium::http {
namespace {

namespace fs = std::filesystem;

class StaticFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() /
            ("podium-static-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(base_ / "web" / "assets");
    write(base_ / "web" / "index.html", "<html>shell</html>");
    write(base_ / "web" / "assets" / "app-1a2b.js", "console.log(1)");
    write(base_ / "secret.txt", "top secret");
  }
  void TearDown() override { fs::remove_all(base_); }
  static void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  Request get(const std::string& path) {
    Request r;
    r.method = "GET";
    r.path = path;
    return r;
  }
  fs::path base_;
};

TEST_F(StaticFilesTest, ServesHashedAssetsWithLongCache) {
  StaticFiles files((base_ / "web").string());
  auto r = files.serve(get("/assets/app-1a2b.js"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "console.log(1)");
  EXPECT_EQ(r->header("Content-Type").value(), "text/javascript; charset=utf-8");
  EXPECT_NE(std::string(r->header("Cache-Control").value()).find("immutable"), std::string::npos);
}

TEST_F(StaticFilesTest, UnknownAppPathsFallBackToTheShell) {
  StaticFiles files((base_ / "web").string());
  auto r = files.serve(get("/runs/run_123"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "<html>shell</html>");
  EXPECT_EQ(r->header("Cache-Control").value(), "no-cache");
}

TEST_F(StaticFilesTest, MissingFilesWithExtensionAndApiPathsAreNotServed) {
  StaticFiles files((base_ / "web").string());
  EXPECT_FALSE(files.serve(get("/assets/missing.js")).has_value());
  EXPECT_FALSE(files.serve(get("/api/v1/nothing")).has_value());
}

TEST_F(StaticFilesTest, TraversalOutsideTheRootIsRefused) {
  StaticFiles files((base_ / "web").string());
  for (const std::string p :
       {"/../secret.txt", "/assets/../../secret.txt", "/../../../../etc/passwd"}) {
    auto r = files.serve(get(p));
    if (r) {
      EXPECT_EQ(r->body, "<html>shell</html>") << p;  // never the file outside the root
    }
  }
}

TEST_F(StaticFilesTest, DisabledWithoutRoot) {
  StaticFiles files((base_ / "nope").string());
  EXPECT_FALSE(files.enabled());
  EXPECT_FALSE(files.serve(get("/")).has_value());
}

TEST_F(StaticFilesTest, EveryDashboardResponseCarriesAStrictContentSecurityPolicy) {
  StaticFiles files((base_ / "web").string());
  for (const char* path : {"/", "/runs/run_1", "/assets/app-1a2b.js"}) {
    auto r = files.serve(get(path));
    ASSERT_TRUE(r.has_value()) << path;
    const std::string csp(r->header("Content-Security-Policy").value_or(""));
    EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << path;
    EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << path;
    EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << path;
    EXPECT_EQ(csp.find("http"), std::string::npos) << "no external origin: " << path;
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << path;
    EXPECT_EQ(r->header("X-Content-Type-Options").value_or(""), "nosniff");
  }
}

}  // namespace
}  // namespace podium::http
