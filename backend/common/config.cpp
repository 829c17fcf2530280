#include "backend/common/config.h"

#include "backend/common/config_flags.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <set>
#include <thread>

namespace podium {

int sized_handler_threads(unsigned cores) {
  const long long scaled = static_cast<long long>(std::max(1u, cores)) * kHandlerThreadsPerCore;
  return static_cast<int>(std::clamp<long long>(scaled, kHandlerThreadsMin, kHandlerThreadsMax));
}

int sized_pool(int handler_threads) {
  return std::min(1000, handler_threads + kPoolExtraConnections);
}

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = {
      {"listen", "PODIUM_LISTEN", "--listen", "127.0.0.1:8080", "host:port the server binds"},
      {"database_url", "PODIUM_DATABASE_URL", "--database-url", "",
       "libpq connection string; empty runs an embedded PostgreSQL in data_dir"},
      {"data_dir", "PODIUM_DATA_DIR", "--data-dir", "./var",
       "state directory (embedded database, spool)"},
      {"admin_token", "PODIUM_ADMIN_TOKEN", "--admin-token", "",
       "API token of the admin user created on first start; empty generates and prints one"},
      {"web_root", "PODIUM_WEB_ROOT", "--web-root", "", "directory of the built dashboard"},
      {"log.level", "PODIUM_LOG_LEVEL", "--log-level", "info", "trace, debug, info, warn, error"},
      {"log.format", "PODIUM_LOG_FORMAT", "--log-format", "json",
       "json (one object per line) or text"},
      {"limits.max_body_bytes", "PODIUM_LIMITS_MAX_BODY_BYTES", "--max-body-bytes", "8388608",
       "largest request body accepted; larger gets 413"},
      {"limits.max_bundle_bytes", "PODIUM_LIMITS_MAX_BUNDLE_BYTES", "", "134217728",
       "largest code bundle (compressed) accepted by PUT /api/v1/bundles; larger gets 413"},
      {"limits.max_header_bytes", "PODIUM_LIMITS_MAX_HEADER_BYTES", "", "16384",
       "largest request head (request line + headers); larger gets 431"},
      {"limits.read_timeout_seconds", "PODIUM_LIMITS_READ_TIMEOUT_SECONDS", "", "10",
       "deadline to receive a whole request once its first byte arrived; then the connection is "
       "closed"},
      {"limits.idle_timeout_seconds", "PODIUM_LIMITS_IDLE_TIMEOUT_SECONDS", "", "60",
       "keep-alive connections idle longer are closed"},
      {"limits.write_timeout_seconds", "PODIUM_LIMITS_WRITE_TIMEOUT_SECONDS", "", "30",
       "deadline to send a response"},
      {"limits.max_connections", "PODIUM_LIMITS_MAX_CONNECTIONS", "", "4096",
       "open connections beyond this are refused with 503"},
      {"limits.handler_threads", "PODIUM_LIMITS_HANDLER_THREADS", "", "0",
       "threads running request handlers (long-polls and idle log streams hold none); 0: 1 per "
       "core, from 2 to 64"},
      {"limits.handler_queue", "PODIUM_LIMITS_HANDLER_QUEUE", "", "1024",
       "requests waiting for a handler thread beyond this get 503 with Retry-After"},
      {"limits.shutdown_grace_seconds", "PODIUM_LIMITS_SHUTDOWN_GRACE_SECONDS", "", "10",
       "on SIGTERM, in-flight requests get this long to finish"},
      {"database.pool_size", "PODIUM_DATABASE_POOL_SIZE", "", "0",
       "PostgreSQL connections at most; 0: limits.handler_threads + 4"},
      {"database.acquire_timeout_ms", "PODIUM_DATABASE_ACQUIRE_TIMEOUT_MS", "", "2000",
       "waiting for a free connection longer answers 503"},
      {"database.connect_timeout_ms", "PODIUM_DATABASE_CONNECT_TIMEOUT_MS", "", "2000",
       "deadline to open a connection"},
      {"database.statement_timeout_ms", "PODIUM_DATABASE_STATEMENT_TIMEOUT_MS", "", "15000",
       "PostgreSQL statement_timeout for every connection"},
      {"scheduler.heartbeat_deadline_seconds", "PODIUM_SCHEDULER_HEARTBEAT_DEADLINE_SECONDS", "",
       "15", "a worker silent this long is lost; its attempt ends"},
      {"scheduler.heartbeat_interval_seconds", "PODIUM_SCHEDULER_HEARTBEAT_INTERVAL_SECONDS", "",
       "3", "how often workers are told to send a heartbeat (less than the deadline)"},
      {"scheduler.cancel_grace_seconds", "PODIUM_SCHEDULER_CANCEL_GRACE_SECONDS", "", "10",
       "a cancelled rank gets SIGTERM, then SIGKILL after this long"},
      {"scheduler.coordinator_port_first", "PODIUM_SCHEDULER_COORDINATOR_PORT_FIRST", "", "8476",
       "first port handed to attempts as JAX coordinator / MASTER_PORT (port + 1: MEGASCALE_PORT)"},
      {"scheduler.coordinator_port_count", "PODIUM_SCHEDULER_COORDINATOR_PORT_COUNT", "", "500",
       "size of the coordinator port range"},
      {"stalls.default_seconds", "PODIUM_STALLS_DEFAULT_SECONDS", "", "300",
       "a running attempt silent this long at least (no new step) is stalled; a run's "
       "stall_seconds overrides it"},
      {"stalls.step_factor", "PODIUM_STALLS_STEP_FACTOR", "", "10",
       "a stall is no step for max(this x the attempt's steady step time, stall_seconds)"},
      {"stalls.compile_seconds", "PODIUM_STALLS_COMPILE_SECONDS", "", "1800",
       "time to an attempt's first step before it is stalled, when neither its run nor runs of "
       "its model on its cluster have a history to learn it from"},
      {"stalls.limit", "PODIUM_STALLS_LIMIT", "", "3",
       "the stall of a run (on_stall restart) that ends it as failed / stalled"},
      {"workloads.python", "PODIUM_WORKLOADS_PYTHON", "", "",
       "interpreter that runs the reference workload on worker hosts (needs jax, flax, optax, "
       "orbax-checkpoint: requirements/workload.txt; empty: this source tree's .venv when it "
       "exists, else python3)"},
      {"workloads.reference_dir", "PODIUM_WORKLOADS_REFERENCE_DIR", "", "",
       "the reference workload's directory on worker hosts (empty: this source tree's)"},
      {"workloads.output_dir", "PODIUM_WORKLOADS_OUTPUT_DIR", "", "",
       "base_output_directory of runs that set none (empty: <data_dir>/outputs)"},
      {"auth.session_ttl_hours", "PODIUM_AUTH_SESSION_TTL_HOURS", "", "168",
       "dashboard session lifetime"},
      {"auth.credential_cache_seconds", "PODIUM_AUTH_CREDENTIAL_CACHE_SECONDS", "", "10",
       "a verified token or session is trusted from memory this long at most (0: every request "
       "reads the database); revoking, disabling and signing out take effect at once"},
      {"tls.cert_file", "PODIUM_TLS_CERT", "--tls-cert", "",
       "PEM certificate chain: with tls.key_file, the server serves HTTPS on listen (reloaded "
       "on SIGHUP)"},
      {"tls.key_file", "PODIUM_TLS_KEY", "--tls-key", "", "PEM private key of tls.cert_file"},
      {"public_url", "PODIUM_PUBLIC_URL", "--public-url", "",
       "this server's URL as hosts of external executors (Slurm nodes, Kubernetes pods) reach it "
       "(empty: http://<listen address>:<port>)"},
      {"executors.worker_path", "PODIUM_EXECUTORS_WORKER_PATH", "", "",
       "path of podium-worker on Slurm nodes and in training images (empty: the one beside "
       "podium-server)"},
      {"executors.worker_image", "PODIUM_EXECUTORS_WORKER_IMAGE", "", "",
       "image whose podium-worker an init container copies into Kubernetes pods (empty: "
       "podium-worker is in the training image at executors.worker_path)"},
      {"retention.log_lines_days", "PODIUM_RETENTION_LOG_LINES_DAYS", "", "0",
       "log lines of runs finished this many days ago are deleted (metrics and summaries stay); "
       "0 keeps them"},
      {"retention.batch_rows", "PODIUM_RETENTION_BATCH_ROWS", "", "10000",
       "log lines deleted per transaction by the retention sweep"},
      {"retention.interval_seconds", "PODIUM_RETENTION_INTERVAL_SECONDS", "", "3600",
       "how often the retention sweep runs"},
      {"summaries.precompute_interval_seconds", "PODIUM_SUMMARIES_PRECOMPUTE_INTERVAL_SECONDS", "",
       "10", "how often summaries of runs that finished since are computed and stored"},
      {"summaries.underperforming_ratio", "PODIUM_SUMMARIES_UNDERPERFORMING_RATIO", "", "0.1",
       "a run whose steady TFLOP/s/device is below this fraction of the planner's expectation is "
       "underperforming (engine/core/plan/plan_vs_actual.h); 0 turns the check off"},
      {"webhooks.allow_hosts", "PODIUM_WEBHOOKS_ALLOW_HOSTS", "", "",
       "webhook target hosts (names or IP addresses; a YAML list, or comma-separated) that may be "
       "called over plain http and at loopback, private, link-local or metadata addresses; every "
       "other target must be https at a public address"},
      {"webhooks.poll_interval_ms", "PODIUM_WEBHOOKS_POLL_INTERVAL_MS", "", "1000",
       "how often each delivery worker looks for due webhook deliveries"},
      {"webhooks.delivery_threads", "PODIUM_WEBHOOKS_DELIVERY_THREADS", "", "2",
       "webhook deliveries attempted at once by this server (0: this replica delivers none)"},
      {"webhooks.retry_first_delay_ms", "PODIUM_WEBHOOKS_RETRY_FIRST_DELAY_MS", "", "10000",
       "delay before the first retry of a failed delivery; each later one doubles (with jitter)"},
      {"webhooks.retry_max_delay_seconds", "PODIUM_WEBHOOKS_RETRY_MAX_DELAY_SECONDS", "", "3600",
       "the longest delay between two attempts of a delivery"},
      {"webhooks.give_up_hours", "PODIUM_WEBHOOKS_GIVE_UP_HOURS", "", "24",
       "a delivery not accepted this long after its event is given up (recorded)"},
      {"webhooks.connect_timeout_ms", "PODIUM_WEBHOOKS_CONNECT_TIMEOUT_MS", "", "5000",
       "deadline to resolve, connect to and handshake with a webhook receiver"},
      {"webhooks.timeout_ms", "PODIUM_WEBHOOKS_TIMEOUT_MS", "", "10000",
       "deadline of a whole webhook request, connect included"},
      {"webhooks.max_response_bytes", "PODIUM_WEBHOOKS_MAX_RESPONSE_BYTES", "", "65536",
       "largest response body read from a webhook receiver"},
      {"webhooks.ca_file", "PODIUM_WEBHOOKS_CA_FILE", "", "",
       "PEM bundle that webhook receivers' certificates are verified against (empty: the "
       "system's trust store)"},
  };
  return keys;
}

