#include "engine/core/plan/hbm_peak.h"

#include "engine/core/text/ascii.h"

#include <cctype>
#include <charconv>

namespace podium::core {

namespace {

// The number and unit that start `s` ("214.45G of ..."), or nullopt.
std::optional<double> size_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return parse_hbm_size(s.substr(i));
}

}  // namespace

int hbm_source_trust(std::string_view source) {
  if (source == "oom_required") return 4;
  if (source == "compiler_total") return 3;
  if (source == "memstats_after_step") return 2;
  if (source == "memstats") return 1;
  return 0;
}

std::optional<double> parse_hbm_size(std::string_view text) {
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
    ++end;
  if (end == 0) return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, value);
  if (ec != std::errc() || ptr != text.data() + end || !(value >= 0)) return std::nullopt;
  size_t u = end;
  while (u < text.size() && text[u] == ' ') ++u;
  if (u >= text.size()) return std::nullopt;
  switch (std::toupper(static_cast<unsigned char>(text[u]))) {
    case 'T':
      return value * 1024;
    case 'G':
      return value;
    case 'M':
      return value / 1024;
    case 'K':
      return value / (1024 * 1024);
    case 'B':
      return value / (1024.0 * 1024 * 1024);
    default:
      return std::nullopt;
  }
}

std::optional<HbmFigure> parse_oom_requirement(std::string_view message) {
  // "Ran out of memory in memory space hbm. Used 112.90G of 94.75G hbm. Exceeded hbm capacity
  // by 18.15G." (XLA:TPU, at compile or run time; also "... space HBM ...").
  const std::string m = ascii_lower(message);
  const auto space = m.find("ran out of memory in memory space hbm");
  if (space != std::string::npos) {
    const auto used = m.find("used ", space);
    if (used != std::string::npos) {
      if (auto gib = size_at(std::string_view(message).substr(used + 5))) {
        HbmFigure f{*gib, std::nullopt, "oom_required", "", ""};
        const auto of = m.find(" of ", used);
        if (of != std::string::npos)
          f.limit_gib = size_at(std::string_view(message).substr(of + 4));
        return f;
      }
    }
  }
  // libtpu's wording at compile time (0.0.4x): "RESOURCE_EXHAUSTED: Ran out of memory on HBM,
  // the total memory required for HLO temporaries (20.66G) exceeds available HBM (15.75G)."
  const auto on_hbm = m.find("ran out of memory on hbm");
  if (on_hbm != std::string::npos) {
    const auto required = m.find("required for", on_hbm);
    const auto open = required == std::string::npos ? required : m.find('(', required);
    if (open != std::string::npos) {
      if (auto gib = size_at(std::string_view(message).substr(open + 1))) {
        HbmFigure f{*gib, std::nullopt, "oom_required", "", ""};
        const auto available = m.find("available hbm (", open);
        if (available != std::string::npos)
          f.limit_gib = size_at(std::string_view(message).substr(available + 15));
        return f;
      }
    }
  }
  // The breakdown that follows: "Total hbm usage >= 114.90G:".
  const auto total = m.find("total hbm usage >=");
  if (total != std::string::npos) {
    if (auto gib = size_at(std::string_view(message).substr(total + 18)))
      return HbmFigure{*gib, std::nullopt, "oom_required", "", ""};
  }
  return std::nullopt;
}

std::string memstats_source(std::string_view label) {
  const std::string l = ascii_lower(label);
  if (l.find("param") != std::string::npos && l.find("init") != std::string::npos)
    return "params_only";
  if (l.find("step") != std::string::npos || l.find("train") != std::string::npos)
    return "memstats_after_step";
  return "memstats";
}

void HbmPeakTracker::offer(HbmFigure f) {
  if (!(f.gib > 0)) return;
  if (f.source == "params_only") {
    if (!params_ || f.gib > params_->gib) params_ = std::move(f);
    return;
  }
  if (!peak_) {
    peak_ = std::move(f);
    return;
  }
  const int a = hbm_source_trust(f.source);
  const int b = hbm_source_trust(peak_->source);
  if (a > b || (a == b && f.gib > peak_->gib)) peak_ = std::move(f);
}

void HbmPeakTracker::feed(std::string_view raw_line, const ParsedLine& parsed) {
  if (const MemstatsLine* ms = parsed.memstats()) {
    if (!ms->label.empty()) label_ = ms->label;
    if (ms->used_gib) {
      offer({*ms->used_gib, ms->limit_gib, memstats_source(label_), label_, ms->device});
    }
    return;
  }
  if (const MemoryEstimate* e = parsed.memory_estimate()) {
    if (e->total_gb) offer({*e->total_gb, std::nullopt, "compiler_total", "", ""});
    return;
  }
  // Cheap test first: the OOM messages all name the memory space.
  if (raw_line.find("hbm") == std::string_view::npos &&
      raw_line.find("HBM") == std::string_view::npos)
    return;
  if (auto f = parse_oom_requirement(clean_log_line(raw_line).message)) offer(std::move(*f));
}

void HbmPeakTracker::feed_text(std::string_view text) {
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    feed(line, parse_maxtext_line(line));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

nlohmann::json to_json(const HbmFigure& f) {
  return {{"used_gib", f.gib},
          {"limit_gib", f.limit_gib ? nlohmann::json(*f.limit_gib) : nlohmann::json(nullptr)},
          {"device", f.device},
          {"label", f.label},
          {"source", f.source}};
}

}  // namespace podium::core
