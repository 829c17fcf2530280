// MaxText (and XLA, Orbax, the reference workload) log lines as ingestion reads them: each line,
// a whole log through the HBM tracker, and the checkpoint-line reader.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/core/logs/checkpoint_lines.h"
#include "engine/core/logs/maxtext_log.h"
#include "engine/core/plan/hbm_peak.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  podium::core::HbmPeakTracker tracker;
  tracker.feed_text(text);
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    const auto line = text.substr(start, nl - start);
    (void)podium::core::parse_maxtext_line(line);
    (void)podium::core::parse_checkpoint_line(podium::core::clean_log_line(line).message);
    start = nl + 1;
  }
  return 0;
}
