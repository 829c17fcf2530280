#include "engine/core/logs/maxtext_log.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <system_error>
#include <utility>

#include "engine/core/text/utf8.h"

namespace podium::core {
namespace {

constexpr std::size_t kExcerptBytes = 512;
constexpr int kMaxStepFields = 64;
constexpr std::size_t kMaxFieldKeyBytes = 64;
constexpr int kMaxPrefixPasses = 8;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_alnum(char c) {
  return is_digit(c) || is_alpha(c);
}
char to_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string_view log_trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}

bool log_contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Case-insensitive search for an ASCII needle.
std::size_t ci_find(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return 0;
  if (haystack.size() < needle.size()) return std::string_view::npos;
  const char first = to_lower(needle.front());
  for (std::size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    if (to_lower(haystack[i]) != first) continue;
    std::size_t j = 1;
    while (j < needle.size() && to_lower(haystack[i + j]) == to_lower(needle[j])) ++j;
    if (j == needle.size()) return i;
  }
  return std::string_view::npos;
}

bool ci_contains(std::string_view haystack, std::string_view needle) {
  return ci_find(haystack, needle) != std::string_view::npos;
}

bool ci_equals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (to_lower(a[i]) != to_lower(b[i])) return false;
  }
  return true;
}

// Parses a number at the start of `s` (after spaces). Accepts a leading '+', "nan", "inf".
// On success `rest` is what follows the number.
std::optional<double> parse_double_prefix(std::string_view s, std::string_view* rest = nullptr) {
  s = trim_left(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double value = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) return std::nullopt;
  if (rest != nullptr) *rest = s.substr(static_cast<std::size_t>(ptr - begin));
  return value;
}

