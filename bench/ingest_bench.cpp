// Log ingestion cost (bench/README.md): one agent batch of 500 lines of a MaxText-like log (one
// step line in five) through ingest_log_batch, against PostgreSQL. Measured next to two
// baselines from the same run and database: the same lines stored by one plain multi-row INSERT
// (the floor: no parsing, no metrics), and by 500 single-row INSERTs in one transaction (what
// batching saves). Needs PODIUM_BENCH_DATABASE_URL (bench/run.sh starts a throwaway PostgreSQL);
// the database gets Podium's schema and one run to ingest into.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/db/database.h"
#include "backend/db/migrations.h"
#include "backend/ingest/log_ingest.h"

namespace {

using podium::db::Database;
using podium::db::Transaction;

constexpr int kLines = 500;

std::vector<std::string> batch_lines(std::int64_t first_step) {
  std::vector<std::string> lines;
  std::int64_t step = first_step;
  for (int i = 0; i < kLines; ++i) {
    if (i % 5 == 4)
      lines.push_back("completed step: " + std::to_string(step++) +
                      ", seconds: 0.693, TFLOP/s/device: 83.171, Tokens/s/device: 11819.175, "
                      "total_weights: 262144, loss: 0.334, lm_loss: 0.334, perplexity: 1.397");
    else
      lines.push_back("I1121 16:46:01.123456 140 train.py:123] data loader: prefetched batch " +
                      std::to_string(i) + " of shard gs://bucket/c4/en/train-00017-of-01024");
  }
  return lines;
}

struct Fixture {
  std::unique_ptr<Database> db;
  std::string run_id = "run_bench";
  std::int64_t attempt = 0;

  static Fixture& get() {
    static Fixture f;
    return f;
  }

  bool ready() const { return db != nullptr; }

  // A fresh attempt per iteration, so every batch inserts new rows (the steady state).
  std::string next_attempt(Transaction& tx) {
    const std::string id = "att_bench_" + std::to_string(++attempt);
    tx.exec(
        "INSERT INTO attempts (id, run_id, number, state, num_slices, world_size, slices, "
        "coordinator_port) VALUES ($1, $2, $3::int, 'running', 1, 1, '{0}', 8476)",
        {id, run_id, std::to_string(attempt)});
    return id;
  }

 private:
  Fixture() {
    const char* url = std::getenv("PODIUM_BENCH_DATABASE_URL");
    if (url == nullptr || *url == '\0') return;
    db = std::make_unique<Database>(podium::db::PoolOptions{.conninfo = url});
    podium::db::apply_migrations(*db, podium::db::embedded_migrations());
    db->transact([&](Transaction& tx) {
      tx.exec("DELETE FROM runs WHERE id = $1", {run_id});
      tx.exec("DELETE FROM clusters WHERE id = 'clu_bench'");
      tx.exec(
          "INSERT INTO clusters (id, name, accelerator, num_slices, capacity) VALUES "
          "('clu_bench', 'bench', 'cpu-1', 1, 'on-demand')");
      tx.exec(
          "INSERT INTO runs (id, name, cluster_id, workload, spec, state) VALUES ($1, 'bench', "
          "'clu_bench', 'command', '{}'::jsonb, 'running')",
          {run_id});
    });
  }
};

bool skip_without_database(benchmark::State& state) {
  if (Fixture::get().ready()) return false;
  state.SkipWithError("PODIUM_BENCH_DATABASE_URL is not set (bench/run.sh sets it)");
  return true;
}

void BM_Baseline_MultiRowInsert(benchmark::State& state) {
  if (skip_without_database(state)) return;
  auto& f = Fixture::get();
  const auto lines = batch_lines(0);
  nlohmann::json text = lines;
  const std::string body = text.dump();
  for (auto _ : state) {
    f.db->transact([&](Transaction& tx) {
      const std::string attempt = f.next_attempt(tx);
      tx.exec(
          "INSERT INTO log_lines (run_id, attempt_id, attempt_number, rank, seq, line) "
          "SELECT $1, $2, 1, 0, t.ord - 1, t.line FROM jsonb_array_elements_text($3::jsonb) "
          "WITH ORDINALITY AS t(line, ord) ON CONFLICT DO NOTHING",
          {f.run_id, attempt, body});
    });
  }
  state.SetItemsProcessed(state.iterations() * kLines);
}
BENCHMARK(BM_Baseline_MultiRowInsert)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Baseline_RowByRowInsert(benchmark::State& state) {
  if (skip_without_database(state)) return;
  auto& f = Fixture::get();
  const auto lines = batch_lines(0);
  for (auto _ : state) {
    f.db->transact([&](Transaction& tx) {
      const std::string attempt = f.next_attempt(tx);
      for (int i = 0; i < kLines; ++i)
        tx.exec(
            "INSERT INTO log_lines (run_id, attempt_id, attempt_number, rank, seq, line) VALUES "
            "($1, $2, 1, 0, $3::bigint, $4) ON CONFLICT DO NOTHING",
            {f.run_id, attempt, std::to_string(i), lines[static_cast<size_t>(i)]});
    });
  }
  state.SetItemsProcessed(state.iterations() * kLines);
}
BENCHMARK(BM_Baseline_RowByRowInsert)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_IngestLogBatch(benchmark::State& state) {
  if (skip_without_database(state)) return;
  auto& f = Fixture::get();
  const auto lines = batch_lines(0);
  for (auto _ : state) {
    f.db->transact([&](Transaction& tx) {
      podium::ingest::LogBatch batch{f.run_id, f.next_attempt(tx), 1, 0, 0, lines};
      podium::ingest::ingest_log_batch(tx, batch);
    });
  }
  state.SetItemsProcessed(state.iterations() * kLines);
}
BENCHMARK(BM_IngestLogBatch)->Unit(benchmark::kMillisecond)->UseRealTime();

// A retried batch: every line is already stored, so nothing is parsed or written.
void BM_IngestRetriedBatch(benchmark::State& state) {
  if (skip_without_database(state)) return;
  auto& f = Fixture::get();
  const auto lines = batch_lines(0);
  std::string attempt;
  f.db->transact([&](Transaction& tx) {
    attempt = f.next_attempt(tx);
    podium::ingest::ingest_log_batch(tx, {f.run_id, attempt, 1, 0, 0, lines});
  });
  for (auto _ : state) {
    f.db->transact([&](Transaction& tx) {
      podium::ingest::ingest_log_batch(tx, {f.run_id, attempt, 1, 0, 0, lines});
    });
  }
  state.SetItemsProcessed(state.iterations() * kLines);
}
BENCHMARK(BM_IngestRetriedBatch)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
