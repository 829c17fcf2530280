#pragma once
// Tolerant parser for MaxText training logs (domain brief §3), one line at a time, plus a
// LogDigest accumulator used by log import and live ingestion. Pure: no I/O.
//
// Guarantees: parse_maxtext_line never throws and never reads past its input; input may be any
// bytes (invalid UTF-8, NUL, escape sequences). Work per line is bounded: only the first
// kMaxParsedLineBytes bytes of a line are examined, and every scan is linear in that prefix.
//
// Wording follows MaxText as printed (metric_logger.py, max_utils.py, pyconfig.py):
//   completed step: 99, seconds: 0.693, TFLOP/s/device: 83.171, Tokens/s/device: 11819.175,
//     total_weights: 262144, loss: 0.334[, lm_loss: ..., live slice count: N, ...]
//   [Rampup Batch Size Phase], completed step: 5, seconds: 1.2, total_weights: ..., loss: ...
//   completed profiler activation/deactivation step: 5, total_weights: ..., loss: ...
//   number parameters: 15.933 billion
//   Per train step:\n Total TFLOPs: 764.67 \n split as 94.54% learnable weight flops and 5.46% ...
//     (three lines in current releases; one line "Per train step, total TFLOPs will be X, split
//     as ..." in older ones; both forms accepted)
//   Total memory size: 13.6 GB, Output size: 5.7 GB, Temp size: 7.9 GB, Argument size: 5.7 GB,
//     Host temp size: 0.0 GB.   (compiler estimate; "Total estimated memory size:" accepted too)
//   Memstats: After params initialized:\n\tUsing (GB) 44.63 / 95.74 (46.615835%) on TPU_0(...)
//     (header and one line per local device; the one-line form is accepted too). The "GB" are
//     GiB (bytes / 2**30). "RAMstats:" lines use the same "Using (GB)" text without " on <device>"
//     and are host RAM, not HBM: they parse as `other`.
//   Config param <key>: <value>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::core {

// Lines longer than this are parsed on their first kMaxParsedLineBytes bytes only (MaxText lines
// are far shorter; the cap bounds the cost of hostile or binary input).
inline constexpr std::size_t kMaxParsedLineBytes = 32 * 1024;

enum class LogLineKind {
  step,               // completed step with timing
  rampup_step,        // batch-size rampup phase step (timing, no TFLOP/s or tokens/s)
  profiler,           // profiler activation/deactivation boundary: not a metric step
  num_params,         // number parameters: N billion
  total_tflops,       // per-step TFLOPs per device and/or its weight/attention split
  memory_estimate,    // compiler memory estimate
  memstats,           // Memstats header or per-device HBM usage
  config_param,       // Config param <key>: <value>
  failure_signature,  // a known failure (or warning) signature
  other,
};
std::string_view to_string(LogLineKind kind);

// Known failure signatures. Their mapping to failure classes lives in failure_classifier.h.
enum class FailureSignature {
  hbm_oom,                // RESOURCE_EXHAUSTED / Ran out of memory in memory space hbm / Out of
                          // memory while trying to allocate
  mesh_unmappable,        // Failed to find assignment for logical_axis_index
  mesh_product_mismatch,  // ... does not match the product of the ICI/DCN parallelism
  invalid_config_key,     // ... not in valid fields
  invalid_config_value,   // Couldn't parse value from CLI or ENV
  data_exhausted,         // StopIteration
  nan_loss,               // Aborting training due to NaN loss.
  preempted,              // Job is preempted. (MaxText/Orbax after a preemption notice)
  tpu_busy,               // The TPU is already in use by process with pid N (warning)
  cpu_fallback,           // JAX fell back to CPU (warning; usually follows tpu_busy)
  python_code_error,      // a traceback's exception line naming ImportError,
                          // ModuleNotFoundError, SyntaxError (IndentationError, TabError),
                          // TypeError, AttributeError or NameError: the code or its environment
                          // is wrong (failure_classifier.h decides when that is code_error)
  code_bundle_unusable,   // podium-worker: the run's code bundle could not be fetched, its
                          // digest did not match, or it could not be unpacked (the rank never
                          // started: engine/worker/code_tree.h kCodeBundleUnusable)
};
std::string_view to_string(FailureSignature signature);
std::optional<FailureSignature> parse_failure_signature(std::string_view name);
// Warnings do not fail a run by themselves; they explain a slow or failed one.
bool is_warning_signature(FailureSignature signature);

struct StepMetrics {
  std::int64_t step = 0;
  std::optional<double> seconds;
  std::optional<double> tflops_per_device;             // TFLOP/s/device (older: TFLOP/s)
  std::optional<double> tokens_per_second_per_device;  // Tokens/s/device
  std::optional<double> total_weights;
  std::optional<double> loss;
  std::optional<std::int64_t> live_slice_count;
  // Every other numeric "key: value" field, key normalised to snake_case (lm_loss, perplexity,
  // moe_lb_loss, lr, grad_norm, tokens_s_chip, ...). Non-numeric values are dropped.
  std::map<std::string, double> extra;
  bool rampup = false;             // [Rampup Batch Size Phase]
  bool profiler_boundary = false;  // completed profiler activation/deactivation step
};

struct NumParams {
  double billions = 0;
};

// Any subset may be present: the current MaxText prints total and split on separate lines.
struct TflopsInfo {
  std::optional<double> tflops_per_device;  // per train step, per device (TFLOPs, not TFLOP/s)
  std::optional<double> learnable_weight_percent;
  std::optional<double> attention_percent;
};

struct MemoryEstimate {
  std::optional<double> total_gb;
  // "output", "temp", "argument", "host_temp", "peak", "alias" as printed (GB = GiB).
  std::map<std::string, double> components_gb;
};

