#pragma once
// Data sufficiency: does the dataset hold enough tokens for the requested steps, and if not, at
// which step does the data iterator raise StopIteration (domain brief §3). Pure arithmetic.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace podium::core {

// Default bytes per token when only the byte size of a dataset is known.
// Text through a subword tokenizer (SentencePiece/tiktoken on English web text) averages about
// 4 bytes per token; the reference workload tokenizes bytes, so 1.
inline constexpr double kDefaultBytesPerTokenText = 4.0;
inline constexpr double kDefaultBytesPerTokenByteLevel = 1.0;

// What is known about a dataset (the datasets resource). All optional.
struct DatasetFacts {
  std::string format;  // "jsonl", "text", "arrayrecord", "tfrecord", "synthetic"
  std::optional<double> records;
  std::optional<double> bytes;
  std::optional<double> tokens;
  std::optional<double> tokens_per_record;
};

struct DataPlanInput {
  std::int64_t steps = 0;
  std::int64_t devices = 0;  // all devices of all slices
  double per_device_batch_size = 1;
  int max_target_length = 0;
  int gradient_accumulation_steps = 1;
  std::optional<DatasetFacts> dataset;  // none: synthetic data, never runs out
  bool byte_level_tokenizer = false;    // reference workload
  // Tokens a sequence consumes beyond max_target_length. The reference workload reads
  // max_target_length + 1 bytes per sequence (inputs plus the shifted target), without overlap
  // (engine/workloads/reference/README.md "Data"), so 1 there; MaxText packs, so 0.
  int extra_tokens_per_sequence = 0;
  std::optional<double> bytes_per_token;  // overrides the default above
};

struct DataPlan {
  double tokens_per_step = 0;  // devices x per_device_batch_size x max_target_length x GA
  // Tokens read from the dataset per step: tokens_per_step plus the extra per sequence.
  double tokens_consumed_per_step = 0;
  double tokens_needed = 0;  // steps x tokens_consumed_per_step
  std::optional<double> tokens_available;
  // How tokens_available was obtained: "tokens", "records", "bytes", "synthetic", "unknown".
  std::string tokens_available_basis = "unknown";
  double bytes_per_token = 0;  // used when the basis is "bytes"
  // 0-based index of the first step that cannot be fed (MaxText's "completed step: N" counts
  // from 0, so steps 0..N-1 complete); nullopt when the data lasts all steps or is unknown.
  std::optional<std::int64_t> exhausted_at_step;
  std::optional<double> records_needed;  // when tokens per record is known
  bool exhausted = false;
  std::string message;  // set when exhausted
  std::string hint;     // set when exhausted
};

DataPlan plan_data(const DataPlanInput& input);

// {"tokens_per_step","tokens_needed","tokens_available","tokens_available_basis",
//  "exhausted_at_step","records_needed", ...}
nlohmann::json to_json(const DataPlan& plan);

}  // namespace podium::core
