#pragma once
// Counts records and bytes of a local dataset file by streaming it (never loaded whole).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace podium::api {

struct DatasetScan {
  std::optional<std::string> error;  // "not a regular file", "cannot read: ..."
  int64_t bytes = 0;
  std::optional<int64_t> records;  // nullopt when the format cannot be counted or time ran out
  bool truncated = false;          // the deadline passed before the end of the file
};

// Local path from a dataset URI: "file:///data/x.jsonl" or "/data/x.jsonl"; nullopt for remote
// URIs.
std::optional<std::string> local_path(const std::string& uri);

// jsonl/text: non-empty lines; tfrecord: length-prefixed records; other formats: bytes only.
DatasetScan scan_dataset(const std::string& path, const std::string& format,
                         std::chrono::milliseconds budget);

}  // namespace podium::api