// Either a header ("Memstats: <label>:", used/limit absent) or a device line (used/limit present,
// label empty unless printed on the same line).
struct MemstatsLine {
  std::string label;
  std::optional<double> used_gib;
  std::optional<double> limit_gib;
  std::optional<double> percent;
  std::string device;  // "TPU_0(process=0,(0,0,0,0))", "cuda:0"
};

struct ConfigParam {
  std::string key;
  std::string value;  // as printed (Python repr for lists/None/bools)
};

struct SignatureHit {
  FailureSignature signature = FailureSignature::hbm_oom;
  std::string excerpt;  // the message, cut to at most 512 bytes
};

struct ParsedLine {
  LogLineKind kind = LogLineKind::other;
  // Ray's log deduplication: " [repeated 6x across cluster]" -> 6 (0 when absent).
  int repeated = 0;
  std::variant<std::monostate, StepMetrics, NumParams, TflopsInfo, MemoryEstimate, MemstatsLine,
               ConfigParam, SignatureHit>
      payload;

  const StepMetrics* step() const { return std::get_if<StepMetrics>(&payload); }
  const NumParams* num_params() const { return std::get_if<NumParams>(&payload); }
  const TflopsInfo* tflops() const { return std::get_if<TflopsInfo>(&payload); }
  const MemoryEstimate* memory_estimate() const { return std::get_if<MemoryEstimate>(&payload); }
  const MemstatsLine* memstats() const { return std::get_if<MemstatsLine>(&payload); }
  const ConfigParam* config_param() const { return std::get_if<ConfigParam>(&payload); }
  const SignatureHit* signature() const { return std::get_if<SignatureHit>(&payload); }
};

// The message of a log line without decoration, as valid UTF-8 (invalid bytes become U+FFFD so
// that every string the parser returns can be stored and served as JSON): ANSI escapes, Ray worker
// prefix
// "(RayTrainWorker pid=.., ip=..) ", kubectl "--timestamps" and "--prefix" prefixes, absl/glog
// "I1121 16:46:01.123456 140 train.py:123] ", Python logging "2026-11-21 16:46:01,123 - INFO - "
// and "INFO:absl:", the Ray suffix " [repeated Nx across cluster]", trailing CR/LF.
struct CleanLine {
  std::string message;
  int repeated = 0;
};
CleanLine clean_log_line(std::string_view line) noexcept;

// Never throws. Unknown or malformed lines are `other`.
ParsedLine parse_maxtext_line(std::string_view line) noexcept;

struct MemstatsPeak {
  double used_gib = 0;
  double limit_gib = 0;
  std::string device;
  std::string label;  // the Memstats header in force when the peak was printed
};

struct SignatureSummary {
  FailureSignature signature = FailureSignature::hbm_oom;
  std::int64_t count = 0;
  std::int64_t first_line = 0;  // 1-based index of the first line fed that carried it
  std::string first_excerpt;
};

// Accumulates a log (one rank's output, or an imported log). Lines fed in order.
class LogDigest {
 public:
  // Parses one line (without its newline) and accumulates it; returns the parse.
  ParsedLine feed(std::string_view line);
  // Splits text on '\n' and feeds every line (a trailing partial line is fed too).
  void feed_text(std::string_view text);
  // Accumulates a line already parsed elsewhere (counts as one line).
  void add(const ParsedLine& parsed);

  // Metric steps (step and rampup_step) by step number. A step logged twice (a restart redid it)
  // keeps the later line; duplicate_step_lines() counts the repeats.
  const std::map<std::int64_t, StepMetrics>& steps() const { return steps_; }
  const std::vector<std::int64_t>& profiler_steps() const { return profiler_steps_; }
  std::optional<double> num_params_billion() const { return num_params_billion_; }
  const TflopsInfo& tflops_per_step() const { return tflops_; }
  const std::optional<MemstatsPeak>& memstats_peak() const { return memstats_peak_; }
  const std::optional<MemoryEstimate>& memory_estimate() const { return memory_estimate_; }
  const std::map<std::string, std::string>& config_params() const { return config_params_; }
  const std::vector<SignatureSummary>& signatures() const { return signatures_; }
  std::set<FailureSignature> signatures_seen() const;
  bool saw(FailureSignature signature) const;
  std::int64_t lines() const { return lines_; }
  std::int64_t duplicate_step_lines() const { return duplicate_step_lines_; }
  std::optional<std::int64_t> first_step() const;
  std::optional<std::int64_t> last_step() const;

 private:
  std::map<std::int64_t, StepMetrics> steps_;
  std::vector<std::int64_t> profiler_steps_;
  std::optional<double> num_params_billion_;
  TflopsInfo tflops_;
  std::optional<MemstatsPeak> memstats_peak_;
  std::string memstats_label_;
  std::optional<MemoryEstimate> memory_estimate_;
  std::map<std::string, std::string> config_params_;
  std::vector<SignatureSummary> signatures_;
  std::int64_t lines_ = 0;
  std::int64_t duplicate_step_lines_ = 0;
};

// JSON forms. Non-finite numbers (a NaN loss) become null: JSON has no NaN.
nlohmann::json to_json(const StepMetrics& m);
nlohmann::json to_json(const TflopsInfo& t);
nlohmann::json to_json(const MemoryEstimate& e);
nlohmann::json to_json(const MemstatsPeak& p);
nlohmann::json to_json(const ParsedLine& line);
// Summary of a digest (no per-step rows): {"lines","steps":{"count","first","last",
// "duplicate_lines"},"profiler_steps","num_params_billion","tflops_per_step","memstats_peak",
// "memory_estimate","config_params","signatures":[{"signature","count","first_line","excerpt"}]}
nlohmann::json to_json(const LogDigest& digest);

}  // namespace podium::core