namespace {

void flatten(const YAML::Node& node, const std::string& prefix,
             std::map<std::string, std::string>& out, std::optional<ConfigError>& error) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      std::string k = kv.first.as<std::string>();
      flatten(kv.second, prefix.empty() ? k : prefix + "." + k, out, error);
    }
  } else if (node.IsScalar()) {
    out[prefix] = node.as<std::string>();
  } else if (node.IsNull()) {
    out[prefix] = "";
  } else if (node.IsSequence()) {
    // A list of scalars (webhooks.allow_hosts) becomes its comma-separated form, the same as
    // the environment variable takes.
    std::string joined;
    for (const auto& item : node) {
      if (!item.IsScalar()) {
        if (!error) error = ConfigError{prefix + ": expected a list of scalar values"};
        return;
      }
      joined += (joined.empty() ? "" : ",") + item.as<std::string>();
    }
    out[prefix] = joined;
  } else if (!error) {
    error = ConfigError{prefix + ": expected a scalar value"};
  }
}

std::optional<long long> parse_int(const std::string& s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::string> find_config_flag(const std::vector<std::string>& args) {
  return parse_config_flags(args).config_file;
}

std::string config_help() {
  std::string out =
      "usage: podium-server [--config FILE] [--set key=value]... [flags]\n\n"
      "Configuration: defaults < YAML file < PODIUM_* environment < flags.\n\n";
  for (const auto& k : config_keys()) {
    out += "  " + k.key + (k.flag.empty() ? "" : " (" + k.flag + ")") + ", env " + k.env +
           "\n      " + k.description +
           " [default: " + (k.default_value.empty() ? "\"\"" : k.default_value) + "]\n";
  }
  return out;
}

ConfigLoad load_config(const ConfigSources& sources) {
  ConfigLoad result;
  std::map<std::string, std::string> values;
  std::set<std::string> known;
  for (const auto& k : config_keys()) {
    values[k.key] = k.default_value;
    known.insert(k.key);
  }
  auto fail = [&](std::string msg) {
    result.error = ConfigError{std::move(msg)};
    return result;
  };

  if (sources.yaml_text) {
    std::map<std::string, std::string> from_file;
    std::optional<ConfigError> err;
    try {
      YAML::Node root = YAML::Load(*sources.yaml_text);
      if (!root.IsNull() && !root.IsMap())
        return fail(sources.yaml_name + ": expected a mapping at the top level");
      if (root.IsMap()) flatten(root, "", from_file, err);
    } catch (const YAML::Exception& e) {
      return fail(sources.yaml_name + ": invalid YAML at line " + std::to_string(e.mark.line + 1) +
                  ": " + e.msg);
    }
    if (err) return fail(sources.yaml_name + ": " + err->message);
    for (auto& [k, v] : from_file) {
      if (!known.count(k)) return fail(sources.yaml_name + ": unknown key '" + k + "'");
      values[k] = v;
    }
  }
  for (const auto& k : config_keys()) {
    auto it = sources.environment.find(k.env);
    if (it != sources.environment.end()) values[k.key] = it->second;
  }
  const ConfigFlags flags = parse_config_flags(sources.args);
  if (flags.help) {
    result.show_help = true;
    return result;
  }
  if (flags.error) return fail(flags.error->message);
  result.config_file = flags.config_file;
  for (const auto& [key, value] : flags.values) values[key] = value;

  ServerConfig& c = result.config;
  auto integer = [&](const std::string& key, long long min,
                     long long max) -> std::optional<long long> {
    auto v = parse_int(values[key]);
    if (!v || *v < min || *v > max) {
      result.error = ConfigError{key + ": expected an integer from " + std::to_string(min) +
                                 " to " + std::to_string(max) + ", got '" + values[key] + "'"};
      return std::nullopt;
    }
    return v;
  };

  {
    const std::string& l = values["listen"];
    auto colon = l.rfind(':');
    auto port = colon == std::string::npos ? std::nullopt : parse_int(l.substr(colon + 1));
    if (colon == std::string::npos || colon == 0 || !port || *port < 0 || *port > 65535)
      return fail("listen: expected host:port (e.g. 127.0.0.1:8080), got '" + l + "'");
    c.listen_host = l.substr(0, colon);
    if (c.listen_host.size() > 2 && c.listen_host.front() == '[' && c.listen_host.back() == ']')
      c.listen_host = c.listen_host.substr(1, c.listen_host.size() - 2);
    c.listen_port = static_cast<int>(*port);
  }
  c.database_url = values["database_url"];
  c.data_dir = values["data_dir"];
  if (c.data_dir.empty()) return fail("data_dir: must not be empty");
  c.admin_token = values["admin_token"];
  if (!c.admin_token.empty() && c.admin_token.size() < 16)
    return fail("admin_token: must be at least 16 characters");
  if (c.admin_token.rfind("pdw_", 0) == 0 || c.admin_token.rfind("pds_", 0) == 0)
    return fail(
        "admin_token: must not start with pdw_ or pds_ (reserved for worker tokens and sessions)");
  c.web_root = values["web_root"];
  c.workloads_python = values["workloads.python"];
  c.workloads_reference_dir = values["workloads.reference_dir"];
  c.workloads_output_dir = values["workloads.output_dir"];
  c.tls_cert_file = values["tls.cert_file"];
  c.tls_key_file = values["tls.key_file"];
  if (c.tls_cert_file.empty() != c.tls_key_file.empty())
    return fail(std::string(c.tls_cert_file.empty() ? "tls.cert_file" : "tls.key_file") +
                ": HTTPS needs both tls.cert_file (PODIUM_TLS_CERT) and tls.key_file "
                "(PODIUM_TLS_KEY)");
  c.public_url = values["public_url"];
  if (!c.public_url.empty() && c.public_url.rfind("http://", 0) != 0 &&
      c.public_url.rfind("https://", 0) != 0)
    return fail("public_url: expected an http:// or https:// URL, got '" + c.public_url + "'");
  while (!c.public_url.empty() && c.public_url.back() == '/') c.public_url.pop_back();
  c.executors_worker_path = values["executors.worker_path"];
  c.executors_worker_image = values["executors.worker_image"];
  c.log_level = values["log.level"];
  static const std::set<std::string> levels = {"trace", "debug", "info", "warn", "error"};
  if (!levels.count(c.log_level))
    return fail("log.level: expected one of trace, debug, info, warn, error, got '" + c.log_level +
                "'");
  c.log_format = values["log.format"];
  if (c.log_format != "json" && c.log_format != "text")
    return fail("log.format: expected json or text, got '" + c.log_format + "'");

  struct IntKey {
    const char* key;
    long long min, max;
    std::function<void(long long)> set;
  };
  const std::vector<IntKey> ints = {
      {"limits.max_body_bytes", 1024, 1LL << 34,
       [&](long long v) { c.max_body_bytes = static_cast<size_t>(v); }},
      {"limits.max_bundle_bytes", 1024, 1LL << 31,
       [&](long long v) { c.max_bundle_bytes = static_cast<size_t>(v); }},
      {"limits.max_header_bytes", 1024, 1 << 20,
       [&](long long v) { c.max_header_bytes = static_cast<size_t>(v); }},
      {"limits.read_timeout_seconds", 1, 3600,
       [&](long long v) { c.read_timeout = std::chrono::seconds(v); }},
      {"limits.idle_timeout_seconds", 1, 86400,
       [&](long long v) { c.idle_timeout = std::chrono::seconds(v); }},
      {"limits.write_timeout_seconds", 1, 3600,
       [&](long long v) { c.write_timeout = std::chrono::seconds(v); }},
      {"limits.max_connections", 1, 1000000,
       [&](long long v) { c.max_connections = static_cast<int>(v); }},
      {"limits.handler_threads", 0, 1024,
       [&](long long v) { c.handler_threads = static_cast<int>(v); }},
      {"limits.handler_queue", 1, 1 << 20,
       [&](long long v) { c.handler_queue = static_cast<int>(v); }},
      {"limits.shutdown_grace_seconds", 0, 3600,
       [&](long long v) { c.shutdown_grace = std::chrono::seconds(v); }},
      {"database.pool_size", 0, 1000, [&](long long v) { c.db_pool_size = static_cast<int>(v); }},
      {"database.acquire_timeout_ms", 1, 600000,
       [&](long long v) { c.db_acquire_timeout = std::chrono::milliseconds(v); }},
      {"database.connect_timeout_ms", 100, 600000,
       [&](long long v) { c.db_connect_timeout = std::chrono::milliseconds(v); }},
      {"database.statement_timeout_ms", 0, 86400000,
       [&](long long v) { c.db_statement_timeout = std::chrono::milliseconds(v); }},
      {"scheduler.heartbeat_deadline_seconds", 1, 3600,
       [&](long long v) { c.heartbeat_deadline = std::chrono::seconds(v); }},
      {"scheduler.heartbeat_interval_seconds", 1, 600,
       [&](long long v) { c.heartbeat_interval = std::chrono::seconds(v); }},
      {"scheduler.cancel_grace_seconds", 0, 3600,
       [&](long long v) { c.cancel_grace = std::chrono::seconds(v); }},
      {"scheduler.coordinator_port_first", 1024, 65000,
       [&](long long v) { c.coordinator_port_first = static_cast<int>(v); }},
      {"scheduler.coordinator_port_count", 4, 20000,
       [&](long long v) { c.coordinator_port_count = static_cast<int>(v); }},
      {"stalls.default_seconds", 1, 7 * 86400,
       [&](long long v) { c.stall_seconds = std::chrono::seconds(v); }},
      {"stalls.step_factor", 1, 10000,
       [&](long long v) { c.stall_step_factor = static_cast<int>(v); }},
      {"stalls.compile_seconds", 1, 7 * 86400,
       [&](long long v) { c.stall_compile_seconds = std::chrono::seconds(v); }},
      {"stalls.limit", 1, 1000, [&](long long v) { c.stall_limit = static_cast<int>(v); }},
      {"auth.session_ttl_hours", 1, 24 * 365,
       [&](long long v) { c.session_ttl = std::chrono::hours(v); }},
      // At most a minute: a token's last_used_at is kept to the minute on the requests that miss.
      {"auth.credential_cache_seconds", 0, 60,
       [&](long long v) { c.credential_cache_ttl = std::chrono::seconds(v); }},
      {"retention.log_lines_days", 0, 36500,
       [&](long long v) { c.log_retention_days = static_cast<int>(v); }},
      {"retention.batch_rows", 100, 1000000,
       [&](long long v) { c.log_retention_batch_rows = static_cast<int>(v); }},
      {"retention.interval_seconds", 1, 86400,
       [&](long long v) { c.log_retention_interval = std::chrono::seconds(v); }},
      {"summaries.precompute_interval_seconds", 1, 3600,
       [&](long long v) { c.summary_precompute_interval = std::chrono::seconds(v); }},
      {"webhooks.poll_interval_ms", 10, 3600000,
       [&](long long v) { c.webhooks_poll_interval = std::chrono::milliseconds(v); }},
      {"webhooks.delivery_threads", 0, 64,
       [&](long long v) { c.webhooks_delivery_threads = static_cast<int>(v); }},
      {"webhooks.retry_first_delay_ms", 10, 86400000,
       [&](long long v) { c.webhooks_retry_first_delay = std::chrono::milliseconds(v); }},
      {"webhooks.retry_max_delay_seconds", 1, 86400,
       [&](long long v) { c.webhooks_retry_max_delay = std::chrono::seconds(v); }},
      {"webhooks.give_up_hours", 1, 720,
       [&](long long v) { c.webhooks_give_up_after = std::chrono::hours(v); }},
      {"webhooks.connect_timeout_ms", 100, 120000,
       [&](long long v) { c.webhooks_connect_timeout = std::chrono::milliseconds(v); }},
      {"webhooks.timeout_ms", 100, 300000,
       [&](long long v) { c.webhooks_timeout = std::chrono::milliseconds(v); }},
      {"webhooks.max_response_bytes", 1024, 16 * 1024 * 1024,
       [&](long long v) { c.webhooks_max_response_bytes = static_cast<size_t>(v); }},
  };
  for (const auto& k : ints) {
    auto v = integer(k.key, k.min, k.max);
    if (!v) return result;
    k.set(*v);
  }
  if (c.handler_threads == 1)
    return fail("limits.handler_threads: expected 0 (scaled to the cores) or 2 to 1024, got '1'");
  if (c.handler_threads == 0)
    c.handler_threads =
        sized_handler_threads(sources.cores ? sources.cores : std::thread::hardware_concurrency());
  if (c.db_pool_size == 0) c.db_pool_size = sized_pool(c.handler_threads);
  {
    // A fraction of the plan: 0 (off) up to 1 (anything slower than planned).
    const std::string& text = values["summaries.underperforming_ratio"];
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < 0 ||
        v > 1)
      return fail("summaries.underperforming_ratio: expected a number from 0 to 1, got '" + text +
                  "'");
    c.underperforming_ratio = v;
  }
  c.webhooks_ca_file = values["webhooks.ca_file"];
  {
    const std::string& list = values["webhooks.allow_hosts"];
    size_t from = 0;
    while (from <= list.size()) {
      size_t comma = list.find(',', from);
      if (comma == std::string::npos) comma = list.size();
      std::string host = list.substr(from, comma - from);
      while (!host.empty() && std::isspace(static_cast<unsigned char>(host.front())))
        host.erase(host.begin());
      while (!host.empty() && std::isspace(static_cast<unsigned char>(host.back())))
        host.pop_back();
      if (!host.empty()) c.webhooks_allow_hosts.push_back(host);
      from = comma + 1;
    }
  }
  return result;
}

}  // namespace podium
