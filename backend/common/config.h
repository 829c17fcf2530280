#pragma once
// Server configuration: defaults < YAML file (--config) < PODIUM_* environment < flags.
// Every key is declared once in config_keys() with its default and meaning; the example file
// deploy/podium.example.yaml documents the same keys (a unit test keeps them in step).

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace podium {

struct ServerConfig {
  std::string listen_host = "127.0.0.1";
  int listen_port = 8080;
  std::string database_url;  // empty: embedded PostgreSQL in data_dir
  std::string data_dir = "./var";
  std::string admin_token;
  std::string web_root;  // empty: the dashboard the build produced, if any
  std::string log_level = "info";
  std::string log_format = "json";

  size_t max_body_bytes = 8 * 1024 * 1024;
  // Code bundles (PUT /api/v1/bundles/{digest}) have their own, larger body limit.
  size_t max_bundle_bytes = 128 * 1024 * 1024;
  size_t max_header_bytes = 16 * 1024;
  std::chrono::seconds read_timeout{10};
  std::chrono::seconds idle_timeout{60};
  std::chrono::seconds write_timeout{30};
  int max_connections = 4096;
  // Both scaled to the machine unless set (0 in the file: see sized_handler_threads).
  int handler_threads = 0;
  int handler_queue = 1024;  // beyond: 503 + Retry-After (parked long-polls do not count)
  std::chrono::seconds shutdown_grace{10};

  int db_pool_size = 0;
  std::chrono::milliseconds db_acquire_timeout{2000};
  std::chrono::milliseconds db_connect_timeout{2000};
  std::chrono::milliseconds db_statement_timeout{15000};

  std::chrono::seconds heartbeat_deadline{15};
  std::chrono::seconds heartbeat_interval{3};
  std::chrono::seconds cancel_grace{10};
  int coordinator_port_first = 8476;
  int coordinator_port_count = 500;
  // Stall detection (backend/sched/stall_bound.h): the least silence that counts (a run's
  // stall_seconds overrides it), k of k x steady step time, the compile allowance of an attempt
  // with no history, and the stall of a run that ends it as failed.
  std::chrono::seconds stall_seconds{300};
  int stall_step_factor = 10;
  std::chrono::seconds stall_compile_seconds{1800};
  int stall_limit = 3;

  std::string workloads_python = "/usr/bin/python3";
  std::string workloads_reference_dir;  // empty: the source tree's engine/workloads/reference
  std::string workloads_output_dir;     // empty: <data_dir>/outputs
  std::chrono::hours session_ttl{168};
  // How long a verified token or session may answer from memory (0: every request reads the
  // database). Changes reach every replica by NOTIFY; this bounds what that could miss.
  std::chrono::seconds credential_cache_ttl{10};

  std::string tls_cert_file;  // with tls_key_file: HTTPS
  std::string tls_key_file;
  std::string public_url;              // empty: http(s)://<listen_host>:<listen_port>
  std::string executors_worker_path;   // empty: podium-worker beside podium-server
  std::string executors_worker_image;  // empty: podium-worker is in the training image

  // Log lines of runs finished longer ago than this are deleted in batches (0: kept forever).
  int log_retention_days = 0;
  int log_retention_batch_rows = 10000;
  std::chrono::seconds log_retention_interval{3600};

  // How often summaries of newly settled runs are computed and stored (run_summary_store.h).
  std::chrono::seconds summary_precompute_interval{10};
  // Plan against actual: steady TFLOP/s/device below this fraction of the planner's expectation
  // is underperforming (engine/core/plan/plan_vs_actual.h; 0: off).
  double underperforming_ratio = 0.1;

  // Webhook notifications (backend/notify). Hosts (names or IP addresses) that may be called over
  // plain http and at loopback, private or link-local addresses; every other target must be
  // https at a public address.
  std::vector<std::string> webhooks_allow_hosts;
  std::chrono::milliseconds webhooks_poll_interval{1000};
  int webhooks_delivery_threads = 2;
  std::chrono::milliseconds webhooks_retry_first_delay{10000};
  std::chrono::seconds webhooks_retry_max_delay{3600};
  std::chrono::hours webhooks_give_up_after{24};
  std::chrono::milliseconds webhooks_connect_timeout{5000};
  std::chrono::milliseconds webhooks_timeout{10000};
  size_t webhooks_max_response_bytes = 64 * 1024;
  std::string webhooks_ca_file;  // empty: the system's trust store
};

struct ConfigKey {
  std::string key;   // dotted YAML path, e.g. "limits.max_body_bytes"
  std::string env;   // PODIUM_LIMITS_MAX_BODY_BYTES
  std::string flag;  // --max-body-bytes ("" when only --set key=value)
  std::string default_value;
  std::string description;
};
const std::vector<ConfigKey>& config_keys();

struct ConfigError {
  std::string message;  // one line naming the key, e.g. "limits.max_body_bytes: expected a positive
                        // integer, got 'x'"
};

struct ConfigSources {
  std::optional<std::string> yaml_text;            // contents of --config FILE
  std::string yaml_name = "config";                // for messages
  std::map<std::string, std::string> environment;  // PODIUM_* variables
  std::vector<std::string> args;                   // command-line flags (argv[1..])
  unsigned cores = 0;  // the machine's, for sizes scaled to it (0: std::thread's count)
};

struct ConfigLoad {
  ServerConfig config;
  std::optional<ConfigError> error;
  bool show_help = false;
  std::optional<std::string> config_file;  // --config value, for the caller to read
};

// limits.handler_threads when it is 0 (the default): kHandlerThreadsPerCore per core, from
// kHandlerThreadsMin to kHandlerThreadsMax. More threads only queue on the CPU instead of in the
// FIFO handler queue, wake one another and lengthen the tail (docs/benchmarks.md, api_get_run on
// 2 cores, 64 connections: p99 185-752 ms with 32 threads, 56-194 ms with 8, 23-28 ms with 4;
// with the batched reads, 12.5-14.6 k/s at 4 against 17.6-20.9 k/s at 2, and ingest_metrics
// 0.74 of COPY at 4 against 0.92 at 2: the server and PostgreSQL share the cores, and a thread a
// core leaves PostgreSQL's backends theirs). Slow requests do not starve liveness: heartbeats
// and /healthz have their own lane.
inline constexpr int kHandlerThreadsPerCore = 1;
inline constexpr int kHandlerThreadsMin = 2;
inline constexpr int kHandlerThreadsMax = 64;
int sized_handler_threads(unsigned cores);
// database.pool_size when it is 0 (the default): one connection per handler thread, so that a
// handler never waits for a connection behind another handler, plus kPoolExtraConnections: the
// liveness lane's two threads (http::ServerOptions::priority_threads; connections reserved for
// them) and two for the server's own background work (scheduler, summaries, retention).
inline constexpr int kPoolExtraConnections = 4;
int sized_pool(int handler_threads);

// Two passes in practice: the caller scans args for --config, reads the file, then loads.
std::optional<std::string> find_config_flag(const std::vector<std::string>& args);
ConfigLoad load_config(const ConfigSources& sources);
std::string config_help();

}  // namespace podium
