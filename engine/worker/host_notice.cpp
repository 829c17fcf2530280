#include "engine/worker/host_notice.h"

#include <algorithm>
#include <cctype>

#include "engine/client/http_client.h"

namespace podium::worker {

namespace {

std::string trimmed_upper(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  s.erase(0, start);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

class GceMetadataSource final : public MetadataSource {
 public:
  explicit GceMetadataSource(std::string url) : url_(std::move(url)), client_(url_) {}

  std::optional<MetadataReading> read() override {
    MetadataReading out;
    bool reached = false;
    out.preempted = get("/preempted", reached);
    out.maintenance_event = get("/maintenance-event", reached);
    if (!reached) return std::nullopt;
    return out;
  }
  const std::string& url() const override { return url_; }

 private:
  std::optional<std::string> get(const std::string& key, bool& reached) const {
    client::RequestOptions o;
    o.timeout = std::chrono::milliseconds(2000);
    o.max_response_bytes = 4096;
    o.headers = {{"Metadata-Flavor", "Google"}};
    auto r = client_.get(key, o);
    if (!r.ok()) return std::nullopt;
    reached = true;
    if (r.response->status != 200) return std::nullopt;
    return r.response->body;
  }

  std::string url_;
  client::HttpClient client_;
};

}  // namespace

std::optional<std::string> notice_of(const MetadataReading& reading) {
  if (reading.preempted && trimmed_upper(*reading.preempted) == "TRUE") return "preempted";
  if (reading.maintenance_event) {
    const std::string event = trimmed_upper(*reading.maintenance_event);
    if (event.rfind("TERMINATE", 0) == 0) return "TERMINATE_ON_HOST_MAINTENANCE";
  }
  return std::nullopt;
}

std::shared_ptr<MetadataSource> make_gce_metadata_source(const std::string& instance_url) {
  std::string url = instance_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  return std::make_shared<GceMetadataSource>(url);
}

}  // namespace podium::worker
