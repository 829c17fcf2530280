#include "engine/core/plan/data_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace podium::core {

namespace {

std::string format_count(double v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.0f", v);
  // Thousands separators make token counts readable ("262,144").
  std::string digits = buf;
  std::string out;
  const size_t start = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    out += digits[i];
    const size_t rest = digits.size() - i - 1;
    if (i >= start && rest > 0 && rest % 3 == 0) out += ',';
  }
  return out;
}

}  // namespace

DataPlan plan_data(const DataPlanInput& in) {
  DataPlan p;
  p.tokens_per_step = static_cast<double>(in.devices) * in.per_device_batch_size *
                      in.max_target_length * std::max(1, in.gradient_accumulation_steps);
  p.tokens_consumed_per_step = static_cast<double>(in.devices) * in.per_device_batch_size *
                               (in.max_target_length + std::max(0, in.extra_tokens_per_sequence)) *
                               std::max(1, in.gradient_accumulation_steps);
  p.tokens_needed =
      p.tokens_consumed_per_step * static_cast<double>(std::max<std::int64_t>(0, in.steps));
  p.bytes_per_token = in.bytes_per_token.value_or(
      in.byte_level_tokenizer ? kDefaultBytesPerTokenByteLevel : kDefaultBytesPerTokenText);

  if (!in.dataset || in.dataset->format == "synthetic") {
    p.tokens_available_basis = "synthetic";
    return p;
  }
  // Facts come from users and file scans: a negative or non-finite figure counts as unknown.
  DatasetFacts d = *in.dataset;
  for (std::optional<double>* fact : {&d.records, &d.bytes, &d.tokens, &d.tokens_per_record}) {
    if (*fact && (!std::isfinite(**fact) || **fact < 0)) fact->reset();
  }
  // Tokens per record, when it can be known: given, or derived from tokens / records.
  std::optional<double> tokens_per_record = d.tokens_per_record;
  if (!tokens_per_record && d.tokens && d.records && *d.records > 0) {
    tokens_per_record = *d.tokens / *d.records;
  }
  if (d.tokens) {
    p.tokens_available = *d.tokens;
    p.tokens_available_basis = "tokens";
  } else if (d.records && tokens_per_record) {
    p.tokens_available = *d.records * *tokens_per_record;
    p.tokens_available_basis = "records";
  } else if (d.bytes && p.bytes_per_token > 0) {
    p.tokens_available = *d.bytes / p.bytes_per_token;
    p.tokens_available_basis = "bytes";
    if (d.records && *d.records > 0) tokens_per_record = *p.tokens_available / *d.records;
  }
  if (tokens_per_record && *tokens_per_record > 0) {
    p.records_needed = std::ceil(p.tokens_needed / *tokens_per_record);
  }
  if (!p.tokens_available || p.tokens_consumed_per_step <= 0) return p;

  // With packing (MaxText's default) every token of the dataset fills the batch, so the number
  // of full steps is the floor of available / per step. One epoch (num_epoch: 1).
  const double full_steps = std::floor(*p.tokens_available / p.tokens_consumed_per_step);
  if (full_steps < static_cast<double>(in.steps)) {
    p.exhausted = true;
    p.exhausted_at_step = static_cast<std::int64_t>(full_steps);
    // Say what a step reads: with a next-token target (+1 per sequence) that is more than the
    // tokens it trains on, which is what "tokens per step" means elsewhere in the plan.
    const std::string per_step =
        p.tokens_consumed_per_step == p.tokens_per_step
            ? format_count(p.tokens_per_step) + " tokens per step"
            : format_count(p.tokens_consumed_per_step) + " tokens read per step (" +
                  format_count(p.tokens_per_step) + " trained + " +
                  format_count(p.tokens_consumed_per_step - p.tokens_per_step) +
                  " next-token targets)";
    p.message = "dataset holds " + format_count(*p.tokens_available) + " tokens (" +
                p.tokens_available_basis + "), " + per_step + ": data runs out at step " +
                format_count(full_steps) + " of " + format_count(static_cast<double>(in.steps)) +
                " (StopIteration)";
    p.hint = "needs " + format_count(p.tokens_needed) + " tokens";
    if (p.records_needed) {
      p.hint += " = " + format_count(*p.records_needed) + " records of " +
                format_count(p.tokens_needed / *p.records_needed) + " tokens";
      if (d.records) p.hint += " (has " + format_count(*d.records) + ")";
    }
    p.hint += "; or set steps <= " + format_count(full_steps) +
              ", or lower per_device_batch_size / max_target_length";
  }
  return p;
}

nlohmann::json to_json(const DataPlan& p) {
  using nlohmann::json;
  return {{"tokens_per_step", p.tokens_per_step},
          {"tokens_consumed_per_step", p.tokens_consumed_per_step},
          {"tokens_needed", p.tokens_needed},
          {"tokens_available", p.tokens_available ? json(*p.tokens_available) : json(nullptr)},
          {"tokens_available_basis", p.tokens_available_basis},
          {"bytes_per_token",
           p.tokens_available_basis == "bytes" ? json(p.bytes_per_token) : json(nullptr)},
          {"exhausted_at_step", p.exhausted_at_step ? json(*p.exhausted_at_step) : json(nullptr)},
          {"records_needed", p.records_needed ? json(*p.records_needed) : json(nullptr)},
          {"exhausted", p.exhausted}};
}

}  // namespace podium::core
