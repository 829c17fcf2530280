// Prometheus gauges of the engine, read from the database when /metrics is scraped: runs by
// state, workers by cluster and health, live attempts. PostgreSQL is the source of truth, so
// every replica reports the same figures; a scrape while the database is down omits them.
#include "backend/api/api_context.h"

namespace podium::api {

namespace {

std::string label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

void register_engine_metrics(ApiContext& ctx) {
  ctx.metrics.add_collector([&ctx](std::string& out) {
    try {
      ctx.db.transact(
          [&](db::Transaction& tx) {
            auto runs = tx.exec("SELECT state, count(*) AS n FROM runs GROUP BY state ORDER BY 1");
            out += "# HELP podium_runs Runs by state.\n# TYPE podium_runs gauge\n";
            for (size_t i = 0; i < runs.size(); ++i)
              out += "podium_runs{state=\"" + label(runs.at(i, "state")) + "\"} " +
                     runs.at(i, "n") + "\n";
            auto workers = tx.exec(
                "SELECT c.name, (w.last_heartbeat_at > now() - make_interval(secs => $1::int)) "
                "AS healthy, count(*) AS n FROM workers w JOIN clusters c ON c.id = w.cluster_id "
                "GROUP BY 1, 2 ORDER BY 1, 2",
                {std::to_string(ctx.engine.heartbeat_deadline.count())});
            out +=
                "# HELP podium_workers Registered workers by cluster and health.\n"
                "# TYPE podium_workers gauge\n";
            for (size_t i = 0; i < workers.size(); ++i)
              out += "podium_workers{cluster=\"" + label(workers.at(i, "name")) + "\",healthy=\"" +
                     (workers.boolean(i, "healthy") ? "true" : "false") + "\"} " +
                     workers.at(i, "n") + "\n";
            auto attempts = tx.exec(
                "SELECT state, count(*) AS n FROM attempts WHERE finished_at IS NULL GROUP BY 1 "
                "ORDER BY 1");
            out +=
                "# HELP podium_live_attempts Attempts not finished, by state.\n"
                "# TYPE podium_live_attempts gauge\n";
            for (size_t i = 0; i < attempts.size(); ++i)
              out += "podium_live_attempts{state=\"" + label(attempts.at(i, "state")) + "\"} " +
                     attempts.at(i, "n") + "\n";
          },
          db::TxMode::read_only);
    } catch (const db::DbError&) {
      // The database is unreachable: the scrape still answers with the process's own figures.
    }
  });
}

}  // namespace podium::api
