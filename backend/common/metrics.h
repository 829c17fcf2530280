#pragma once
// A small Prometheus registry: request counters and latency histograms per route and status,
// plus gauges filled at scrape time (pool state, build info). Thread-safe.

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace podium::metrics {

class Registry {
 public:
  void observe_request(const std::string& method, const std::string& route, int status,
                       double seconds);
  void count(const std::string& name, const std::string& help, double delta = 1.0);
  // Gauges computed on demand: fn appends "name{labels} value" lines (with HELP/TYPE it writes).
  void add_collector(std::function<void(std::string&)> fn);
  std::string render() const;

 private:
  struct Histogram {
    std::vector<uint64_t> buckets;
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> requests_;                        // key: method|route|status
  std::map<std::string, Histogram> latency_;                        // key: method|route
  std::map<std::string, std::pair<std::string, double>> counters_;  // name -> (help, value)
  std::vector<std::function<void(std::string&)>> collectors_;
};

const std::vector<double>& latency_buckets();
std::string escape_label(const std::string& v);

}  // namespace podium::metrics
