#include "backend/api/run_read_batch.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "backend/api/run_view.h"

namespace podium::api {

std::string text_array_literal(const std::vector<std::string>& ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : ids[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

RunReadBatcher::RunReadBatcher(db::Database& db, int queries_at_once, size_t max_batch)
    : db_(db),
      queries_at_once_(std::max(1, queries_at_once)),
      max_batch_(std::max<size_t>(1, max_batch)),
      sql_(run_select() + "WHERE r.id = ANY($1::text[])") {}

RunReadBatcher::~RunReadBatcher() {
  stop();
}

void RunReadBatcher::start(Wake wake) {
  wake_ = std::move(wake);
  for (int i = 0; i < queries_at_once_; ++i) threads_.emplace_back([this] { loop(); });
}

void RunReadBatcher::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
  // Reads that no batch took (queued as the threads ended, or submitted after): answered, so
  // their requests end now rather than at their wait's timeout.
  std::vector<std::shared_ptr<Read>> left;
  {
    std::lock_guard lock(mu_);
    left.assign(pending_.begin(), pending_.end());
    pending_.clear();
  }
  if (left.empty()) return;
  const auto error = std::make_exception_ptr(
      db::DbError(db::DbError::Kind::unavailable, "", "the server is shutting down"));
  for (auto& read : left) {
    read->error = error;
    read->done.store(true, std::memory_order_release);
    if (wake_) wake_(kChannel, read->key);
  }
}

std::shared_ptr<RunReadBatcher::Read> RunReadBatcher::submit(std::string id) {
  std::shared_ptr<Read> read;
  bool queued = false;
  {
    std::lock_guard lock(mu_);
    read = std::make_shared<Read>(std::move(id), std::to_string(++serial_));
    if (!stopping_) {
      pending_.push_back(read);
      queued = true;
    }
  }
  if (queued) {
    cv_.notify_one();
  } else {
    read->error = std::make_exception_ptr(
        db::DbError(db::DbError::Kind::unavailable, "", "the server is shutting down"));
    read->done.store(true, std::memory_order_release);
  }
  return read;
}

void RunReadBatcher::loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
    if (stopping_) return;
    // Every read queued now, up to max_batch_: each arrived before this batch's query starts.
    const size_t n = std::min(pending_.size(), max_batch_);
    std::vector<std::shared_ptr<Read>> batch(pending_.begin(),
                                             pending_.begin() + static_cast<ptrdiff_t>(n));
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(n));
    lock.unlock();
    answer(batch);
    lock.lock();
  }
}

void RunReadBatcher::answer(const std::vector<std::shared_ptr<Read>>& batch) {
  std::vector<std::string> ids;
  ids.reserve(batch.size());
  for (const auto& read : batch) ids.push_back(read->id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  try {
    auto rows = std::make_shared<const db::Result>(db_.exec_alone(sql_, {text_array_literal(ids)}));
    std::unordered_map<std::string, int> by_id;
    by_id.reserve(rows->size());
    for (size_t i = 0; i < rows->size(); ++i) by_id.emplace(rows->at(i, "id"), static_cast<int>(i));
    for (const auto& read : batch) {
      read->rows = rows;
      if (auto it = by_id.find(read->id); it != by_id.end()) read->row = it->second;
    }
  } catch (...) {
    const auto error = std::current_exception();
    for (const auto& read : batch) read->error = error;
  }
  batches_.fetch_add(1, std::memory_order_relaxed);
  reads_.fetch_add(batch.size(), std::memory_order_relaxed);
  for (const auto& read : batch) {
    read->done.store(true, std::memory_order_release);
    wake_(kChannel, read->key);
  }
}

}  // namespace podium::api