// The whole of `s` (trimmed) must be a number.
std::optional<double> parse_double_exact(std::string_view s) {
  std::string_view rest;
  auto value = parse_double_prefix(log_trim(s), &rest);
  if (!value || !log_trim(rest).empty()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_int_prefix(std::string_view s, std::string_view* rest = nullptr) {
  s = trim_left(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  std::int64_t value = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) return std::nullopt;
  if (rest != nullptr) *rest = s.substr(static_cast<std::size_t>(ptr - begin));
  return value;
}

// "Tokens/s/chip" -> "tokens_s_chip", "lm loss" -> "lm_loss".
std::string snake_case(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  bool pending_sep = false;
  for (char c : key) {
    if (is_alnum(c)) {
      if (pending_sep && !out.empty()) out.push_back('_');
      pending_sep = false;
      out.push_back(to_lower(c));
    } else {
      pending_sep = true;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Prefix / suffix stripping. Each helper returns the rest of the line when its decoration is at
// the front, or nullopt. All of them look at a bounded window.

// "(RayTrainWorker pid=130520, ip=10.60.7.7) ", "(pid=42) ".
std::optional<std::string_view> strip_ray_prefix(std::string_view s) {
  if (s.empty() || s.front() != '(') return std::nullopt;
  const std::size_t close = s.substr(0, 256).find(')');
  if (close == std::string_view::npos) return std::nullopt;
  if (!log_contains(s.substr(0, close), "pid=")) return std::nullopt;
  return s.substr(close + 1);
}

// kubectl logs --prefix: "[pod/jax-tpu-0-abcde/jax-tpu] ".
std::optional<std::string_view> strip_kubectl_prefix(std::string_view s) {
  if (s.substr(0, 5) != "[pod/") return std::nullopt;
  const std::size_t close = s.substr(0, 512).find(']');
  if (close == std::string_view::npos) return std::nullopt;
  return s.substr(close + 1);
}

// Counts digits at the front of s.
std::size_t digits_at(std::string_view s, std::size_t pos) {
  std::size_t n = 0;
  while (pos + n < s.size() && is_digit(s[pos + n])) ++n;
  return n;
}

// "YYYY-MM-DD" at pos.
bool date_at(std::string_view s, std::size_t pos) {
  return pos + 10 <= s.size() && digits_at(s, pos) == 4 && s[pos + 4] == '-' &&
         digits_at(s, pos + 5) == 2 && s[pos + 7] == '-' && digits_at(s, pos + 8) == 2;
}

// "HH:MM:SS" with optional [.,]fraction at pos; returns the length matched or 0.
std::size_t time_at(std::string_view s, std::size_t pos) {
  if (!(pos + 8 <= s.size() && digits_at(s, pos) == 2 && s[pos + 2] == ':' &&
        digits_at(s, pos + 3) == 2 && s[pos + 5] == ':' && digits_at(s, pos + 6) == 2)) {
    return 0;
  }
  std::size_t n = 8;
  if (pos + n < s.size() && (s[pos + n] == '.' || s[pos + n] == ',')) {
    const std::size_t frac = digits_at(s, pos + n + 1);
    if (frac > 0) n += 1 + frac;
  }
  return n;
}

// kubectl --timestamps: "2026-11-21T16:46:01.123456789Z " or with "+00:00".
std::optional<std::string_view> strip_rfc3339_prefix(std::string_view s) {
  if (!date_at(s, 0) || s.size() < 11 || s[10] != 'T') return std::nullopt;
  const std::size_t t = time_at(s, 11);
  if (t == 0) return std::nullopt;
  std::size_t pos = 11 + t;
  if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  } else if (pos + 6 <= s.size() && (s[pos] == '+' || s[pos] == '-') &&
             digits_at(s, pos + 1) == 2 && s[pos + 3] == ':' && digits_at(s, pos + 4) == 2) {
    pos += 6;
  }
  if (pos < s.size() && !is_space(s[pos])) return std::nullopt;
  return s.substr(pos);
}

constexpr std::array<std::string_view, 8> kLevels = {"DEBUG", "INFO",     "WARNING", "WARN",
                                                     "ERROR", "CRITICAL", "FATAL",   "NOTSET"};

// Length of a log level word at the front of s (case-insensitive), or 0.
std::size_t level_word_at(std::string_view s) {
  for (std::string_view level : kLevels) {
    if (s.size() >= level.size() && ci_equals(s.substr(0, level.size()), level) &&
        (s.size() == level.size() || !is_alnum(s[level.size()]))) {
      return level.size();
    }
  }
  return 0;
}

// After a Python logging timestamp: " - INFO - ", " - name - INFO - ", " INFO ", "[INFO] ",
// " INFO: ". Returns the rest after the level, or `s` unchanged when no level follows.
std::string_view strip_after_timestamp(std::string_view s) {
  std::string_view cur = trim_left(s);
  // Up to three "- token " groups (logger name, level) in the "%(asctime)s - %(name)s - ..." form.
  for (int i = 0; i < 3; ++i) {
    std::string_view probe = cur;
    if (!probe.empty() && probe.front() == '-') probe = trim_left(probe.substr(1));
    if (!probe.empty() && probe.front() == '[') {
      const std::size_t n = level_word_at(probe.substr(1));
      if (n > 0 && probe.size() > n + 1 && probe[n + 1] == ']') {
        return trim_left(probe.substr(n + 2));
      }
    }
    const std::size_t n = level_word_at(probe);
    if (n > 0) {
      std::string_view rest = probe.substr(n);
      if (!rest.empty() && rest.front() == ':') rest.remove_prefix(1);
      rest = trim_left(rest);
      if (!rest.empty() && rest.front() == '-') rest = rest.substr(1);
      return trim_left(rest);
    }
    // Skip one word (a logger name) and try again; stop at anything that is not "- word ".
    if (cur.empty() || cur.front() != '-') break;
    std::size_t end = 0;
    while (end < probe.size() && !is_space(probe[end])) ++end;
    if (end == 0 || end > 128) break;
    cur = trim_left(probe.substr(end));
  }
  return s;
}

// "2026-11-21 16:46:01,123 - INFO - ", "[2026-11-21 16:46:01,123] INFO ...".
std::optional<std::string_view> strip_python_timestamp(std::string_view s) {
  std::size_t pos = 0;
  const bool bracket = !s.empty() && s.front() == '[';
  if (bracket) pos = 1;
  if (!date_at(s, pos) || s.size() < pos + 11 || s[pos + 10] != ' ') return std::nullopt;
  const std::size_t t = time_at(s, pos + 11);
  if (t == 0) return std::nullopt;
  pos += 11 + t;
  if (bracket) {
    if (pos >= s.size() || s[pos] != ']') return std::nullopt;
    ++pos;
  }
  return strip_after_timestamp(s.substr(pos));
}

// absl / glog: "I1121 16:46:01.123456 140 train.py:123] ".
std::optional<std::string_view> strip_glog_prefix(std::string_view s) {
  if (s.size() < 6) return std::nullopt;
  const char sev = s[0];
  if (sev != 'I' && sev != 'W' && sev != 'E' && sev != 'F') return std::nullopt;
  if (digits_at(s, 1) != 4 || s[5] != ' ') return std::nullopt;
  if (time_at(s, 6) == 0) return std::nullopt;
  const std::size_t close = s.substr(0, 256).find("] ");
  if (close != std::string_view::npos) return s.substr(close + 2);
  // A message-less line ends with "]".
  if (!s.empty() && s.back() == ']' && s.size() <= 256) return std::string_view{};
  return std::nullopt;
}

// Python's default logging format "INFO:absl:message" / "WARNING:root:message".
std::optional<std::string_view> strip_level_logger_prefix(std::string_view s) {
  const std::size_t n = level_word_at(s);
  if (n == 0 || n >= s.size() || s[n] != ':') return std::nullopt;
  std::size_t pos = n + 1;
  std::size_t name = 0;
  while (pos + name < s.size() && name < 128 &&
         (is_alnum(s[pos + name]) || s[pos + name] == '_' || s[pos + name] == '.')) {
    ++name;
  }
  if (name == 0 || pos + name >= s.size() || s[pos + name] != ':') return std::nullopt;
  return s.substr(pos + name + 1);
}

// Removes ANSI escape sequences (Ray colours its prefixes) and caps the length.
std::string remove_ansi(std::string_view line) {
  line = line.substr(0, std::min(line.size(), kMaxParsedLineBytes));
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c != '\x1b') {
      out.push_back(c);
      continue;
    }
    // CSI: ESC '[' parameters/intermediates (0x20-0x3F) final (0x40-0x7E). Other escapes: drop
    // ESC and the next byte.
    if (i + 1 < line.size() && line[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < line.size()) {
        const auto b = static_cast<unsigned char>(line[j]);
        if (b >= 0x40 && b <= 0x7E) break;
        if (b < 0x20 || b > 0x3F) break;
        ++j;
      }
      i = (j < line.size()) ? j : line.size() - 1;
    } else if (i + 1 < line.size()) {
      ++i;
    }
  }
  return out;
}

// " [repeated 6x across cluster]" at the end; returns the count and trims it off `s`.
int strip_repeated_suffix(std::string_view& s) {
  constexpr std::string_view kHead = "[repeated ";
  constexpr std::string_view kTail = "x across cluster]";
  if (s.size() < kHead.size() + kTail.size() + 1) return 0;
  if (s.substr(s.size() - kTail.size()) != kTail) return 0;
  const std::size_t head = s.rfind(kHead);
  if (head == std::string_view::npos) return 0;
  const std::size_t num_begin = head + kHead.size();
  const std::size_t num_end = s.size() - kTail.size();
  if (num_end <= num_begin || num_end - num_begin > 9) return 0;
  int n = 0;
  for (std::size_t i = num_begin; i < num_end; ++i) {
    if (!is_digit(s[i])) return 0;
    n = n * 10 + (s[i] - '0');
  }
  s = log_trim(s.substr(0, head));
  return n;
}

// ---------------------------------------------------------------------------------------------
// Line kinds.

constexpr std::string_view kRampupTag = "[Rampup Batch Size Phase]";
constexpr std::string_view kCompletedStep = "completed step:";
constexpr std::string_view kProfilerStep = "completed profiler activation/deactivation step:";

// Assigns one "key: value" field of a step line.
void assign_step_field(StepMetrics& m, std::string_view key, double value) {
  if (key == "seconds") {
    m.seconds = value;
  } else if (key == "TFLOP/s/device" || key == "TFLOP/s") {
    m.tflops_per_device = value;
  } else if (key == "Tokens/s/device") {
    m.tokens_per_second_per_device = value;
  } else if (key == "total_weights") {
    m.total_weights = value;
  } else if (key == "loss") {
    m.loss = value;
  } else if (key == "live slice count" || key == "live_slice_count") {
    if (std::isfinite(value) && value >= 0 && value < 1e9) {
      m.live_slice_count = static_cast<std::int64_t>(value);
    }
  } else {
    std::string normalized = snake_case(key);
    if (!normalized.empty()) m.extra[std::move(normalized)] = value;
  }
}

// `s` starts right after "completed step:" (or the profiler marker).
std::optional<StepMetrics> parse_step_fields(std::string_view s) {
  StepMetrics m;
  std::string_view rest;
  auto step = parse_int_prefix(s, &rest);
  if (!step || *step < 0) return std::nullopt;
  // "completed step: 5.0" or "completed step: 5x" is not a step line.
  rest = trim_left(rest);
  if (!rest.empty() && rest.front() != ',') return std::nullopt;
  m.step = *step;
  int fields = 0;
  while (!rest.empty() && fields < kMaxStepFields) {
    ++fields;
    rest.remove_prefix(1);  // the ','
    const std::size_t comma = rest.find(',');
    std::string_view field = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma);
    const std::size_t colon = field.find(':');
    if (colon == std::string_view::npos) continue;  // part of a value that held a comma
    std::string_view key = log_trim(field.substr(0, colon));
    if (key.empty() || key.size() > kMaxFieldKeyBytes) continue;
    auto value = parse_double_exact(field.substr(colon + 1));
    if (!value) continue;
    assign_step_field(m, key, *value);
  }
  return m;
}

std::optional<ParsedLine> parse_step_line(std::string_view msg) {
  bool rampup = false;
  std::string_view s = msg;
  if (s.substr(0, kRampupTag.size()) == kRampupTag) {
    rampup = true;
    s = trim_left(s.substr(kRampupTag.size()));
    if (!s.empty() && s.front() == ',') s = trim_left(s.substr(1));
  }
  bool profiler = false;
  if (s.substr(0, kCompletedStep.size()) == kCompletedStep) {
    s.remove_prefix(kCompletedStep.size());
  } else if (s.substr(0, kProfilerStep.size()) == kProfilerStep) {
    s.remove_prefix(kProfilerStep.size());
    profiler = true;
  } else {
    return std::nullopt;
  }
  auto m = parse_step_fields(s);
  if (!m) return std::nullopt;
  m->rampup = rampup;
  m->profiler_boundary = profiler;
  ParsedLine out;
  out.kind =
      profiler ? LogLineKind::profiler : (rampup ? LogLineKind::rampup_step : LogLineKind::step);
  out.payload = std::move(*m);
  return out;
}

// The step marker may sit behind a decoration we do not know; look for it anywhere, but only at
// a token boundary so that "uncompleted step:" does not count.
std::optional<ParsedLine> find_step_line(std::string_view msg) {
  if (auto direct = parse_step_line(msg)) return direct;
  for (std::string_view marker : {kRampupTag, kCompletedStep, kProfilerStep}) {
    const std::size_t at = msg.find(marker);
    if (at == std::string_view::npos || at == 0) continue;
    const char before = msg[at - 1];
    if (!is_space(before) && before != ']' && before != ')' && before != ':') continue;
    if (auto found = parse_step_line(msg.substr(at))) return found;
  }
  return std::nullopt;
}

std::optional<ParsedLine> parse_config_param(std::string_view msg) {
  constexpr std::string_view kHead = "Config param ";
  if (msg.substr(0, kHead.size()) != kHead) return std::nullopt;
  std::string_view rest = msg.substr(kHead.size());
  const std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 256) return std::nullopt;
  std::string_view key = rest.substr(0, colon);
  for (char c : key) {
    if (!is_alnum(c) && c != '_' && c != '.' && c != '-') return std::nullopt;
  }
  std::string_view value = rest.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  ParsedLine out;
  out.kind = LogLineKind::config_param;
  out.payload = ConfigParam{std::string(key), std::string(log_trim(value))};
  return out;
}

