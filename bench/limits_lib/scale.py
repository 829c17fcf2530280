"""query_metrics, summary_compare and log_query at the scale a team's history reaches: 1,000 runs
of 10,000 steps (10 M metric rows) and 100 M log lines, generated inside PostgreSQL.

Seeding: one run imported through the API (a real run row, attempt, owner, plan facts) is copied
by SQL into the bench's runs `run_lim_NNNN` with one attempt each; their metrics and log lines
come from generate_series, run by run in ascending key order, a few runs per transaction, in two
sessions at once. A first seeding drops log_lines' indexes and builds them once at the end. The
table bench_seeded, written in each chunk's transaction, is the progress: an interrupted or
time-bounded seeding resumes where it stopped on the next invocation, and a finished one is
reused as it is (bench/limits.py keeps its database between runs). Every scenario records the
rows present when it ran.

Baselines: the product's own SQL (copied here; keep it in step with the route), prepared in one
psql session and executed with \\timing, output discarded: what the same query costs a client
that skips HTTP, JSON and downsampling."""

import random
import re
import subprocess
import threading
import time

from kit.results import scenario
from kit.stats import percentile

from .common import log

RUNS = 1000
STEPS = 10_000
TARGET_METRICS_P99_MS = 100.0
TARGET_SUMMARY_P99_MS = 150.0
TARGET_LOGS_P99_MS = 100.0
SEARCH_TERM = "NaN detected"  # one line in 10,000 carries it: a search reads the whole run

# The routes' SQL (backend/api/run_metrics_routes.cpp, run_log_routes.cpp), as psql prepares it.
METRICS_SQL = (
    "SELECT DISTINCT ON (m.step) m.step, m.step_seconds, m.tflops_per_device, "
    "m.tokens_per_second_per_device, m.loss, m.total_weights, "
    "CASE WHEN $4::jsonb = '[]'::jsonb THEN NULL ELSE "
    "(SELECT jsonb_object_agg(k, m.extra->k) FROM jsonb_array_elements_text($4::jsonb) "
    "AS k WHERE m.extra ? k)::text END AS picked "
    "FROM metrics m WHERE m.run_id = $1 AND ($2::bigint IS NULL OR m.step >= $2::bigint) "
    "AND ($3::bigint IS NULL OR m.step <= $3::bigint) "
    "ORDER BY m.step, m.attempt_number DESC")


def run_id(i):
    return f"run_lim_{i:04d}"


# Sessions generating rows at once (the machine's two cores; PostgreSQL runs one per session).
SEED_SESSIONS = 2
# Below this many runs of log lines still to write, they are inserted under the table's indexes;
# above it the indexes are dropped first and built once at the end, which is several times
# cheaper than maintaining four B-trees row by row (100 M rows: see docs/benchmarks.md).
REBUILD_INDEXES_FROM_RUNS = 100
# Generated rows reference runs and attempts the seeding itself created a moment earlier: the
# per-row foreign-key checks (a lookup in runs for every one of 100 M rows) are skipped.
NO_TRIGGERS = "SET session_replication_role = replica;"


def _ids_sql(fmt, ids):
    return ",".join(f"'{fmt.format(i)}'" for i in ids)


