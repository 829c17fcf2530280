#include "backend/common/metrics.h"

#include <cstdio>

namespace podium::metrics {

const std::vector<double>& latency_buckets() {
  static const std::vector<double> b = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                        0.25,  0.5,    1,     2.5,  5,     10,   30};
  return b;
}

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

namespace {
std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}
std::vector<std::string> split3(const std::string& key) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= key.size(); ++i) {
    if (i == key.size() || key[i] == '|') {
      parts.push_back(key.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}
}  // namespace

void Registry::observe_request(const std::string& method, const std::string& route, int status,
                               double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[method + "|" + route + "|" + std::to_string(status)];
  auto& h = latency_[method + "|" + route];
  if (h.buckets.empty()) h.buckets.assign(latency_buckets().size(), 0);
  for (size_t i = 0; i < latency_buckets().size(); ++i)
    if (seconds <= latency_buckets()[i]) ++h.buckets[i];
  ++h.count;
  h.sum += seconds;
}

void Registry::count(const std::string& name, const std::string& help, double delta) {
  std::lock_guard lock(mu_);
  auto& c = counters_[name];
  c.first = help;
  c.second += delta;
}

void Registry::add_collector(std::function<void(std::string&)> fn) {
  std::lock_guard lock(mu_);
  collectors_.push_back(std::move(fn));
}

std::string Registry::render() const {
  std::string out;
  std::vector<std::function<void(std::string&)>> collectors;
  {
    std::lock_guard lock(mu_);
    out += "# HELP podium_http_requests_total HTTP requests by method, route and status.\n";
    out += "# TYPE podium_http_requests_total counter\n";
    for (const auto& [key, n] : requests_) {
      auto p = split3(key);
      out += "podium_http_requests_total{method=\"" + escape_label(p[0]) + "\",route=\"" +
             escape_label(p[1]) + "\",status=\"" + p[2] + "\"} " + std::to_string(n) + "\n";
    }
    out += "# HELP podium_http_request_duration_seconds Request latency by method and route.\n";
    out += "# TYPE podium_http_request_duration_seconds histogram\n";
    for (const auto& [key, h] : latency_) {
      auto p = split3(key);
      std::string labels =
          "method=\"" + escape_label(p[0]) + "\",route=\"" + escape_label(p[1]) + "\"";
      for (size_t i = 0; i < h.buckets.size(); ++i)
        out += "podium_http_request_duration_seconds_bucket{" + labels + ",le=\"" +
               fmt(latency_buckets()[i]) + "\"} " + std::to_string(h.buckets[i]) + "\n";
      out += "podium_http_request_duration_seconds_bucket{" + labels + ",le=\"+Inf\"} " +
             std::to_string(h.count) + "\n";
      out += "podium_http_request_duration_seconds_sum{" + labels + "} " + fmt(h.sum) + "\n";
      out += "podium_http_request_duration_seconds_count{" + labels + "} " +
             std::to_string(h.count) + "\n";
    }
    for (const auto& [name, c] : counters_) {
      out += "# HELP " + name + " " + c.first + "\n# TYPE " + name + " counter\n";
      out += name + " " + fmt(c.second) + "\n";
    }
    collectors = collectors_;
  }
  for (const auto& fn : collectors) fn(out);
  return out;
}

}  // namespace podium::metrics
