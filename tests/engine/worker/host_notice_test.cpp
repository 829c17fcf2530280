// Preemption notices as the metadata server states them, and the real metadata client against
// an HTTP server that answers as Compute Engine's does (only with Metadata-Flavor: Google).
#include "engine/worker/host_notice.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "backend/http/server.h"

namespace podium::worker {
namespace {

using namespace std::chrono_literals;

TEST(HostNoticeTest, PreemptedAndTerminatingMaintenanceAreNotices) {
  EXPECT_EQ(notice_of({"TRUE", "NONE"}), "preempted");
  EXPECT_EQ(notice_of({"TRUE\n", std::nullopt}), "preempted");
  EXPECT_EQ(notice_of({"FALSE", "TERMINATE_ON_HOST_MAINTENANCE"}), "TERMINATE_ON_HOST_MAINTENANCE");
  EXPECT_EQ(notice_of({std::nullopt, "TERMINATE_ON_HOST_MAINTENANCE"}),
            "TERMINATE_ON_HOST_MAINTENANCE");
}

TEST(HostNoticeTest, LiveMigrationAndQuietAnswersAreNoNotice) {
  EXPECT_EQ(notice_of({"FALSE", "NONE"}), std::nullopt);
  // A live migration keeps the VM and its processes: no reason to stop the gang.
  EXPECT_EQ(notice_of({"FALSE", "MIGRATE_ON_HOST_MAINTENANCE"}), std::nullopt);
  EXPECT_EQ(notice_of({std::nullopt, std::nullopt}), std::nullopt);
  EXPECT_EQ(notice_of({"", ""}), std::nullopt);
  EXPECT_EQ(notice_of({"TRUE-ISH", "NONE"}), std::nullopt);
}

class FakeMetadataServer {
 public:
  FakeMetadataServer() : server_(options(), [this](http::Request& r) { return handle(r); }) {
    server_.start();
  }
  ~FakeMetadataServer() { server_.stop(1000ms); }
  std::string instance_url() const {
    return "http://127.0.0.1:" + std::to_string(server_.port()) + "/computeMetadata/v1/instance";
  }
  void set(std::string preempted, std::string event) {
    std::lock_guard lock(mu_);
    preempted_ = std::move(preempted);
    event_ = std::move(event);
  }
  int refused_without_header() const { return refused_; }

 private:
  static http::ServerOptions options() {
    http::ServerOptions o;
    o.port = 0;
    o.handler_threads = 2;
    return o;
  }
  http::Response handle(http::Request& r) {
    if (r.header("metadata-flavor") != std::optional<std::string_view>("Google")) {
      ++refused_;
      return http::Response::text(403, "Missing Metadata-Flavor:Google header.");
    }
    std::lock_guard lock(mu_);
    if (r.path == "/computeMetadata/v1/instance/preempted")
      return http::Response::text(200, preempted_);
    if (r.path == "/computeMetadata/v1/instance/maintenance-event")
      return http::Response::text(200, event_);
    return http::Response::text(404, "not found");
  }
  std::mutex mu_;
  std::string preempted_ = "FALSE";
  std::string event_ = "NONE";
  std::atomic<int> refused_{0};
  http::HttpServer server_;
};

TEST(HostNoticeTest, TheMetadataClientReadsBothKeysWithTheFlavorHeader) {
  FakeMetadataServer server;
  auto source = make_gce_metadata_source(server.instance_url() + "/");
  auto reading = source->read();
  ASSERT_TRUE(reading.has_value());
  EXPECT_EQ(reading->preempted, "FALSE");
  EXPECT_EQ(reading->maintenance_event, "NONE");
  EXPECT_EQ(notice_of(*reading), std::nullopt);

  server.set("TRUE", "NONE");
  reading = source->read();
  ASSERT_TRUE(reading.has_value());
  EXPECT_EQ(notice_of(*reading), "preempted");
  EXPECT_EQ(server.refused_without_header(), 0);
}

TEST(HostNoticeTest, AnUnreachableMetadataServerIsNoReadingAndDoesNotHang) {
  // A port nothing listens on (the fake server's, after it stopped).
  std::string url;
  {
    FakeMetadataServer gone;
    url = gone.instance_url();
  }
  auto source = make_gce_metadata_source(url);
  EXPECT_FALSE(source->read().has_value());
  EXPECT_EQ(source->url(), url);
}

}  // namespace
}  // namespace podium::worker