// "Using (GB) 44.63 / 95.74 (46.615835%) on TPU_0(process=0,(0,0,0,0))".
bool parse_using_gb(std::string_view s, MemstatsLine& m) {
  constexpr std::string_view kUsing = "Using (GB)";
  const std::size_t at = s.find(kUsing);
  if (at == std::string_view::npos) return false;
  std::string_view rest = s.substr(at + kUsing.size());
  auto used = parse_double_prefix(rest, &rest);
  if (!used) return false;
  rest = trim_left(rest);
  if (rest.empty() || rest.front() != '/') return false;
  auto limit = parse_double_prefix(rest.substr(1), &rest);
  if (!limit) return false;
  rest = trim_left(rest);
  std::optional<double> percent;
  if (!rest.empty() && rest.front() == '(') {
    percent = parse_double_prefix(rest.substr(1));
    const std::size_t close = rest.find(')');
    rest = close == std::string_view::npos ? std::string_view{} : rest.substr(close + 1);
  }
  rest = trim_left(rest);
  // Host RAM lines ("RAMstats") have no " on <device>".
  if (rest.substr(0, 3) != "on ") return false;
  m.used_gib = used;
  m.limit_gib = limit;
  m.percent = percent;
  m.device = std::string(log_trim(rest.substr(3)));
  return true;
}

