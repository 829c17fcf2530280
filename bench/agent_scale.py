#!/usr/bin/python3
"""Agent scale: a pod's worth of simulated agents on one podium-server.

Starts a podium-server (embedded PostgreSQL in a temporary directory, or --database-url) and
registers N simulated agents (default 1,000: a multislice job's hosts) on a cpu-1 cluster of N
slices. Each agent heartbeats every 5 s and holds an assignment long-poll, as podium-worker does
(retrying a 503 after its Retry-After). Measured in the same run:

  * heartbeat latency with no poll waiting (the baseline) and with all N polls parked, p50/p99,
    and their ratio; GET /healthz p99 with the polls parked;
  * the server's resident memory and thread count with the polls parked (waiting must cost no
    thread: the count must not grow with N);
  * one gang over all N slices: from POST /api/v1/runs to each agent's poll answering with its
    rank, p50/p99/max;
  * polls refused with 503 while the N agents first connected (the bounded handler queue).

Writes bench/results/agent_scale.json. Targets: heartbeat p99 with the polls parked < 100 ms,
every agent woken with its rank, server threads < 100. Standard library only.

  /usr/bin/python3 bench/agent_scale.py [--agents 1000] [--bin-dir build/release/bin]
"""

import argparse
import concurrent.futures
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dispatch_latency import (Api, ROOT, clean_env, find_bin_dir, free_port,  # noqa: E402
                              percentile, wait_for_line)

TARGET_HEARTBEAT_P99_MS = 100.0
TARGET_SERVER_THREADS = 100


def proc_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out


