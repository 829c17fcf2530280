#pragma once
// The lines of one (attempt, rank) between the pipe and the server's acknowledgement.
//
// append() numbers each line (0, 1, 2, … across stdout and stderr), writes it to the rank's local
// copy (logs/<attempt>/rank-<r>.log, kept) and to spool segment files (spool/, deleted once every
// line in them was acknowledged). The uploader takes batches from the front in seq order
// (peek_batch) and acknowledges them (ack) only when the server stored them, so a failed upload
// is retried with the same seq and nothing is lost or sent out of order.
//
// Unacknowledged lines count against a SpoolBudget shared by all ranks of the agent
// (--spool-max-bytes). When it is full, append() refuses and the reader stops reading the pipe
// (backpressure on the process) rather than dropping lines.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/worker/clock.h"

namespace podium::worker {

class SpoolBudget {
 public:
  explicit SpoolBudget(uint64_t max_bytes) : max_(max_bytes) {}
  // Takes `bytes` if they fit. An empty budget always accepts one line, so a single line larger
  // than the bound still gets through.
  bool try_acquire(uint64_t bytes);
  void release(uint64_t bytes);
  // Waits until `bytes` would fit or `timeout` passed.
  void wait_for_room(uint64_t bytes, std::chrono::milliseconds timeout);
  uint64_t used() const;
  uint64_t max() const { return max_; }

 private:
  const uint64_t max_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t used_ = 0;
};

struct LogBatch {
  uint64_t seq = 0;
  std::vector<std::string> lines;
  uint64_t bytes = 0;  // spool bytes of these lines (each line + '\n')
};

struct SpoolOptions {
  size_t batch_lines = 500;                   // a batch is due at this many lines …
  std::chrono::milliseconds batch_age{1000};  // … or when its first line is this old
  uint64_t batch_bytes = 1024 * 1024;         // one request carries at most this much text
  uint64_t segment_bytes = 4 * 1024 * 1024;   // spool file size before starting a new one
};

class LogSpool {
 public:
  // `local_copy`: the rank's kept log file (truncated); `spool_dir`: where segments go, named
  // `<spool_prefix>.<first seq>.seg`. Throws std::runtime_error when either cannot be created.
  LogSpool(std::filesystem::path local_copy, std::filesystem::path spool_dir,
           std::string spool_prefix, SpoolBudget& budget, const Clock& clock,
           SpoolOptions options = {});
  ~LogSpool();
  LogSpool(const LogSpool&) = delete;
  LogSpool& operator=(const LogSpool&) = delete;

  // Writer side (the rank's reader thread). false: no room in the budget (or the spool could not
  // be written); nothing was numbered, try again later.
  bool try_append(const std::string& line);
  // No more lines will come (the process's output ended).
  void close();

  // Uploader side. True when a batch should be sent now: batch_lines waiting, the oldest waiting
  // line older than batch_age, or closed with lines waiting.
  bool batch_due(TimePoint now) const;
  // The first unacknowledged lines (at most batch_lines / batch_bytes, at least one line when
  // any is waiting and max_lines > 0), read back from the spool. Empty when nothing waits.
  LogBatch peek_batch(size_t max_lines);
  // The server stored `batch` (the last one peeked): forget it, free its budget and any spool
  // segment it emptied.
  void ack(const LogBatch& batch);

  // Waits until a batch is due, everything is drained, or `timeout` passed.
  void wait(std::chrono::milliseconds timeout);
  void notify();
  // Waits (at most `timeout`) until closed and every line acknowledged.
  bool wait_drained(std::chrono::milliseconds timeout);

  uint64_t next_seq() const;   // number the next line gets = lines appended so far
  uint64_t acked_seq() const;  // lines acknowledged so far
  bool closed() const;
  bool drained() const;  // closed and every line acknowledged
  std::vector<std::filesystem::path> segment_files() const;

 private:
  struct Segment {
    std::filesystem::path path;
    uint64_t first_seq = 0;
    uint64_t lines = 0;
    uint64_t bytes = 0;
  };
  bool due_locked(TimePoint now) const;
  bool write_locked(const std::string& data);
  void drop_consumed_locked();

  std::filesystem::path spool_dir_;
  std::string prefix_;
  SpoolBudget& budget_;
  const Clock& clock_;
  SpoolOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  int local_fd_ = -1;
  int segment_fd_ = -1;  // write end of segments_.back()
  std::deque<Segment> segments_;
  uint64_t next_seq_ = 0;
  uint64_t acked_seq_ = 0;
  uint64_t read_offset_ = 0;  // byte offset of line acked_seq_ in segments_.front()
  std::optional<TimePoint> oldest_waiting_;
  bool closed_ = false;
  bool write_failed_logged_ = false;
};

}  // namespace podium::worker
