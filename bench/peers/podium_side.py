"""Podium's side of the peer scenarios, through the same API the product serves: 32 agents
posting MaxText step lines (limits_lib.ingest's agents: registered, assigned, heartbeating), one
run's whole metric history, and a filtered page of GET /runs over 10,000 runs."""

import random
import threading
import time

from kit.stats import percentile
from limits_lib.common import log
from limits_lib.ingest import Agents, upload
from limits_lib.scale import _template

from . import workload


def ingest(server, psql, agents_n, steps, cpu):
    """Returns (figures, run ids): step rows and metric values committed per second."""
    agents = Agents(server, agents_n)
    try:
        bodies = [workload.podium_bodies(steps, k) for k in range(agents_n)]
        log(f"podium ingest: {agents_n} agents x {steps:,} step lines ({len(bodies[0])} batches "
            f"of {len(bodies[0][0]) and workload.LINES_PER_BATCH} lines each)")
        c0 = cpu()
        seconds, stored, retried = upload(agents.attempts, bodies)
        cpu_s = cpu() - c0
        ids = ",".join(f"'{a[2]}'" for a in agents.attempts)
        rows = int(psql.value(f"SELECT count(*) FROM metrics WHERE attempt_id IN ({ids})"))
        if rows != agents_n * steps:
            raise RuntimeError(f"podium: {rows} metric rows committed of {agents_n * steps}")
        runs = [a[1] for a in agents.attempts]
    finally:
        agents.close()
    figures = {"seconds": seconds, "step_rows": rows, "values": rows * len(workload.METRIC_KEYS),
               "values_per_s": rows * len(workload.METRIC_KEYS) / seconds,
               "step_rows_per_s": rows / seconds, "batches_retried_after_503": retried,
               "server_cpu_seconds": cpu_s}
    log(f"podium ingest: {figures['values_per_s']:,.0f} metric values/s "
        f"({figures['step_rows_per_s']:,.0f} step rows/s) in {seconds:.1f} s")
    return figures, runs


def history(client, runs, steps, samples):
    """The whole history of a random run of `runs`: every step, the five series, one request."""
    fields = ",".join(workload.METRIC_KEYS)
    ms = []
    rng = random.Random(31)
    for i in range(samples):
        run = rng.choice(runs)
        t0 = time.perf_counter()
        out = client.require("GET", f"/api/v1/runs/{run}/metrics?fields={fields}"
                             f"&max_points={steps}")
        ms.append((time.perf_counter() - t0) * 1000.0)
        if len(out["steps"]) != steps or any(len(out["series"][k]) != steps
                                             for k in workload.METRIC_KEYS):
            raise RuntimeError(f"podium history of {run}: {len(out['steps'])} steps, not {steps}")
    return _latency(ms)


def seed_search_runs(psql, server):
    """SEARCH_RUNS runs run_peer_NNNNN copied by SQL from one imported run, the parameter
    (`model`) cycling over SEARCH_MODELS values; kept between invocations."""
    have = int(psql.value("SELECT count(*) FROM runs WHERE id LIKE 'run_peer_%'"))
    if have >= workload.SEARCH_RUNS:
        return have
    template = _template(server)
    log(f"podium search: copying run {template} into {workload.SEARCH_RUNS:,} runs")
    psql.run(f"""
      INSERT INTO runs SELECT (jsonb_populate_record(r, jsonb_build_object(
          'id', 'run_peer_' || lpad(g::text, 5, '0'), 'name', 'peer-' || lpad(g::text, 5, '0'),
          'seq', nextval(pg_get_serial_sequence('runs', 'seq')),
          'model', 'model-' || lpad((g % {workload.SEARCH_MODELS})::text, 2, '0'),
          'created_at', now() - make_interval(mins => g)))).*
        FROM runs r, generate_series(0, {workload.SEARCH_RUNS - 1}) g
       WHERE r.id = '{template}' ON CONFLICT DO NOTHING;
      ANALYZE runs;""")
    return int(psql.value("SELECT count(*) FROM runs WHERE id LIKE 'run_peer_%'"))


def search(client, samples):
    """A page of GET /runs filtered on the parameter (`model`). GET /runs has no metric filter,
    so this side answers the parameter condition only (docs/benchmarks.md says so)."""
    ms = []
    rng = random.Random(31)
    for _ in range(samples):
        model = workload.model_of(rng.randrange(workload.SEARCH_MODELS))
        t0 = time.perf_counter()
        out = client.require("GET", f"/api/v1/runs?model={model}&limit={workload.SEARCH_PAGE}")
        ms.append((time.perf_counter() - t0) * 1000.0)
        if len(out["items"]) != workload.SEARCH_PAGE:
            raise RuntimeError(f"podium search {model}: {len(out['items'])} runs")
    return _latency(ms)


def _latency(ms):
    return {"p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99), "max_ms": max(ms),
            "samples": len(ms)}


def parallel(n, fn):
    """Runs fn(i) for i < n in n threads started together; returns (seconds, errors)."""
    errors = []
    start = threading.Barrier(n + 1)

    def body(i):
        start.wait()
        try:
            fn(i)
        except Exception as e:  # reported after the clock stops
            errors.append(f"client {i}: {e}")

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.monotonic()
    for t in threads:
        t.join(timeout=3600)
    return time.monotonic() - t0, errors
