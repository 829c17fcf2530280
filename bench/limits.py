#!/usr/bin/python3
"""Benchmarks against the limits of the machine (issue 11), each with its baseline measured in
the same run: agent-API ingestion against psql COPY, GET /runs/{id} against nginx serving the
same bytes, queries at 10 M metric rows and 100 M log lines against the same SQL in psql,
dispatch latency, agent scale, server memory under held connections, the dashboard at team scale
in Chromium (bench/web/render.mjs), the README's first command.

Starts its own PostgreSQL (scripts/test-postgres.sh in <build>/limits-pg, kept between runs with
the generated history so that later runs skip the seeding; --fresh starts over), a Release
podium-server on loopback, nginx and wrk (installed with apt-get when missing, saying so), and
stops every process it started. Writes bench/results/latest.json and the table in
docs/benchmarks.md. Exit status 1 when a scenario misses its target.

  /usr/bin/python3 bench/limits.py --bin-dir build-bench/bin [--only ingest_logs,api_get_run]
"""

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kit import ROOT  # noqa: E402
from kit.http import Client  # noqa: E402
from kit.podium import PodiumServer  # noqa: E402
from kit.postgres import Psql, TestPostgres  # noqa: E402
from kit.results import commit, scenario  # noqa: E402
from limits_lib import fold, http_limits, ingest, quickstart, report, scale  # noqa: E402
from limits_lib.common import log  # noqa: E402
from peers import scenarios as peers  # noqa: E402

ALL = ["ingest_metrics", "ingest_logs", "api_get_run", "dispatch_latency", "agent_scale",
       "query_metrics", "summary_compare", "log_query", *peers.NAMES, *fold.WEB_SCENARIOS,
       "server_rss", "quickstart"]


def start_server(bin_dir, url, tmp, token, settings=()):
    """A Release podium-server on loopback against the bench database, ready."""
    return PodiumServer(bin_dir, tmp, token, database_url=url,
                        settings=["log.level=warn", *SERVER_SETTINGS, *settings]).start()


