// The HTTP layer reads a route's body limit from the route table as the request's head arrives:
// a route that declares a large body (code bundle uploads) takes one past the server's limit,
// every other request keeps that limit, and the 413 names the limit that applied.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "backend/http/server.h"
#include "engine/client/http_client.h"

namespace podium::http {
namespace {

using namespace std::chrono_literals;

constexpr size_t kServerLimit = 1024;
constexpr size_t kUploadLimit = 64 * 1024;

struct RouteTraitsTest : ::testing::Test {
  Router routes;
  std::unique_ptr<HttpServer> server;

  void SetUp() override {
    // The server calls no handler of the table (the request handler below answers): it reads
    // the traits only.
    routes.add("PUT", "/upload/{name}", Access::open, {}, large_body(kUploadLimit, 30s));
    routes.add("PUT", "/small/{name}", Access::open, {});
    ServerOptions o;
    o.port = 0;
    o.max_body_bytes = kServerLimit;
    o.routes = &routes;
    server = std::make_unique<HttpServer>(
        o, [](Request& r) { return Response::text(200, std::to_string(r.body.size())); });
    server->start();
  }
  void TearDown() override { server->stop(2s); }

  client::HttpClient::Result put(const std::string& path, size_t bytes) const {
    client::HttpClient c("http://127.0.0.1:" + std::to_string(server->port()));
    return c.request("PUT", path, std::string(bytes, 'x'));
  }
};

int status_of(const client::HttpClient::Result& r) {
  return r.response ? r.response->status : 0;
}

TEST_F(RouteTraitsTest, ARouteThatDeclaresALargeBodyTakesOnePastTheServerLimit) {
  const auto r = put("/upload/a", 10 * kServerLimit);
  ASSERT_EQ(status_of(r), 200);
  EXPECT_EQ(r.response->body, std::to_string(10 * kServerLimit));
}

TEST_F(RouteTraitsTest, EveryOtherRequestKeepsTheServerLimit) {
  EXPECT_EQ(status_of(put("/small/a", kServerLimit)), 200);
  const auto r = put("/small/a", kServerLimit + 1);
  ASSERT_EQ(status_of(r), 413);
  EXPECT_NE(r.response->body.find("limit of " + std::to_string(kServerLimit) + " bytes"),
            std::string::npos)
      << r.response->body;
  // A path outside the table, and another method on the upload's path, keep it too.
  EXPECT_EQ(status_of(put("/elsewhere", kServerLimit + 1)), 413);
  client::HttpClient c("http://127.0.0.1:" + std::to_string(server->port()));
  EXPECT_EQ(status_of(c.post("/upload/a", std::string(kServerLimit + 1, 'x'))), 413);
}

TEST_F(RouteTraitsTest, ALargeBodyPastItsRoutesOwnLimitIs413NamingThatLimit) {
  const auto r = put("/upload/a", kUploadLimit + 1);
  ASSERT_EQ(status_of(r), 413);
  EXPECT_NE(r.response->body.find("limit of " + std::to_string(kUploadLimit) + " bytes"),
            std::string::npos)
      << r.response->body;
}

}  // namespace
}  // namespace podium::http