def _in_parallel(psql, chunks, statement_of, label, t0, budget_s):
    """Runs statement_of(chunk) for each chunk, SEED_SESSIONS at a time, until the chunks or the
    budget run out. Each statement is one transaction (psql -c), so a chunk is all there or not.
    The first failure stops the other sessions and is raised. Returns the chunks done."""
    pending = list(chunks)
    done = []
    errors = []
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if errors or not pending or time.monotonic() - t0 >= budget_s:
                    return
                chunk = pending.pop(0)
            try:
                psql.run(statement_of(chunk), timeout=7200)
            except Exception as e:  # noqa: BLE001 - handed to the caller's thread
                with lock:
                    errors.append(e)
                return
            with lock:
                done.append(chunk)
                log(f"seed: {label} of runs {chunk[0]}..{chunk[-1]} ({len(done)} of "
                    f"{len(chunks)} chunks; {time.monotonic() - t0:.0f} s of {budget_s} s)")

    threads = [threading.Thread(target=worker) for _ in range(SEED_SESSIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return done


def _seeded_table(psql, per_run):
    """bench_seeded records which runs have their metrics and log lines, written in the same
    transaction as the rows: the progress of a resumable seeding without querying 100 M rows
    (nor needing their indexes, which may be dropped while it runs)."""
    if psql.value("SELECT to_regclass('bench_seeded') IS NOT NULL") == "t":
        return
    psql.run("CREATE TABLE bench_seeded (kind text, run int, PRIMARY KEY (kind, run))")
    # A database seeded before this table existed: its whole runs (each was one statement).
    psql.run(f"""
      INSERT INTO bench_seeded SELECT 'metrics', g FROM generate_series(0, {RUNS - 1}) g
       WHERE EXISTS (SELECT 1 FROM metrics WHERE attempt_id = 'att_lim_' || lpad(g::text, 4, '0')
         AND step = {STEPS - 1});
      INSERT INTO bench_seeded SELECT 'log_lines', g FROM generate_series(0, {RUNS - 1}) g
       WHERE EXISTS (SELECT 1 FROM log_lines WHERE attempt_id = 'att_lim_' || lpad(g::text, 4,
         '0') AND rank = 0 AND seq = {per_run - 1});""")


def _todo(psql, kind):
    got = psql.value(f"""SELECT string_agg(g::text, ',' ORDER BY g) FROM generate_series(0,
        {RUNS - 1}) g WHERE NOT EXISTS (SELECT 1 FROM bench_seeded WHERE kind = '{kind}' AND
        run = g)""")
    return [int(x) for x in got.split(",")] if got else []


def _chunks(ids, size):
    return [ids[i:i + size] for i in range(0, len(ids), size)]


def _drop_log_line_indexes(psql):
    """Drops log_lines' indexes and unique constraints, keeping their definitions (as
    PostgreSQL prints them) in bench_dropped_indexes so that an interrupted seeding still
    rebuilds exactly what the migrations made."""
    psql.run("""
      CREATE TABLE IF NOT EXISTS bench_dropped_indexes (name text PRIMARY KEY,
          is_constraint boolean NOT NULL, definition text NOT NULL, ord int NOT NULL);
      INSERT INTO bench_dropped_indexes
        SELECT conname, true, pg_get_constraintdef(oid), CASE contype WHEN 'p' THEN 0 ELSE 1 END
          FROM pg_constraint WHERE conrelid = 'log_lines'::regclass AND contype IN ('p', 'u')
        UNION ALL
        SELECT i.relname, false, pg_get_indexdef(i.oid), 2
          FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
         WHERE x.indrelid = 'log_lines'::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c
           WHERE c.conindid = i.oid)
      ON CONFLICT DO NOTHING""")
    for name, is_constraint in _rows(psql, "SELECT name, is_constraint FROM "
                                     "bench_dropped_indexes ORDER BY ord DESC, name"):
        psql.run(f'ALTER TABLE log_lines DROP CONSTRAINT IF EXISTS "{name}"'
                 if is_constraint == "t" else f'DROP INDEX IF EXISTS "{name}"')


def _rebuild_log_line_indexes(psql):
    if psql.value("SELECT to_regclass('bench_dropped_indexes') IS NOT NULL") != "t":
        return
    for name, is_constraint, definition in _rows(
            psql, "SELECT name, is_constraint, definition FROM bench_dropped_indexes "
            "ORDER BY ord, name"):
        t = time.monotonic()
        ddl = (f'ALTER TABLE log_lines ADD CONSTRAINT "{name}" {definition}'
               if is_constraint == "t" else definition)
        psql.run(f"""SET maintenance_work_mem = '1GB'; SET max_parallel_maintenance_workers = 1;
            {ddl}; DELETE FROM bench_dropped_indexes WHERE name = '{name}';""", timeout=7200)
        log(f"seed: built {name} ({time.monotonic() - t:.0f} s)")


def _rows(psql, sql):
    return [line.split("|") for line in psql.run(sql).splitlines() if line]


def seed(psql, server, log_lines_target, budget_s):
    """Brings the bench data to RUNS runs x STEPS metric rows and `log_lines_target` log lines,
    for at most budget_s seconds of generation (building dropped indexes comes after). Returns
    what is stored."""
    t0 = time.monotonic()
    per_run = log_lines_target // RUNS
    have_runs = int(psql.value("SELECT count(*) FROM runs WHERE id LIKE 'run_lim_%'"))
    if have_runs < RUNS:
        template = _template(server)
        log(f"seed: copying run {template} into {RUNS} runs")
        psql.run(f"""
          INSERT INTO runs SELECT (jsonb_populate_record(r, jsonb_build_object(
              'id', 'run_lim_' || lpad(g::text, 4, '0'), 'name', 'lim-' || lpad(g::text, 4, '0'),
              'seq', nextval(pg_get_serial_sequence('runs', 'seq')), 'last_step', {STEPS - 1},
              'spec', jsonb_set(r.spec, '{{steps}}', '{STEPS}'),
              'created_at', now() - make_interval(hours => g)))).*
            FROM runs r, generate_series(0, {RUNS - 1}) g
           WHERE r.id = '{template}' ON CONFLICT DO NOTHING;
          INSERT INTO attempts SELECT (jsonb_populate_record(a, jsonb_build_object(
              'id', 'att_lim_' || lpad(g::text, 4, '0'),
              'run_id', 'run_lim_' || lpad(g::text, 4, '0'),
              'seq', nextval(pg_get_serial_sequence('attempts', 'seq')),
              'first_step', 0, 'last_step', {STEPS - 1},
              'running_at', now() - make_interval(hours => g),
              'finished_at', now() - make_interval(hours => g) + make_interval(secs => {STEPS}),
              'ending_at', now() - make_interval(hours => g) + make_interval(secs => {STEPS})))).*
            FROM attempts a, generate_series(0, {RUNS - 1}) g
           WHERE a.run_id = '{template}' ON CONFLICT DO NOTHING;""")
    _seeded_table(psql, per_run)

    # Metrics, 50 runs (500,000 rows) per transaction.
    todo = _todo(psql, "metrics")
    seeded = _in_parallel(psql, _chunks(todo, 50), lambda ids: f"""{NO_TRIGGERS}
          INSERT INTO metrics (run_id, attempt_id, attempt_number, step, at, step_seconds,
              tflops_per_device, tokens_per_second_per_device, total_weights, loss)
          SELECT 'run_lim_' || lpad(i::text, 4, '0'), 'att_lim_' || lpad(i::text, 4, '0'), 1, s,
                 now() - make_interval(hours => i) + make_interval(secs => s),
                 CASE WHEN s < 3 THEN 30.0 ELSE 0.69 + 0.02 * sin(s / 50.0 + i) END,
                 83.0 + 2 * cos(s / 70.0), 11819.0 + (s % 13), 262144, 10.0 / (1 + s / 1000.0)
            FROM unnest(ARRAY[{','.join(map(str, ids))}]) i, generate_series(0, {STEPS - 1}) s
           ORDER BY i, s;
          INSERT INTO bench_seeded SELECT 'metrics', unnest(ARRAY[{','.join(map(str, ids))}]);
          -- As ingestion does in the transaction that writes metrics: the run row changes,
          -- which tells stored summaries (run_summaries) they are out of date.
          UPDATE runs SET last_step = {STEPS - 1} WHERE id IN ({_ids_sql('run_lim_{:04d}', ids)});
          """, "metrics", t0, budget_s)

    # Log lines: the same number per run, rank 0 of attempt 1, 10 runs per transaction.
    todo = _todo(psql, "log_lines")
    if len(todo) >= REBUILD_INDEXES_FROM_RUNS and time.monotonic() - t0 < budget_s:
        log(f"seed: {len(todo)} runs of log lines to write: dropping log_lines' indexes, built "
            "again at the end")
        _drop_log_line_indexes(psql)
    try:
        seeded += _in_parallel(psql, _chunks(todo, 10), lambda ids: f"""{NO_TRIGGERS}
          INSERT INTO log_lines (run_id, attempt_id, attempt_number, rank, seq, ts, line)
          SELECT 'run_lim_' || lpad(i::text, 4, '0'), 'att_lim_' || lpad(i::text, 4, '0'), 1, 0,
                 s, now() - make_interval(hours => i) + make_interval(secs => s / 10),
                 CASE WHEN s % 10000 = 5000 THEN 'W1125 train.py:88] {SEARCH_TERM} in gradients '
                   || 'at step ' || (s / 10) || ', skipping update'
                 WHEN s % 10 = 0 THEN 'completed step: ' || (s / 10) || ', seconds: 0.693, '
                   || 'TFLOP/s/device: 83.171, Tokens/s/device: 11819.175, total_weights: 262144, '
                   || 'loss: ' || round((10.0 / (1 + s / 10000.0))::numeric, 4)
                 ELSE 'I1125 input_pipeline.py:412] host 0: prefetched batch ' || s
                   || ' of shard ' || (s % 1024) || ' (' || (4096 + s % 333) || ' records)' END
            FROM unnest(ARRAY[{','.join(map(str, ids))}]) i, generate_series(0, {per_run - 1}) s
           ORDER BY i, s;
          INSERT INTO bench_seeded SELECT 'log_lines', unnest(ARRAY[{','.join(map(str, ids))}]);
          """, "log lines", t0, budget_s)
    finally:
        _rebuild_log_line_indexes(psql)
    if seeded:
        psql.run("ANALYZE runs; ANALYZE attempts; ANALYZE metrics; ANALYZE log_lines")
    metrics_rows = STEPS * (RUNS - len(_todo(psql, "metrics")))
    log_rows = per_run * (RUNS - len(_todo(psql, "log_lines")))
    log(f"seed: {metrics_rows:,} metric rows and {log_rows:,} log lines of the bench runs "
        f"({time.monotonic() - t0:.0f} s)")
    return {"metric_rows": metrics_rows, "log_lines": log_rows,
            "seed_seconds": round(time.monotonic() - t0, 1), "log_lines_per_run": per_run}


def _template(server):
    text = "\n".join(
        f"completed step: {s}, seconds: 0.693, TFLOP/s/device: 83.171, Tokens/s/device: "
        f"11819.175, total_weights: 262144, loss: {10.0 / (1 + s / 1000.0):.4f}"
        for s in range(20))
    return server.admin.require("POST", "/api/v1/runs/import",
                                {"name": "lim-template", "accelerator": "v6e-8",
                                 "num_slices": 1, "model": "llama3-8b", "log": text},
                                status=(201,))["id"]


def _api_ms(client, paths):
    out = []
    for p in paths:
        t0 = time.perf_counter()
        code, body = client.call("GET", p)
        out.append((time.perf_counter() - t0) * 1000.0)
        if code != 200:
            raise RuntimeError(f"GET {p} -> {code}: {str(body)[:300]}")
    return out


def _psql_ms(psql, prepare, executes):
    """\\timing of each EXECUTE in one psql session, output discarded."""
    script = "\\set ON_ERROR_STOP 1\n" + prepare + ";\n\\timing on\n\\o /dev/null\n" + \
        "".join(e + ";\n" for e in executes)
    p = subprocess.run(["psql", "-X", "-q", "-A", psql.url], input=script,
                       capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"psql: {p.stderr[:500]}")
    times = [float(x) for x in re.findall(r"^Time: ([\d.]+) ms", p.stdout, re.M)]
    if len(times) != len(executes):
        raise RuntimeError(f"psql timed {len(times)} of {len(executes)} statements")
    return times


def _ratio_row(name, api, base, target_ms, data, **more):
    p99, b99 = percentile(api, 99), percentile(base, 99)
    log(f"{name}: p50 {percentile(api, 50):.1f} ms, p99 {p99:.1f} ms (psql p99 {b99:.1f} ms)")
    return scenario(name, p99, "ms (p99)", f"p99 < {target_ms:.0f} ms", p99 < target_ms,
                    baseline_value=b99, ratio=p99 / b99 if b99 else None,
                    p50_ms=percentile(api, 50), baseline_p50_ms=percentile(base, 50),
                    samples=len(api), **data, **more)


def query_metrics(client, psql, data, n):
    picks = [random.Random(i).randrange(RUNS) for i in range(n)]
    prepare = f"PREPARE q(text, bigint, bigint, jsonb) AS {METRICS_SQL}"
    executes = [f"EXECUTE q('{run_id(i)}', NULL, NULL, '[]')" for i in picks]
    _psql_ms(psql, prepare, executes)  # warm-up: both sides then read the same cached pages
    api = _api_ms(client, [f"/api/v1/runs/{run_id(i)}/metrics?max_points=1000" for i in picks])
    base = _psql_ms(psql, prepare, executes)
    ok = data["metric_rows"] >= RUNS * STEPS
    row = _ratio_row("query_metrics", api, base, TARGET_METRICS_P99_MS, data)
    row["meets"] = row["meets"] and ok
    return [row]


# Whether a bench run's stored summary is missing or out of date: the server's own condition
# (backend/api/run_summary_store.cpp), over `runs r LEFT JOIN clusters c LEFT JOIN run_summaries s`.
# The server's fingerprint is the rows' versions followed by "/<form>/plan<ratio x steps>" (the
# summary's form and the options that change it), so a current one starts with the versions and
# a slash.
_SUMMARY_DUE_SQL = (
    "(s.run_id IS NULL OR NOT starts_with(s.fingerprint, r.xmin::text || '/' || "
    "COALESCE(c.xmin::text, '-') || '/' || COALESCE((SELECT string_agg(a.xmin::text, ',' "
    "ORDER BY a.number) FROM attempts a WHERE a.run_id = r.id), '') || '/'))")


def wait_for_summaries(psql, timeout_s=900):
    """The server computes and stores the summaries of runs that finished (every
    summaries.precompute_interval_seconds) before anyone asks; the generated runs finished as
    they were seeded. Waits until every bench run's summary is stored and current, so that the
    computation does not load the scenarios measured meanwhile. Returns (seconds waited, how
    many were due at the start)."""
    t0 = time.monotonic()
    due_sql = (f"SELECT count(*) FROM runs r LEFT JOIN clusters c ON c.id = r.cluster_id "
               f"LEFT JOIN run_summaries s ON s.run_id = r.id WHERE r.id LIKE 'run_lim_%' "
               f"AND {_SUMMARY_DUE_SQL}")
    first = due = int(psql.value(due_sql))
    while due and time.monotonic() - t0 < timeout_s:
        log(f"summaries: {due} of the bench runs not stored yet "
            f"({time.monotonic() - t0:.0f} s)")
        time.sleep(5)
        due = int(psql.value(due_sql))
    if due:
        raise RuntimeError(f"{due} summaries still not stored after {timeout_s} s")
    return round(time.monotonic() - t0, 1), first


def summary_compare(client, psql, data, n):
    """What a user sees for finished runs: their summaries were computed and stored by the
    server's precompute sweep once they finished (wait_for_summaries), so a first pass over n/2
    distinct runs and 20-run compares of other runs (first) and the same requests again (again)
    read stored rows. The figure is the worse p99 of the four series. For the record, the cost
    of computing a summary from its 10,000 metric rows (what a request pays when its stored row
    is stale, right after a late change) is measured too, on 20 runs whose rows are deleted
    first (the sweep stores them again), and reported in details, not in the figure."""
    half = max(2, n // 2)
    rnd = random.Random(3)
    order = rnd.sample(range(RUNS), RUNS)
    summ_runs = order[:half]
    comps = []
    pool = order[half:]
    for k in range(half):
        ids = [run_id(i) for i in random.Random(10_000 + k).sample(pool, 20)]
        comps.append(f"/api/v1/compare?runs={','.join(ids)}&baseline={ids[0]}")
    summ_paths = [f"/api/v1/runs/{run_id(i)}/summary" for i in summ_runs]
    series = {"summary_first": _api_ms(client, summ_paths),
              "compare_first": _api_ms(client, comps),
              "summary_again": _api_ms(client, summ_paths),
              "compare_again": _api_ms(client, comps)}
    figures = {}
    recompute = [run_id(i) for i in order[:20]]
    psql.run("DELETE FROM run_summaries WHERE run_id IN ("
             + ",".join(f"'{r}'" for r in recompute) + ")")
    computed = _api_ms(client, [f"/api/v1/runs/{r}/summary" for r in recompute])
    figures["summary_computed_on_request_p50_ms"] = percentile(computed, 50)
    figures["summary_computed_on_request_max_ms"] = max(computed)
    log(f"summary_compare/computed on request: p50 {percentile(computed, 50):.1f} ms, "
        f"max {max(computed):.1f} ms")
    for name, vals in series.items():
        figures[f"{name}_p50_ms"] = percentile(vals, 50)
        figures[f"{name}_p99_ms"] = percentile(vals, 99)
        log(f"summary_compare/{name}: p50 {percentile(vals, 50):.1f} ms, "
            f"p99 {percentile(vals, 99):.1f} ms")
    worst = max(percentile(v, 99) for v in series.values())
    ok = data["metric_rows"] >= RUNS * STEPS
    return [scenario("summary_compare", worst, "ms (p99, worst of summary and compare, first and "
                     "again)", f"p99 < {TARGET_SUMMARY_P99_MS:.0f} ms",
                     worst < TARGET_SUMMARY_P99_MS and ok, samples_per_series=half,
                     **figures, **data)]


LOGS_SQL = (
    "SELECT l.attempt_id, l.attempt_number, l.rank, l.seq, "
    "to_char(l.ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') AS ts, l.line "
    "FROM log_lines l WHERE l.run_id = $1 AND "
    "($2::text IS NULL OR l.attempt_id = $2 OR l.attempt_number::text = $2) "
    "AND ($3::int IS NULL OR l.rank = $3::int) AND ($4::bigint IS NULL OR l.seq > $4::bigint) "
    "AND (l.attempt_number, l.rank, l.seq) > ($5::int, $6::int, $7::bigint) {search}"
    "ORDER BY l.attempt_number, l.rank, l.seq LIMIT $8::int")


def log_query(client, psql, data, n, search_sql):
    """Pages of 500 lines of a random run (the first and the next) and a text search within one
    run.
    `search_sql`: the route's search condition on $9, or None when the server has no search."""
    rnd = random.Random(7)
    picks = [(rnd.randrange(RUNS), 0) for _ in range(n)]
    # As the dashboard pages: the first page, then the next one from its cursor (the position
    # after the first page's last line: attempt 1, rank 0, seq 499).
    page_prepare = ("PREPARE q(text, text, int, bigint, int, int, bigint, int) AS "
                    + LOGS_SQL.format(search=""))
    page_executes = [e for i, _ in picks for e in (
        f"EXECUTE q('{run_id(i)}', NULL, NULL, NULL, -1, -1, -1, 501)",
        f"EXECUTE q('{run_id(i)}', NULL, NULL, NULL, 1, 0, 499, 501)")]
    _psql_ms(psql, page_prepare, page_executes)  # warm-up, as for query_metrics
    page_api = []
    for i, _ in picks:
        t0 = time.perf_counter()
        code, first = client.call("GET", f"/api/v1/runs/{run_id(i)}/logs?limit=500")
        page_api.append((time.perf_counter() - t0) * 1000.0)
        if code != 200 or not first.get("next_cursor"):
            raise RuntimeError(f"logs of {run_id(i)} -> {code}: {str(first)[:200]}")
        page_api.extend(_api_ms(client, [f"/api/v1/runs/{run_id(i)}/logs?limit=500&cursor="
                                         f"{first['next_cursor']}"]))
    page_base = _psql_ms(psql, page_prepare, page_executes)
    term = SEARCH_TERM.replace(" ", "%20")
    search_prepare = ("PREPARE q(text, text, int, bigint, int, int, bigint, int, text) AS "
                      + LOGS_SQL.format(search=f"AND {search_sql} "))
    search_executes = [
        f"EXECUTE q('{run_id(i)}', NULL, NULL, NULL, -1, -1, -1, 501, '{SEARCH_TERM}')"
        for i, _ in picks]
    _psql_ms(psql, search_prepare, search_executes)  # warm-up
    search_api = _api_ms(client, [f"/api/v1/runs/{run_id(i)}/logs?q={term}&limit=500"
                                  for i, _ in picks])
    search_base = _psql_ms(psql, search_prepare, search_executes)
    ok = data["log_lines"] >= 100_000_000
    p99 = max(percentile(page_api, 99), percentile(search_api, 99))
    b99 = max(percentile(page_base, 99), percentile(search_base, 99))
    for name, a, b in (("page", page_api, page_base), ("search", search_api, search_base)):
        log(f"log_query/{name}: p50 {percentile(a, 50):.1f} ms, p99 {percentile(a, 99):.1f} ms "
            f"(psql p99 {percentile(b, 99):.1f} ms)")
    return [scenario("log_query", p99, "ms (p99, worse of page and search)",
                     f"p99 < {TARGET_LOGS_P99_MS:.0f} ms", p99 < TARGET_LOGS_P99_MS and ok,
                     baseline_value=b99, ratio=p99 / b99 if b99 else None,
                     page_p50_ms=percentile(page_api, 50), page_p99_ms=percentile(page_api, 99),
                     page_psql_p99_ms=percentile(page_base, 99),
                     search_p50_ms=percentile(search_api, 50),
                     search_p99_ms=percentile(search_api, 99),
                     search_psql_p99_ms=percentile(search_base, 99), search_term=SEARCH_TERM,
                     samples=n, **data)]
