#!/usr/bin/python3
"""Dispatch latency: from a client's submit to the run's process running, measured inside it.

Starts a podium-server (embedded PostgreSQL in a temporary directory, or --database-url), a
cpu-1 cluster with one podium-worker, then submits N `command` runs one after the other. Each
run's process prints its own start time (`date +%s.%N`, CLOCK_REALTIME like the client's
clock); the latency of a run is that time minus the client's clock just before it sent
POST /api/v1/runs. The next run is submitted once the previous one has succeeded and the agent
is back in its long poll, so every sample is one dispatch to an idle worker.

Prints p50/p90/max and writes bench/results/dispatch_latency.json. Target: p50 < 50 ms.
Standard library only (Debian's /usr/bin/python3).

  /usr/bin/python3 bench/dispatch_latency.py [--bin-dir build/release/bin] [-n 30]
"""

import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

from kit import ROOT  # bench/ is this script's directory, first on sys.path
from kit.http import Api
from kit.podium import PodiumServer, PodiumWorker, find_bin_dir
from kit.results import write_json
from kit.stats import percentile

TARGET_P50_MS = 50.0  # issue 11
MARK = "podium-bench-start"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--runs", type=int, default=30, help="measured runs (default 30)")
    ap.add_argument("--warmup", type=int, default=2, help="runs before measuring (default 2)")
    ap.add_argument("--bin-dir", help="directory with podium-server and podium-worker")
    ap.add_argument("--database-url", default=os.environ.get("PODIUM_BENCH_DATABASE_URL", ""),
                    help="an empty database for the server (default: embedded PostgreSQL)")
    ap.add_argument("--output", default=os.path.join(ROOT, "bench", "results",
                                                      "dispatch_latency.json"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()

    bin_dir = find_bin_dir(args.bin_dir,
                           build_dirs=("build/release/bin", "build-bench/bin", "build/test/bin",
                                       "build/e2e-dev/bin"), who="dispatch_latency")
    tmp = tempfile.mkdtemp(prefix="podium-bench-dispatch-")
    os.chmod(tmp, 0o755)  # the embedded PostgreSQL runs as 'postgres' when we are root
    token = "pdm_bench_" + os.urandom(16).hex()
    server = PodiumServer(bin_dir, tmp, token, database_url=args.database_url,
                          settings=["log.level=warn",
                                    "workloads.output_dir=" + os.path.join(tmp, "outputs")])
    worker = None

    try:
        server.start()
        base = server.url
        api = Api(base, token)

        cluster = "bench-" + os.urandom(4).hex()
        api.require("POST", "/api/v1/clusters",
                    {"name": cluster, "accelerator": "cpu-1", "num_slices": 1}, status=(201,))
        wtoken = api.require("POST", f"/api/v1/clusters/{cluster}/worker-tokens",
                             status=(201,))["token"]
        worker = PodiumWorker(bin_dir, base, wtoken, cluster, 0, 0, os.path.join(tmp, "worker"),
                              name="worker").start()

        samples = []
        warmup = []
        submit_rtt = []
        total = args.warmup + args.runs
        for i in range(total):
            spec = {"name": f"dispatch-{i:03d}-{os.urandom(3).hex()}", "cluster": cluster,
                    "workload": "command", "max_restarts": 0,
                    "command": ["/bin/sh", "-c", f"echo {MARK} $(date +%s.%N)"]}
            t_submit = time.time()
            code, run = api.call("POST", "/api/v1/runs", spec)
            t_reply = time.time()
            if code != 201:
                raise RuntimeError(f"POST /api/v1/runs -> {code}: {run}")
            run_id = run["id"]
            deadline = time.monotonic() + 60
            state = run.get("state")
            while state not in ("succeeded", "failed", "cancelled"):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"run {run_id} still '{state}' after 60 s")
                time.sleep(0.02)
                state = api.require("GET", f"/api/v1/runs/{run_id}")["state"]
            if state != "succeeded":
                raise RuntimeError(f"run {run_id} ended {state}: "
                                   + json.dumps(api.require("GET", f"/api/v1/runs/{run_id}")))
            logs = api.require("GET", f"/api/v1/runs/{run_id}/logs?limit=50")
            started = None
            for item in logs.get("items", []):
                m = re.search(MARK + r" (\d+\.\d+)", item.get("line", ""))
                if m:
                    started = float(m.group(1))
            if started is None:
                raise RuntimeError(f"run {run_id}: no '{MARK}' line in its logs: {logs}")
            latency_ms = (started - t_submit) * 1000.0
            (warmup if i < args.warmup else samples).append(round(latency_ms, 3))
            if i >= args.warmup:
                submit_rtt.append(round((t_reply - t_submit) * 1000.0, 3))
            # Let the agent settle back into its long poll: each sample is a dispatch to an idle
            # worker, not one that rides on the previous run's completion.
            time.sleep(0.2)

        s = sorted(samples)
        result = {
            "benchmark": "dispatch_latency",
            "what": "POST /api/v1/runs (client clock before sending) -> the run's process "
                    "running (its own clock, `date +%s.%N`); cpu-1 cluster, one idle agent",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"cpus": os.cpu_count(), "loadavg": list(os.getloadavg())},
            "database": "external" if args.database_url else "embedded",
            "runs": len(samples),
            "warmup_runs_ms": warmup,
            "latency_ms": {
                "p50": round(percentile(s, 50), 3),
                "p90": round(percentile(s, 90), 3),
                "p99": round(percentile(s, 99), 3),
                "max": round(s[-1], 3),
                "min": round(s[0], 3),
                "mean": round(statistics.mean(s), 3),
            },
            "submit_round_trip_ms_p50": round(statistics.median(submit_rtt), 3),
            "target_p50_ms": TARGET_P50_MS,
            "meets_target": percentile(s, 50) < TARGET_P50_MS,
            "samples_ms": samples,
        }
        write_json(args.output, result)
        lat = result["latency_ms"]
        print(f"dispatch latency over {len(s)} runs: p50 {lat['p50']:.1f} ms, "
              f"p90 {lat['p90']:.1f} ms, max {lat['max']:.1f} ms "
              f"(min {lat['min']:.1f}, mean {lat['mean']:.1f}; submit round trip p50 "
              f"{result['submit_round_trip_ms_p50']:.1f} ms)")
        print(f"target p50 < {TARGET_P50_MS:.0f} ms: "
              + ("met" if result["meets_target"] else "NOT met"))
        print(f"wrote {args.output}")
        return 0 if result["meets_target"] else 1
    except Exception as e:  # report with the logs' tails
        print(f"dispatch_latency: {e}", file=sys.stderr)
        for p in (server, worker):
            if p is not None and p.proc is not None:
                print(f"---- {p.proc.log_path} (last 20 lines) ----\n" + p.log_tail(20),
                      file=sys.stderr)
        return 2
    finally:
        for p in (worker, server):
            if p is not None:
                p.stop()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
