#pragma once
// Rank 0's MaxText step lines stored once, as their metrics rows (migration 0019,
// engine/core/logs/step_line_text.h): which lines qualify, how a page of the log reads their text
// back, and how a row gives its text back to log_lines when its figures are about to change.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/db/database.h"
#include "engine/core/logs/maxtext_log.h"

namespace podium::ingest {

// A figure as the metrics table keeps it: NULL (nullopt) unless finite.
std::optional<double> finite_figure(const std::optional<double>& v);

// The prefix to store when `text` (as stored: storable_line) is exactly MaxText's step line of
// `m` with the figures the metrics row will hold; nullopt when the text must be kept as text.
std::optional<std::string> compact_step_prefix(const std::string& text, const core::StepMetrics& m);

// Columns of `metrics m` a reader selects to rebuild a line with rebuilt_step_line().
inline constexpr const char* kRebuiltLineColumns =
    "m.step AS m_step, m.step_seconds AS m_seconds, m.tflops_per_device AS m_tflops, "
    "m.tokens_per_second_per_device AS m_tokens, m.total_weights AS m_weights, m.loss AS "
    "m_loss, m.log_prefix AS m_prefix";

// The text of row `i` of a result that selected kRebuiltLineColumns (its m_step not NULL).
std::string rebuilt_step_line(const db::Result& r, size_t i);

// Before the figures of these steps' rows change, their stored-once lines go back to log_lines
// as text (same seq, same arrival id), so no line of the log changes.
void keep_step_lines_as_text(db::Transaction& tx, const std::string& run_id,
                             const std::string& attempt_id, int attempt_number,
                             const std::vector<std::int64_t>& steps);

}  // namespace podium::ingest
