#pragma once
// GET /runs/{id}'s reads, batched (a "DataLoader"): while a query for runs is in flight, the
// reads that arrive queue, and the next query fetches all their ids at once
// (run_select() ... WHERE r.id = ANY($1)); each response is rendered from its own row.
// PostgreSQL's cost per statement (a round trip, executor start-up, a wake-up of its backend) is
// paid once per batch instead of once per request: at 64 keep-alive connections on 2 cores it was
// most of the database's share of bench/limits.py's api_get_run.
//
// Read-after-write holds across replicas: a read only joins a batch whose query has not started,
// so that query starts after the read arrived and sees every write acknowledged before it.
// Nothing is kept between batches.
//
// A read holds no handler thread while it waits: GET /runs/{id} answers with a Deferred
// (http_message.h) parked under the read's key until its batch has its rows; the batcher ends
// the wait through `wake` (the HTTP layer's HttpServer::wake).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend/db/database.h"

namespace podium::api {

class RunReadBatcher {
 public:
  // One request's read.
  struct Read {
    explicit Read(std::string run_id, std::string wait_key)
        : id(std::move(run_id)), key(std::move(wait_key)) {}
    const std::string id;
    const std::string key;  // the parked wait's key on kChannel
    // Set before `done`: the batch's rows and this run's row among them (-1: no such run), or
    // the error the batch's query raised.
    std::shared_ptr<const db::Result> rows;
    int row = -1;
    std::exception_ptr error;
    std::atomic<bool> done{false};
  };
  using Wake = std::function<void(const std::string& channel, const std::string& key)>;
  static constexpr const char* kChannel = "run-read";

  // `queries_at_once`: batches in flight at once (each on its own thread and pooled
  // connection); `max_batch`: ids per query at most.
  RunReadBatcher(db::Database& db, int queries_at_once = 1, size_t max_batch = 256);
  ~RunReadBatcher();
  RunReadBatcher(const RunReadBatcher&) = delete;
  RunReadBatcher& operator=(const RunReadBatcher&) = delete;

  // Starts the query threads; `wake` is called once per read when its rows are there.
  void start(Wake wake);
  // Ends the query threads after their current batch; reads still queued end with
  // DbError(unavailable). Idempotent.
  void stop();

  // Queues a read of run `id` for the next batch. The id must be valid UTF-8 without NUL, so
  // that one request's id cannot make the batch's query fail for the others: App::dispatch
  // refuses invalid UTF-8 in a path parameter and the HTTP layer a NUL (%00) in the target.
  std::shared_ptr<Read> submit(std::string id);

  uint64_t batches() const { return batches_.load(std::memory_order_relaxed); }
  uint64_t reads() const { return reads_.load(std::memory_order_relaxed); }

 private:
  void loop();
  void answer(const std::vector<std::shared_ptr<Read>>& batch);

  db::Database& db_;
  const int queries_at_once_;
  const size_t max_batch_;
  const std::string sql_;
  Wake wake_;  // set by start(), before any thread reads it
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Read>> pending_;  // guarded by mu_
  bool stopping_ = false;                      // guarded by mu_
  uint64_t serial_ = 0;                        // guarded by mu_
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> reads_{0};
};

// The SQL array literal of `ids` ({"a","b"}), every element quoted and escaped.
std::string text_array_literal(const std::vector<std::string>& ids);

}  // namespace podium::api