# --set: server settings of this invocation (an A/B of limits.handler_threads, say), recorded
# in latest.json beside the figures they produced.
SERVER_SETTINGS = []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build-bench", "bin"))
    ap.add_argument("--only", help="comma-separated scenarios (default: all but quickstart; "
                    "quickstart builds a clone from nothing)")
    ap.add_argument("--quickstart", action="store_true", help="also run quickstart")
    ap.add_argument("--pg-dir", help="the bench PostgreSQL (default <bin-dir>/../limits-pg)")
    ap.add_argument("--fresh", action="store_true", help="drop the kept database first")
    ap.add_argument("--ingest-batches", type=int, default=20,
                    help="batches of 500 lines per agent and ingest scenario (default 20)")
    ap.add_argument("--log-lines", type=int, default=100_000_000)
    ap.add_argument("--seed-budget", type=int, default=3600,
                    help="seconds of data generation per invocation (resumed by the next)")
    ap.add_argument("--samples", type=int, default=200, help="requests per query scenario")
    ap.add_argument("--wrk-seconds", type=int, default=10)
    ap.add_argument("--dispatch-runs", type=int, default=200)
    ap.add_argument("--agents", type=int, default=1000, help="agent_scale's agents")
    ap.add_argument("--peer-clients", type=int, default=32, help="peer scenarios' clients")
    ap.add_argument("--peer-steps", type=int, default=10_000, help="steps per peer client")
    ap.add_argument("--peer-samples", type=int, default=50, help="requests per peer query")
    ap.add_argument("--peer-seconds", type=int, default=60,
                    help="how long the peers' ingest clients send (their rate is slow)")
    ap.add_argument("--peers-venv", help="MLflow's and Aim's venv, made from "
                    "requirements/bench.txt when missing (default <bin-dir>/../peers-venv)")
    ap.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "latest.json"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--reuse-results", default="",
                    help="dispatch_latency,agent_scale,web_render: fold their last "
                    "bench/results/<name>.json "
                    "instead of running them (the row keeps that result's date)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other scenarios' rows of the existing output (each row says "
                    "the commit and date it was measured at)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a podium-server setting for this invocation (repeatable), e.g. "
                    "limits.handler_threads=32 to measure against an earlier default")
    args = ap.parse_args()
    SERVER_SETTINGS[:] = args.set
    chosen = args.only.split(",") if args.only else [s for s in ALL if s != "quickstart"]
    if args.quickstart and "quickstart" not in chosen:
        chosen.append("quickstart")
    unknown = [s for s in chosen if s not in ALL]
    if unknown:
        sys.exit(f"limits: unknown scenario(s) {unknown}; known: {ALL}")
    bin_dir = os.path.abspath(args.bin_dir)
    pg_dir = args.pg_dir or os.path.join(os.path.dirname(bin_dir), "limits-pg")

    t_start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="podium-limits-")
    os.chmod(tmp, 0o755)
    rows, failures, extra = [], {}, {}
    server = None
    # The admin token counts only on a database's first start: kept beside the kept database.
    token_file = os.path.join(pg_dir, "bench-admin-token")
    postgres = TestPostgres(pg_dir)
    if args.fresh:
        postgres.run("stop")
        if os.path.exists(token_file):
            os.unlink(token_file)
    # Stopped at the end only when this run started it (another run may be using it).
    was_running = postgres.running()
    url = postgres.start()
    if not os.path.exists(token_file):
        with open(token_file, "w") as f:
            f.write("pdm_bench_" + os.urandom(16).hex())
    with open(token_file) as f:
        token = f.read().strip()
    log(f"PostgreSQL {url} (kept in {pg_dir})")
    psql = Psql(url)
    # Memory for the 10 M / 100 M row tables: PostgreSQL's 128 MB default is a laptop's.
    if psql.value("SHOW shared_buffers") != "2GB" and not was_running:
        psql.run("ALTER SYSTEM SET shared_buffers = '2GB'")
        psql.run("ALTER SYSTEM SET maintenance_work_mem = '1GB'")
        psql.run("ALTER SYSTEM SET max_wal_size = '8GB'")
        postgres.run("restart")
    try:
        server = start_server(bin_dir, url, tmp, token)

        def attempt(names, fn):
            names = [n for n in names if n in chosen]
            if not names:
                return
            try:
                rows.extend(r for r in fn(names) if r["name"] in chosen)
            except Exception as e:  # a broken scenario is reported, the others still run
                traceback.print_exc()
                for n in names:
                    failures[n] = str(e)[:500]

        attempt(["ingest_metrics", "ingest_logs"],
                lambda names: ingest.run(server, psql, tmp, 32, args.ingest_batches, names))
        attempt(["api_get_run"], lambda _: http_limits.api_get_run(server, tmp, args.wrk_seconds, url))
        if any(n in chosen for n in ("query_metrics", "summary_compare", "log_query")):
            data = scale.seed(psql, server, args.log_lines, args.seed_budget)
            waited, due = scale.wait_for_summaries(psql)
            data.update(summaries_due_after_seed=due, summaries_stored_in_s=waited)
            extra["scale"] = data
            client = Client(server.port, server.token)
            attempt(["query_metrics"],
                    lambda _: scale.query_metrics(client, psql, data, args.samples))
            attempt(["summary_compare"],
                    lambda _: scale.summary_compare(client, psql, data, args.samples))
            # The route's condition for an ASCII term such as the bench's (run_log_routes.cpp).
            attempt(["log_query"], lambda _: scale.log_query(
                client, psql, data, args.samples,
                "strpos(lower(l.line COLLATE \"C\"), lower($9::text COLLATE \"C\")) > 0"))
        # MLflow and Aim beside Podium (issue 31), in their own venv (bench/peers/venv.py).
        attempt(peers.NAMES, lambda names: peers.run(
            server, psql, tmp, args.peers_venv or os.path.join(os.path.dirname(bin_dir),
                                                                "peers-venv"), names,
            args.peer_clients, args.peer_steps, args.peer_samples, args.peer_seconds))
        server.stop()
        server = None
        attempt(["server_rss"], lambda _: http_limits.server_rss(
            lambda settings: start_server(bin_dir, url, tmp, token, settings)))
        attempt(["dispatch_latency"], lambda _: fold.dispatch_latency(
            bin_dir, args.dispatch_runs, "dispatch_latency" in args.reuse_results))
        attempt(["agent_scale"], lambda _: fold.agent_scale(
            bin_dir, args.agents, "agent_scale" in args.reuse_results))
        # The dashboard at team scale in Chromium (bench/web/render.mjs, issue 31.5).
        attempt(fold.WEB_SCENARIOS, lambda _: fold.web_render(
            bin_dir, url, "web_render" in args.reuse_results))
        attempt(["quickstart"], lambda _: quickstart.quickstart(tmp))
    finally:
        if server is not None:
            server.stop()
        # Stopped, its data kept for the next run's query scenarios.
        if not was_running:
            postgres.run("pause", check=False)
        shutil.rmtree(tmp, ignore_errors=True)

    for name, err in failures.items():
        rows.append(scenario(name, None, "", "", False, error=err))
    stamp = {"commit": commit(),
             "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    for r in rows:
        r.setdefault("measured", stamp)
    if args.merge and os.path.exists(args.output):
        with open(args.output) as f:
            old = json.load(f)
        kept = [r for r in old.get("scenarios", []) if r["name"] not in chosen]
        for r in kept:
            r.setdefault("measured", {"commit": old.get("commit"), "date": old.get("date")})
        rows.extend(kept)
        if "scale" not in extra and "scale" in old:
            extra["scale"] = old["scale"]
    def order(row):  # rows another script wrote (agent_scale_*) follow their scenario's
        name = row["name"]
        if name in ALL:
            return (ALL.index(name), name)
        prefixes = [s for s in ALL if name.startswith(s)]
        return (ALL.index(max(prefixes, key=len)) if prefixes else len(ALL), name)

    rows.sort(key=order)
    extra.update({"date": datetime.datetime.now(datetime.timezone.utc)
                  .isoformat(timespec="seconds"), "wall_seconds": round(
                      time.monotonic() - t_start, 1), "binaries": os.path.relpath(bin_dir, ROOT),
                  "server_settings": args.set})
    doc = report.write_json(args.output, rows, extra)
    report.write_markdown(args.doc, doc)
    print(report.table(doc))
    log(f"wrote {args.output} and the table in {args.doc} ({extra['wall_seconds']:.0f} s)")
    return 0 if all(r["meets"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
