#include "engine/worker/log_spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "engine/worker/logging.h"

namespace podium::worker {

namespace {

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool SpoolBudget::try_acquire(uint64_t bytes) {
  std::lock_guard lock(mu_);
  if (used_ != 0 && used_ + bytes > max_) return false;
  used_ += bytes;
  return true;
}

void SpoolBudget::release(uint64_t bytes) {
  {
    std::lock_guard lock(mu_);
    used_ = bytes > used_ ? 0 : used_ - bytes;
  }
  cv_.notify_all();
}

void SpoolBudget::wait_for_room(uint64_t bytes, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return used_ == 0 || used_ + bytes <= max_; });
}

uint64_t SpoolBudget::used() const {
  std::lock_guard lock(mu_);
  return used_;
}

LogSpool::LogSpool(std::filesystem::path local_copy, std::filesystem::path spool_dir,
                   std::string spool_prefix, SpoolBudget& budget, const Clock& clock,
                   SpoolOptions options)
    : spool_dir_(std::move(spool_dir)),
      prefix_(std::move(spool_prefix)),
      budget_(budget),
      clock_(clock),
      options_(options) {
  std::error_code ec;
  std::filesystem::create_directories(local_copy.parent_path(), ec);
  std::filesystem::create_directories(spool_dir_, ec);
  local_fd_ = ::open(local_copy.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (local_fd_ < 0) {
    throw std::runtime_error("cannot create " + local_copy.string() + ": " + std::strerror(errno));
  }
  if (!std::filesystem::is_directory(spool_dir_)) {
    ::close(local_fd_);
    throw std::runtime_error("cannot create " + spool_dir_.string() + ": " +
                             (ec ? ec.message() : "not a directory"));
  }
}

LogSpool::~LogSpool() {
  if (local_fd_ >= 0) ::close(local_fd_);
  if (segment_fd_ >= 0) ::close(segment_fd_);
  // Unacknowledged lines stay counted until the spool goes away; their files stay on disk.
  uint64_t unacked = 0;
  for (const auto& s : segments_) unacked += s.bytes;
  budget_.release(unacked > read_offset_ ? unacked - read_offset_ : 0);
}

bool LogSpool::write_locked(const std::string& data) {
  if (segments_.empty() || segments_.back().bytes >= options_.segment_bytes) {
    Segment s;
    s.first_seq = next_seq_;
    s.path = spool_dir_ / (prefix_ + "." + std::to_string(next_seq_) + ".seg");
    const int fd = ::open(s.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (!write_failed_logged_) {
        log().error("cannot create spool file {}: {}", s.path.string(), std::strerror(errno));
        write_failed_logged_ = true;
      }
      return false;
    }
    if (segment_fd_ >= 0) ::close(segment_fd_);
    segment_fd_ = fd;
    segments_.push_back(std::move(s));
    drop_consumed_locked();
  }
  Segment& seg = segments_.back();
  if (!write_all(segment_fd_, data.data(), data.size())) {
    if (!write_failed_logged_) {
      log().error("cannot write spool file {}: {}; reading the process's output pauses",
                  seg.path.string(), std::strerror(errno));
      write_failed_logged_ = true;
    }
    // Leave no partial record behind.
    [[maybe_unused]] int r = ::ftruncate(segment_fd_, static_cast<off_t>(seg.bytes));
    return false;
  }
  write_failed_logged_ = false;
  seg.lines += 1;
  seg.bytes += data.size();
  return true;
}

bool LogSpool::try_append(const std::string& line) {
  std::string data = line;
  data.push_back('\n');
  {
    std::lock_guard lock(mu_);
    if (!budget_.try_acquire(data.size())) return false;
    if (!write_locked(data)) {
      budget_.release(data.size());
      return false;
    }
    if (local_fd_ >= 0 && !write_all(local_fd_, data.data(), data.size())) {
      log().error("cannot write the local log copy: {}", std::strerror(errno));
      ::close(local_fd_);
      local_fd_ = -1;
    }
    next_seq_ += 1;
    if (!oldest_waiting_) oldest_waiting_ = clock_.now();
  }
  cv_.notify_all();
  return true;
}

void LogSpool::close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    if (local_fd_ >= 0) ::close(local_fd_);
    local_fd_ = -1;
    drop_consumed_locked();
  }
  cv_.notify_all();
}