def summary(values):
    if not values:
        return {"p50": None, "p99": None, "max": None, "n": 0}
    s = sorted(values)
    return {"p50": round(percentile(s, 50), 3), "p99": round(percentile(s, 99), 3),
            "max": round(s[-1], 3) if s else None, "n": len(s)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", type=int, default=1000)
    ap.add_argument("--bin-dir", help="directory with podium-server")
    ap.add_argument("--database-url", default=os.environ.get("PODIUM_BENCH_DATABASE_URL", ""))
    ap.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "agent_scale.json"))
    args = ap.parse_args()
    n = args.agents

    # One socket per parked poll on each side.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * n + 1024)), hard))
    threading.stack_size(256 * 1024)

    bin_dir = find_bin_dir(args.bin_dir)
    tmp = tempfile.mkdtemp(prefix="podium-bench-agents-")
    os.chmod(tmp, 0o755)
    port = free_port()
    token = "pdm_bench_" + os.urandom(16).hex()
    base = f"http://127.0.0.1:{port}"
    server = None
    beats = None
    stop = threading.Event()
    try:
        log_path = os.path.join(tmp, "server.log")
        cmd = [os.path.join(bin_dir, "podium-server"), "--listen", f"127.0.0.1:{port}",
               "--data-dir", os.path.join(tmp, "data"), "--admin-token", token,
               "--set", "log.level=warn",
               "--set", f"limits.max_connections={2 * n + 256}"]
        if args.database_url:
            cmd += ["--database-url", args.database_url]
        with open(log_path, "w") as log:
            server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, env=clean_env())
        wait_for_line(server, log_path, r"podium-server listening on http://", 120, "podium-server")
        admin = Api(base, token)
        cluster = "agents-" + os.urandom(3).hex()
        admin.require("POST", "/api/v1/clusters",
                      {"name": cluster, "accelerator": "cpu-1", "num_slices": n}, status=(201,))
        wtoken = admin.require("POST", f"/api/v1/clusters/{cluster}/worker-tokens",
                               status=(201,))["token"]
        registrar = Api(base, wtoken)

        t0 = time.monotonic()
        agents = []
        for s in range(n):
            reg = registrar.require("POST", "/api/v1/agent/register",
                                    {"cluster": cluster, "slice": s, "host": 0,
                                     "instance": f"bench-{s}"})
            agents.append((reg["worker_id"], Api(base, reg["credential"])))
        register_s = time.monotonic() - t0
        print(f"agent_scale: {n} agents registered in {register_s:.1f} s", flush=True)

        transport_errors = [0]
        lock = threading.Lock()

        heartbeat_failures = [0]

        def call_retrying(api, method, path, body=None, timeout=30):
            # As podium-worker does: a connection refused or reset is retried after a pause
            # (the listen backlog can overflow while a thousand agents connect at once).
            for attempt in range(10):
                try:
                    return api.call(method, path, body, timeout=timeout)
                except OSError as e:
                    if isinstance(e, TimeoutError) or isinstance(getattr(e, "reason", None),
                                                                 TimeoutError):
                        raise
                    with lock:
                        transport_errors[0] += 1
                    time.sleep(0.2 * (attempt + 1))
            raise RuntimeError(f"{method} {path}: no answer after 10 tries")

        def heartbeat_round(pool):
            # A heartbeat slower than the agents' 5 s interval has failed: the server would
            # soon declare the host lost. Counted, and the round goes on.
            def one(a):
                if stop.is_set():
                    return 0.0
                start = time.monotonic()
                try:
                    code, out = call_retrying(a[1], "POST", "/api/v1/agent/heartbeat",
                                              {"worker_id": a[0]}, timeout=5)
                except (TimeoutError, OSError, RuntimeError):
                    code, out = 0, "no answer within 5 s"
                if code != 200:
                    with lock:
                        heartbeat_failures[0] += 1
                return (time.monotonic() - start) * 1000.0
            return list(pool.map(one, agents))

        beats = concurrent.futures.ThreadPoolExecutor(max_workers=16)
        idle_ms = heartbeat_round(beats) + heartbeat_round(beats)

        # Keep every agent alive (heartbeat deadline 15 s) while the polls wait.
        loaded_ms = []
        measuring = threading.Event()

        def keep_alive():
            while not stop.is_set():
                lat = heartbeat_round(beats)
                if measuring.is_set():
                    loaded_ms.extend(lat)
                stop.wait(5)
        keeper = threading.Thread(target=keep_alive, daemon=True)
        keeper.start()

        refused = [0]
        answers = {}

        def poll(i):
            worker_id, api = agents[i]
            while not stop.is_set():
                try:
                    code, out = call_retrying(api, "GET", "/api/v1/agent/assignment?worker_id="
                                              f"{worker_id}&wait=55", timeout=70)
                except (TimeoutError, OSError, RuntimeError):
                    continue
                now = time.monotonic()
                if code == 503:
                    with lock:
                        refused[0] += 1
                    time.sleep(1.0)
                    continue
                if code == 200 and isinstance(out, dict) and "attempt_id" in out:
                    with lock:
                        answers[i] = (now, out["rank"], out["attempt_id"])
                    return
                if code not in (200, 204):
                    raise RuntimeError(f"assignment -> {code}: {out}")

        pollers = [threading.Thread(target=poll, args=(i,), daemon=True) for i in range(n)]
        for t in pollers:
            t.start()
        time.sleep(8)  # every poll reaches the server (after any 503) and parks

        measuring.set()
        healthz = []
        healthz_failures = 0
        for _ in range(200):
            start = time.monotonic()
            try:
                ok = admin.call("GET", "/healthz", timeout=5)[0] == 200
            except OSError:
                ok = False
            healthz.append((time.monotonic() - start) * 1000.0)
            if not ok:
                healthz_failures += 1
        loaded_ms.extend(heartbeat_round(beats))
        status = proc_status(server.pid) if server.poll() is None else {"VmRSS": "0 kB",
                                                                         "Threads": "0"}
        rss_mb = int(status["VmRSS"].split()[0]) / 1024.0
        threads = int(status["Threads"])
        measuring.clear()

        spec = {"name": "gang-" + os.urandom(3).hex(), "cluster": cluster, "workload": "command",
                "command": ["true"], "max_restarts": 0}
        t_submit = time.monotonic()
        try:
            code, run = admin.call("POST", "/api/v1/runs", spec, timeout=30)
        except OSError as e:
            code, run = 0, str(e)
        gang_error = None if code == 201 else f"POST /api/v1/runs -> {code}: {run}"
        deadline = time.monotonic() + (120 if gang_error is None else 0)
        while len(answers) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        woken = dict(answers)
        wake_ms = [(t - t_submit) * 1000.0 for (t, _, _) in woken.values()]
        ranks = sorted(r for (_, r, _) in woken.values())
        attempts = {a for (_, _, a) in woken.values()}
        if gang_error is None:
            admin.call("POST", f"/api/v1/runs/{run['id']}/cancel")

        idle = summary(idle_ms)
        loaded = summary(loaded_ms)
        ratio = round(loaded["p99"] / idle["p99"], 3) if idle["p99"] and loaded["p99"] else None
        meets = (loaded["p99"] is not None and loaded["p99"] < TARGET_HEARTBEAT_P99_MS
                 and len(woken) == n
                 and heartbeat_failures[0] == 0 and healthz_failures == 0
                 and ranks == list(range(n)) and len(attempts) == 1
                 and threads < TARGET_SERVER_THREADS)
        result = {
            "benchmark": "agent_scale",
            "what": f"{n} simulated agents (heartbeat every 5 s, assignment long-poll wait=55) "
                    "on one podium-server with default handler threads",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"cpus": os.cpu_count(), "loadavg": list(os.getloadavg())},
            "database": "external" if args.database_url else "embedded",
            "binaries": os.path.relpath(bin_dir, ROOT),
            "agents": n,
            "register_seconds": round(register_s, 2),
            "heartbeat_ms": {"baseline_no_polls": idle, "with_polls_parked": loaded,
                             "ratio_p99": ratio},
            "healthz_ms_with_polls_parked": summary(healthz),
            "healthz_failed": healthz_failures,
            "server_with_polls_parked": {"rss_mb": round(rss_mb, 1), "threads": threads},
            "gang_wake_ms": summary(wake_ms),
            "agents_woken_with_their_rank": len(woken),
            "gang_submission_error": gang_error,
            "polls_refused_503_while_connecting": refused[0],
            "client_transport_errors_retried": transport_errors[0],
            "heartbeats_failed": heartbeat_failures[0],
            "targets": {"heartbeat_p99_ms_with_polls_parked": TARGET_HEARTBEAT_P99_MS,
                        "server_threads_below": TARGET_SERVER_THREADS,
                        "every_agent_woken": True},
            "meets_targets": meets,
        }
        os.makedirs(os.path.dirname(args.output), exist_ok=True)
        with open(args.output, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        print(json.dumps(result, indent=2))
        return 0 if meets else 1
    finally:
        stop.set()
        if beats is not None:
            beats.shutdown(wait=False, cancel_futures=True)
        if server and server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    sys.exit(main())