std::optional<ParsedLine> parse_memstats(std::string_view msg) {
  constexpr std::string_view kHead = "Memstats:";
  MemstatsLine m;
  if (msg.substr(0, kHead.size()) == kHead) {
    std::string_view rest = log_trim(msg.substr(kHead.size()));
    const std::size_t using_at = rest.find("Using (GB)");
    std::string_view label = using_at == std::string_view::npos ? rest : rest.substr(0, using_at);
    label = log_trim(label);
    if (!label.empty() && label.back() == ':') label.remove_suffix(1);
    m.label = std::string(log_trim(label));
    if (using_at != std::string_view::npos && !parse_using_gb(rest.substr(using_at), m)) {
      return std::nullopt;
    }
  } else if (msg.substr(0, 10) == "Using (GB)") {
    if (!parse_using_gb(msg, m)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  ParsedLine out;
  out.kind = LogLineKind::memstats;
  out.payload = std::move(m);
  return out;
}

std::optional<ParsedLine> parse_num_params(std::string_view msg) {
  constexpr std::string_view kHead = "number parameters:";
  if (msg.substr(0, kHead.size()) != kHead) return std::nullopt;
  std::string_view rest;
  auto value = parse_double_prefix(msg.substr(kHead.size()), &rest);
  if (!value) return std::nullopt;
  rest = log_trim(rest);
  double scale = 1.0;
  if (rest.substr(0, 7) == "billion") {
    scale = 1.0;
  } else if (rest.substr(0, 7) == "million") {
    scale = 1e-3;
  } else if (rest.substr(0, 8) == "trillion") {
    scale = 1e3;
  } else {
    return std::nullopt;
  }
  ParsedLine out;
  out.kind = LogLineKind::num_params;
  out.payload = NumParams{*value * scale};
  return out;
}

std::optional<ParsedLine> parse_tflops(std::string_view msg) {
  // Inference tools print the same sentence for prefill; only training steps count.
  if (ci_contains(msg, "prefill")) return std::nullopt;
  TflopsInfo t;
  for (std::string_view marker :
       {std::string_view("Total TFLOPs:"), std::string_view("total TFLOPs will be")}) {
    const std::size_t at = msg.find(marker);
    if (at != std::string_view::npos) {
      t.tflops_per_device = parse_double_prefix(msg.substr(at + marker.size()));
      if (t.tflops_per_device) break;
    }
  }
  constexpr std::string_view kSplit = "split as ";
  constexpr std::string_view kAnd = "learnable weight flops and ";
  const std::size_t split = msg.find(kSplit);
  if (split != std::string_view::npos &&
      log_contains(msg.substr(split), "learnable weight flops")) {
    t.learnable_weight_percent = parse_double_prefix(msg.substr(split + kSplit.size()));
    const std::size_t and_at = msg.find(kAnd, split);
    if (and_at != std::string_view::npos && log_contains(msg.substr(and_at), "attention flops")) {
      t.attention_percent = parse_double_prefix(msg.substr(and_at + kAnd.size()));
    }
  }
  if (!t.tflops_per_device && !t.learnable_weight_percent && !t.attention_percent) {
    return std::nullopt;
  }
  ParsedLine out;
  out.kind = LogLineKind::total_tflops;
  out.payload = t;
  return out;
}

std::optional<ParsedLine> parse_memory_estimate(std::string_view msg) {
  std::size_t head_end = std::string_view::npos;
  for (std::string_view head :
       {std::string_view("Total memory size:"), std::string_view("Total estimated memory size:")}) {
    if (msg.substr(0, head.size()) == head) head_end = head.size();
  }
  if (head_end == std::string_view::npos) return std::nullopt;
  MemoryEstimate e;
  std::string_view rest;
  e.total_gb = parse_double_prefix(msg.substr(head_end), &rest);
  if (!e.total_gb) return std::nullopt;
  // Components: "<Name> size: X GB" separated by ", " or ". ".
  constexpr std::string_view kSize = " size:";
  std::size_t pos = 0;
  int components = 0;
  while (components < 16) {
    const std::size_t at = rest.find(kSize, pos);
    if (at == std::string_view::npos) break;
    ++components;
    std::size_t name_begin = at;
    while (name_begin > 0 && rest[name_begin - 1] != ',' && rest[name_begin - 1] != '.') {
      --name_begin;
    }
    std::string name = snake_case(rest.substr(name_begin, at - name_begin));
    auto value = parse_double_prefix(rest.substr(at + kSize.size()));
    if (!name.empty() && value) e.components_gb[name] = *value;
    pos = at + kSize.size();
  }
  ParsedLine out;
  out.kind = LogLineKind::memory_estimate;
  out.payload = std::move(e);
  return out;
}

// The last line of a Python traceback is "<ExceptionName>: <message>" (or the bare name) at the
// start of the line; the frames above it are indented. Only the built-in exceptions that say the
// code or its environment is wrong count: a retry of the same code fails the same way.
bool is_code_error_exception_line(std::string_view msg) {
  static constexpr std::array<std::string_view, 8> kNames = {
      "ImportError", "ModuleNotFoundError", "SyntaxError",    "IndentationError",
      "TabError",    "TypeError",           "AttributeError", "NameError"};
  for (std::string_view name : kNames) {
    if (msg.substr(0, name.size()) != name) continue;
    const std::string_view rest = msg.substr(name.size());
    if (rest.empty() || rest.front() == ':') return true;
  }
  return false;
}

std::optional<FailureSignature> detect_signature(std::string_view msg) {
  // Ordered by how decisive they are; the first match names the line.
  if (log_contains(msg, "Aborting training due to NaN loss")) return FailureSignature::nan_loss;
  if (log_contains(msg, "Failed to find assignment for logical_axis_index")) {
    return FailureSignature::mesh_unmappable;
  }
  if (log_contains(msg, "does not match the product of the") && log_contains(msg, "parallelism")) {
    return FailureSignature::mesh_product_mismatch;
  }
  // JAX's own words when the devices cannot be reshaped into the mesh (mesh_utils
  // create_device_mesh): "Number of devices 4 must equal the product of mesh_shape (2, 4)".
  if (log_contains(msg, "must equal the product of mesh_shape")) {
    return FailureSignature::mesh_product_mismatch;
  }
  if (log_contains(msg, "not in valid fields")) return FailureSignature::invalid_config_key;
  if (log_contains(msg, "Couldn't parse value from CLI or ENV")) {
    return FailureSignature::invalid_config_value;
  }
  if (log_contains(msg, "Ran out of memory in memory space hbm") ||
      log_contains(msg, "Out of memory while trying to allocate")) {
    return FailureSignature::hbm_oom;
  }
  // gRPC uses the same status for quotas and rate limits (GCS, Vertex); those are not HBM.
  if (log_contains(msg, "RESOURCE_EXHAUSTED") && !ci_contains(msg, "quota") &&
      !ci_contains(msg, "rate limit") && !ci_contains(msg, "ratelimit")) {
    return FailureSignature::hbm_oom;
  }
  if (log_contains(msg, "StopIteration")) return FailureSignature::data_exhausted;
  if (log_contains(msg, "Job is preempted")) return FailureSignature::preempted;
  if ((log_contains(msg, "TPU is already in use") ||
       (log_contains(msg, "already in use by process") && log_contains(msg, "TPU")))) {
    return FailureSignature::tpu_busy;
  }
  if (ci_contains(msg, "falling back to cpu")) return FailureSignature::cpu_fallback;
  if (is_code_error_exception_line(msg)) return FailureSignature::python_code_error;
  // The worker's own line (engine/worker/code_tree.h), never a training program's.
  if (msg.rfind("podium-worker: ", 0) == 0 && log_contains(msg, "code bundle unusable: "))
    return FailureSignature::code_bundle_unusable;
  return std::nullopt;
}

ParsedLine parse_message(std::string_view msg, int repeated) {
  ParsedLine out;
  if (auto step = find_step_line(msg)) {
    out = std::move(*step);
  } else if (auto config = parse_config_param(msg)) {
    out = std::move(*config);
  } else if (auto mem = parse_memstats(msg)) {
    out = std::move(*mem);
  } else if (auto params = parse_num_params(msg)) {
    out = std::move(*params);
  } else if (auto tflops = parse_tflops(msg)) {
    out = std::move(*tflops);
  } else if (auto estimate = parse_memory_estimate(msg)) {
    out = std::move(*estimate);
  } else if (auto signature = detect_signature(msg)) {
    out.kind = LogLineKind::failure_signature;
    out.payload = SignatureHit{*signature, std::string(utf8_prefix(msg, kExcerptBytes))};
  }
  out.repeated = repeated;
  return out;
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? number_or_null(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string_view to_string(LogLineKind kind) {
  switch (kind) {
    case LogLineKind::step:
      return "step";
    case LogLineKind::rampup_step:
      return "rampup_step";
    case LogLineKind::profiler:
      return "profiler";
    case LogLineKind::num_params:
      return "num_params";
    case LogLineKind::total_tflops:
      return "total_tflops";
    case LogLineKind::memory_estimate:
      return "memory_estimate";
    case LogLineKind::memstats:
      return "memstats";
    case LogLineKind::config_param:
      return "config_param";
    case LogLineKind::failure_signature:
      return "failure_signature";
    case LogLineKind::other:
      return "other";
  }
  return "other";
}

namespace {
constexpr std::array<std::pair<FailureSignature, std::string_view>, 12> kSignatureNames = {{
    {FailureSignature::hbm_oom, "hbm_oom"},
    {FailureSignature::mesh_unmappable, "mesh_unmappable"},
    {FailureSignature::mesh_product_mismatch, "mesh_product_mismatch"},
    {FailureSignature::invalid_config_key, "invalid_config_key"},
    {FailureSignature::invalid_config_value, "invalid_config_value"},
    {FailureSignature::data_exhausted, "data_exhausted"},
    {FailureSignature::nan_loss, "nan_loss"},
    {FailureSignature::preempted, "preempted"},
    {FailureSignature::tpu_busy, "tpu_busy"},
    {FailureSignature::cpu_fallback, "cpu_fallback"},
    {FailureSignature::python_code_error, "python_code_error"},
    {FailureSignature::code_bundle_unusable, "code_bundle_unusable"},
}};
}  // namespace

std::string_view to_string(FailureSignature signature) {
  for (const auto& [sig, name] : kSignatureNames) {
    if (sig == signature) return name;
  }
  return "unknown";
}

std::optional<FailureSignature> parse_failure_signature(std::string_view name) {
  for (const auto& [sig, sig_name] : kSignatureNames) {
    if (sig_name == name) return sig;
  }
  return std::nullopt;
}

bool is_warning_signature(FailureSignature signature) {
  return signature == FailureSignature::tpu_busy || signature == FailureSignature::cpu_fallback;
}

CleanLine clean_log_line(std::string_view line) noexcept {
  CleanLine out;
  try {
    // Invalid bytes become U+FFFD so that whatever the parser returns can be stored in PostgreSQL
    // text and serialised as JSON without an error.
    const std::string cleaned = sanitize_utf8(remove_ansi(line));
    std::string_view s = log_trim(cleaned);
    for (int pass = 0; pass < kMaxPrefixPasses; ++pass) {
      std::optional<std::string_view> next;
      if (!(next = strip_ray_prefix(s)) && !(next = strip_kubectl_prefix(s)) &&
          !(next = strip_rfc3339_prefix(s)) && !(next = strip_python_timestamp(s)) &&
          !(next = strip_glog_prefix(s)) && !(next = strip_level_logger_prefix(s))) {
        break;
      }
      s = log_trim(*next);
    }
    out.repeated = strip_repeated_suffix(s);
    out.message = std::string(s);
  } catch (...) {
    out = CleanLine{};
  }
  return out;
}

ParsedLine parse_maxtext_line(std::string_view line) noexcept {
  try {
    CleanLine clean = clean_log_line(line);
    return parse_message(clean.message, clean.repeated);
  } catch (...) {
    // Only allocation failure can get here; a line we cannot afford to parse is just `other`.
    return ParsedLine{};
  }
}

// ---------------------------------------------------------------------------------------------
// LogDigest

ParsedLine LogDigest::feed(std::string_view line) {
  ParsedLine parsed = parse_maxtext_line(line);
  add(parsed);
  return parsed;
}

void LogDigest::feed_text(std::string_view text) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    feed(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

void LogDigest::add(const ParsedLine& parsed) {
  ++lines_;
  switch (parsed.kind) {
    case LogLineKind::step:
    case LogLineKind::rampup_step: {
      const StepMetrics* m = parsed.step();
      if (m == nullptr) break;
      if (!steps_.insert_or_assign(m->step, *m).second) ++duplicate_step_lines_;
      break;
    }
    case LogLineKind::profiler:
      if (const StepMetrics* m = parsed.step()) profiler_steps_.push_back(m->step);
      break;
    case LogLineKind::num_params:
      if (const NumParams* p = parsed.num_params()) num_params_billion_ = p->billions;
      break;
    case LogLineKind::total_tflops:
      if (const TflopsInfo* t = parsed.tflops()) {
        if (t->tflops_per_device) tflops_.tflops_per_device = t->tflops_per_device;
        if (t->learnable_weight_percent) {
          tflops_.learnable_weight_percent = t->learnable_weight_percent;
        }
        if (t->attention_percent) tflops_.attention_percent = t->attention_percent;
      }
      break;
    case LogLineKind::memory_estimate:
      if (const MemoryEstimate* e = parsed.memory_estimate()) memory_estimate_ = *e;
      break;
    case LogLineKind::memstats:
      if (const MemstatsLine* m = parsed.memstats()) {
        if (!m->label.empty()) memstats_label_ = m->label;
        if (m->used_gib && m->limit_gib && std::isfinite(*m->used_gib) &&
            std::isfinite(*m->limit_gib) &&
            (!memstats_peak_ || *m->used_gib > memstats_peak_->used_gib)) {
          memstats_peak_ = MemstatsPeak{*m->used_gib, *m->limit_gib, m->device, memstats_label_};
        }
      }
      break;
    case LogLineKind::config_param:
      if (const ConfigParam* c = parsed.config_param()) config_params_[c->key] = c->value;
      break;
    case LogLineKind::failure_signature:
      if (const SignatureHit* hit = parsed.signature()) {
        auto it =
            std::find_if(signatures_.begin(), signatures_.end(),
                         [&](const SignatureSummary& s) { return s.signature == hit->signature; });
        if (it == signatures_.end()) {
          signatures_.push_back(SignatureSummary{hit->signature, 1, lines_, hit->excerpt});
        } else {
          ++it->count;
        }
      }
      break;
    case LogLineKind::other:
      break;
  }
}

std::set<FailureSignature> LogDigest::signatures_seen() const {
  std::set<FailureSignature> out;
  for (const auto& s : signatures_) out.insert(s.signature);
  return out;
}

bool LogDigest::saw(FailureSignature signature) const {
  return std::any_of(signatures_.begin(), signatures_.end(),
                     [&](const SignatureSummary& s) { return s.signature == signature; });
}

std::optional<std::int64_t> LogDigest::first_step() const {
  if (steps_.empty()) return std::nullopt;
  return steps_.begin()->first;
}

std::optional<std::int64_t> LogDigest::last_step() const {
  if (steps_.empty()) return std::nullopt;
  return steps_.rbegin()->first;
}

// ---------------------------------------------------------------------------------------------
// JSON

nlohmann::json to_json(const StepMetrics& m) {
  nlohmann::json j = {
      {"step", m.step},
      {"seconds", optional_number(m.seconds)},
      {"tflops_per_device", optional_number(m.tflops_per_device)},
      {"tokens_per_second_per_device", optional_number(m.tokens_per_second_per_device)},
      {"total_weights", optional_number(m.total_weights)},
      {"loss", optional_number(m.loss)},
      {"live_slice_count",
       m.live_slice_count ? nlohmann::json(*m.live_slice_count) : nlohmann::json(nullptr)},
      {"rampup", m.rampup},
      {"profiler_boundary", m.profiler_boundary},
  };
  nlohmann::json extra = nlohmann::json::object();
  for (const auto& [k, v] : m.extra) extra[k] = number_or_null(v);
  j["extra"] = std::move(extra);
  return j;
}

nlohmann::json to_json(const TflopsInfo& t) {
  return {{"tflops_per_device", optional_number(t.tflops_per_device)},
          {"learnable_weight_percent", optional_number(t.learnable_weight_percent)},
          {"attention_percent", optional_number(t.attention_percent)}};
}

nlohmann::json to_json(const MemoryEstimate& e) {
  nlohmann::json components = nlohmann::json::object();
  for (const auto& [k, v] : e.components_gb) components[k] = number_or_null(v);
  return {{"total_gb", optional_number(e.total_gb)}, {"components_gb", std::move(components)}};
}

nlohmann::json to_json(const MemstatsPeak& p) {
  return {{"used_gib", number_or_null(p.used_gib)},
          {"limit_gib", number_or_null(p.limit_gib)},
          {"device", p.device},
          {"label", p.label}};
}

nlohmann::json to_json(const ParsedLine& line) {
  nlohmann::json j = {{"kind", std::string(to_string(line.kind))}};
  if (line.repeated > 0) j["repeated"] = line.repeated;
  if (const StepMetrics* m = line.step()) j["step"] = to_json(*m);
  if (const NumParams* p = line.num_params()) j["num_params_billion"] = number_or_null(p->billions);
  if (const TflopsInfo* t = line.tflops()) j["tflops"] = to_json(*t);
  if (const MemoryEstimate* e = line.memory_estimate()) j["memory_estimate"] = to_json(*e);
  if (const MemstatsLine* m = line.memstats()) {
    j["memstats"] = {{"label", m->label},
                     {"used_gib", optional_number(m->used_gib)},
                     {"limit_gib", optional_number(m->limit_gib)},
                     {"percent", optional_number(m->percent)},
                     {"device", m->device}};
  }
  if (const ConfigParam* c = line.config_param()) {
    j["config_param"] = {{"key", c->key}, {"value", c->value}};
  }
  if (const SignatureHit* s = line.signature()) {
    j["signature"] = {{"signature", std::string(to_string(s->signature))},
                      {"warning", is_warning_signature(s->signature)},
                      {"excerpt", s->excerpt}};
  }
  return j;
}

nlohmann::json to_json(const LogDigest& d) {
  nlohmann::json signatures = nlohmann::json::array();
  for (const auto& s : d.signatures()) {
    signatures.push_back({{"signature", std::string(to_string(s.signature))},
                          {"warning", is_warning_signature(s.signature)},
                          {"count", s.count},
                          {"first_line", s.first_line},
                          {"excerpt", s.first_excerpt}});
  }
  auto first = d.first_step();
  auto last = d.last_step();
  return {
      {"lines", d.lines()},
      {"steps",
       {{"count", d.steps().size()},
        {"first", first ? nlohmann::json(*first) : nlohmann::json(nullptr)},
        {"last", last ? nlohmann::json(*last) : nlohmann::json(nullptr)},
        {"duplicate_lines", d.duplicate_step_lines()}}},
      {"profiler_steps", d.profiler_steps()},
      {"num_params_billion", optional_number(d.num_params_billion())},
      {"tflops_per_step", to_json(d.tflops_per_step())},
      {"memstats_peak", d.memstats_peak() ? to_json(*d.memstats_peak()) : nlohmann::json(nullptr)},
      {"memory_estimate",
       d.memory_estimate() ? to_json(*d.memory_estimate()) : nlohmann::json(nullptr)},
      {"config_params", d.config_params()},
      {"signatures", std::move(signatures)},
  };
}

}  // namespace podium::core