bool LogSpool::due_locked(TimePoint now) const {
  const uint64_t waiting = next_seq_ - acked_seq_;
  if (waiting == 0) return false;
  if (closed_ || waiting >= options_.batch_lines) return true;
  return oldest_waiting_ && now - *oldest_waiting_ >= options_.batch_age;
}

bool LogSpool::batch_due(TimePoint now) const {
  std::lock_guard lock(mu_);
  return due_locked(now);
}

LogBatch LogSpool::peek_batch(size_t max_lines) {
  std::lock_guard lock(mu_);
  LogBatch batch;
  batch.seq = acked_seq_;
  uint64_t want =
      std::min<uint64_t>(next_seq_ - acked_seq_, std::min(max_lines, options_.batch_lines));
  uint64_t seq = acked_seq_;
  uint64_t offset = read_offset_;
  for (const Segment& seg : segments_) {
    if (want == 0) break;
    const uint64_t end = seg.first_seq + seg.lines;
    if (seq >= end) {
      offset = 0;
      continue;
    }
    std::ifstream in(seg.path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    std::string line;
    while (want > 0 && seq < end && std::getline(in, line)) {
      const uint64_t bytes = line.size() + 1;
      if (!batch.lines.empty() && batch.bytes + bytes > options_.batch_bytes) {
        want = 0;
        break;
      }
      batch.bytes += bytes;
      batch.lines.push_back(std::move(line));
      ++seq;
      --want;
    }
    if (want > 0 && seq < end) {
      // The file is shorter than what was written to it: someone removed or truncated it.
      log().error("spool file {} is damaged; lines from {} on are lost", seg.path.string(), seq);
      break;
    }
    offset = 0;
  }
  return batch;
}

void LogSpool::ack(const LogBatch& batch) {
  {
    std::lock_guard lock(mu_);
    if (batch.seq != acked_seq_ || batch.lines.empty()) return;
    for (const auto& line : batch.lines) {
      read_offset_ += line.size() + 1;
      acked_seq_ += 1;
      if (segments_.size() > 1 &&
          acked_seq_ == segments_.front().first_seq + segments_.front().lines) {
        std::error_code ec;
        std::filesystem::remove(segments_.front().path, ec);
        segments_.pop_front();
        read_offset_ = 0;
      }
    }
    drop_consumed_locked();
    budget_.release(batch.bytes);
    if (acked_seq_ == next_seq_)
      oldest_waiting_.reset();
    else
      oldest_waiting_ = clock_.now();
  }
  cv_.notify_all();
}

void LogSpool::drop_consumed_locked() {
  // Delete fully acknowledged segments the writer no longer appends to.
  while (!segments_.empty()) {
    const Segment& front = segments_.front();
    const bool consumed = acked_seq_ >= front.first_seq + front.lines;
    const bool writing = segments_.size() == 1 && !closed_;
    if (!consumed || writing) break;
    if (segments_.size() == 1 && segment_fd_ >= 0) {
      ::close(segment_fd_);
      segment_fd_ = -1;
    }
    std::error_code ec;
    std::filesystem::remove(front.path, ec);
    segments_.pop_front();
    read_offset_ = 0;
  }
}

void LogSpool::wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  const TimePoint now = clock_.now();
  if (oldest_waiting_ && next_seq_ > acked_seq_) {
    const auto until_due = std::chrono::duration_cast<std::chrono::milliseconds>(
        *oldest_waiting_ + options_.batch_age - now);
    timeout = std::max(std::chrono::milliseconds(0), std::min(timeout, until_due));
  }
  cv_.wait_for(lock, timeout,
               [&] { return due_locked(clock_.now()) || (closed_ && acked_seq_ == next_seq_); });
}

void LogSpool::notify() {
  cv_.notify_all();
}

bool LogSpool::wait_drained(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return closed_ && acked_seq_ == next_seq_; });
}

uint64_t LogSpool::next_seq() const {
  std::lock_guard lock(mu_);
  return next_seq_;
}

uint64_t LogSpool::acked_seq() const {
  std::lock_guard lock(mu_);
  return acked_seq_;
}

bool LogSpool::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

bool LogSpool::drained() const {
  std::lock_guard lock(mu_);
  return closed_ && acked_seq_ == next_seq_;
}

std::vector<std::filesystem::path> LogSpool::segment_files() const {
  std::lock_guard lock(mu_);
  std::vector<std::filesystem::path> out;
  for (const auto& s : segments_) out.push_back(s.path);
  return out;
}

}  // namespace podium::worker
