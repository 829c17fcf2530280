#!/usr/bin/python3
"""Agent scale: a pod's worth of simulated agents on one podium-server (issue 13's acceptance).

Starts a podium-server (embedded PostgreSQL in a temporary directory, or --database-url) and
simulates N agents (default 1,000) over real HTTP on loopback, as podium-worker behaves: each
registers its (cluster, slice, host), heartbeats every 3 s with the ranks it supervises, and
holds an assignment long-poll (wait=25) on keep-alive connections, retrying a 503 after its
Retry-After. An agent that is handed a rank reports it `running`, then `exited` 0, through the
agent API (both idempotent), and polls again. The agents are spread over cpu-1 clusters (one
host per slice): --gang-clusters clusters of --gang-hosts slices (default 3 x 256) on which
gangs run, and one cluster for the rest (default 232 slices) whose agents only heartbeat and poll.

For --duration seconds (default 600), each gang cluster gets `command` runs (["true"],
max_restarts 0) over all its slices, submitted as the admin: the next one when the previous has
succeeded and --gang-interval seconds (default 5) after the previous submission, so 3 clusters
start a 256-host gang every 1.7 s on average (about 150 rank starts and exits a second on top of
the heartbeats and polls). --gang-interval 0 submits back to back: a closed loop whose gang
rate is the capacity of the machine (server, PostgreSQL and this generator on the same cores),
and whose latencies are then those of a saturated machine. Measured:

  * per gang, the time from POST /api/v1/runs to the last rank's assignment answer (p50/p99/max
    over gangs), and per rank; the time to the run's `succeeded`;
  * heartbeat latency p50/p99/max over the whole run, and failed heartbeats, timed in a process
    that only heartbeats (HeartbeatChild: real agents are separate processes, and a gang's
    burst in this one would add its own event-loop delay);
  * hosts declared lost: workers reported unhealthy by GET /api/v1/clusters/{c}/workers (every
    10 s and at the end), attempts with a lost rank or more than one attempt per run, runs not
    succeeded, and "worker lost" lines in the server's log;
  * the server's threads and resident memory, sampled every second (max), its CPU time, and the
    machine's load average; the load generator's own event-loop lag (its latencies include it).

Writes bench/results/agent_scale.json and, when bench/results/latest.json holds the issue-11
format, replaces its agent_scale_* entries. Targets: heartbeat p99 < 100 ms, every 256-host gang
assigned to every rank within 1 s (p99 over gangs), 0 hosts lost. Standard library only.

  /usr/bin/python3 bench/agent_scale.py [--bin-dir build/scale/bin] [--duration 600]
  /usr/bin/python3 bench/agent_scale.py --quick        # smoke run: 64 agents, gangs of 16, 60 s
  /usr/bin/python3 bench/agent_scale.py --single-gang  # the earlier one-gang wake-up measure
"""

import argparse
import asyncio
import concurrent.futures
import datetime
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kit import ROOT  # noqa: E402
from kit.http import Api  # noqa: E402
from kit.podium import PodiumServer, find_bin_dir  # noqa: E402
from kit.procs import proc_status  # noqa: E402
from kit.results import commit, ratio_of, write_json  # noqa: E402
from kit.stats import summary  # noqa: E402

TARGET_HEARTBEAT_P99_MS = 100.0
TARGET_SERVER_THREADS = 100
TARGET_GANG_ASSIGNED_MS = 1000.0


def server_bin_dir(requested):
    return find_bin_dir(requested, binaries=("podium-server",),
                        build_dirs=("build/scale/bin", "build/release/bin", "build-bench/bin",
                                    "build/test/bin"), who="agent_scale")


def start_server(bin_dir, tmp, token, max_connections, database_url):
    """podium-server on loopback (embedded PostgreSQL under tmp unless database_url), started
    and ready."""
    return PodiumServer(bin_dir, tmp, token, database_url=database_url,
                        settings=["log.level=warn",
                                  f"limits.max_connections={max_connections}"]).start()


def single_gang_main(args):
    n = args.agents

    # One socket per parked poll on each side.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * n + 1024)), hard))
    threading.stack_size(256 * 1024)

    bin_dir = server_bin_dir(args.bin_dir)
    tmp = tempfile.mkdtemp(prefix="podium-bench-agents-")
    os.chmod(tmp, 0o755)
    token = "pdm_bench_" + os.urandom(16).hex()
    server = None
    beats = None
    stop = threading.Event()
    try:
        server = start_server(bin_dir, tmp, token, 2 * n + 256, args.database_url)
        base = server.url
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
        status = proc_status(server.pid) if server.running() else {"VmRSS": "0 kB",
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
        write_json(args.output, result)
        print(json.dumps(result, indent=2))
        return 0 if meets else 1
    finally:
        stop.set()
        if beats is not None:
            beats.shutdown(wait=False, cancel_futures=True)
        if server is not None:
            server.stop(grace=30)


# ---- sustained mode: agents on keep-alive connections, gangs back to back -------------------

class Http:
    """One keep-alive HTTP/1.1 connection (asyncio streams), as an agent's client holds."""

    def __init__(self, port, token, counters):
        self.port = port
        self.token = token
        self.counters = counters
        self.reader = self.writer = None

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def _read_response(self):
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        code = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                body += await self.reader.readexactly(size + 2)
                body = body[:-2]
        else:
            body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            self.close()
        try:
            out = json.loads(body) if body else None
        except ValueError:
            out = body.decode(errors="replace")
        return code, out, headers

    async def call(self, method, path, body=None, timeout=30.0):
        """(status, json body, headers). A request on a reused connection that the server had
        closed is sent again once on a new one (every call made here is idempotent)."""
        data = b"" if body is None else json.dumps(body).encode()
        req = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
               f"Authorization: Bearer {self.token}\r\nContent-Length: {len(data)}\r\n"
               + ("Content-Type: application/json\r\n" if body is not None else "")
               + "\r\n").encode() + data
        for attempt in range(2):
            fresh = self.writer is None
            try:
                if fresh:
                    self.reader, self.writer = await asyncio.wait_for(
                        asyncio.open_connection("127.0.0.1", self.port, limit=1 << 20), timeout)
                    self.counters["connections_opened"] += 1
                self.writer.write(req)
                return await asyncio.wait_for(self._read_response(), timeout)
            except asyncio.TimeoutError:  # (a subclass of OSError since Python 3.11)
                self.close()
                self.counters["timeouts"] += 1
                raise
            except (ConnectionError, asyncio.IncompleteReadError, OSError) as e:
                self.close()
                self.counters["transport_errors"] += 1
                if fresh or attempt == 1:
                    raise ConnectionError(f"{method} {path}: {e!r}") from e
        raise ConnectionError(f"{method} {path}: no answer")


class Agent:
    def __init__(self, cluster, slice_, worker_id, credential, port, counters):
        self.cluster = cluster
        self.slice = slice_
        self.worker_id = worker_id
        self.hb = Http(port, credential, counters)
        self.poll = Http(port, credential, counters)
        self.report = Http(port, credential, counters)
        self.running = {}  # (attempt_id, rank) -> pid, from launch until its exit is acknowledged
        self.seen = set()  # (attempt_id, rank) already acted on: a redelivery is ignored


class HeartbeatChild:
    """The agents' heartbeats, sent from a process of their own.

    Real agents are 1,000 processes on 1,000 hosts. Simulated in one asyncio process, a gang's
    burst (768 answers, then as many reports and polls) keeps the event loop busy for hundreds
    of milliseconds, and every heartbeat timed across that burst would carry the generator's own
    delay rather than the server's. This process only heartbeats, so its loop stays free; the
    parent tells it, line by line on its stdin, which ranks each agent supervises (the body of a
    heartbeat, as podium-worker sends it)."""

    def __init__(self):
        self.proc = None

    async def start(self, args, port, agents, t_begin):
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, os.path.abspath(__file__), "--heartbeat-child",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        first = {"port": port, "interval": args.heartbeat, "t_begin": t_begin,
                 "agents": [[a.worker_id, a.hb.token] for a in agents]}
        self.proc.stdin.write((json.dumps(first) + "\n").encode())
        await self.proc.stdin.drain()

    def running(self, a):
        line = {"i": a.index, "running": [[at, r, pid] for (at, r), pid in a.running.items()]}
        self.proc.stdin.write((json.dumps(line) + "\n").encode())

    async def finish(self):
        self.proc.stdin.write(b'{"stop": true}\n')
        await self.proc.stdin.drain()
        out = await asyncio.wait_for(self.proc.stdout.read(), 120)
        await self.proc.wait()
        return json.loads(out)


def heartbeat_child_main():
    cfg = json.loads(sys.stdin.readline())
    return asyncio.run(heartbeat_child(cfg))


async def heartbeat_child(cfg):
    loop = asyncio.get_running_loop()
    t_begin = cfg["t_begin"]
    interval = cfg["interval"]
    counters = {"connections_opened": 0, "transport_errors": 0, "timeouts": 0}
    conns = [Http(cfg["port"], cred, counters) for (_, cred) in cfg["agents"]]
    running = [[] for _ in cfg["agents"]]
    stop = asyncio.Event()
    hb_ms, hb_failed, lag_ms = [], [], []

    def apply(msg):
        if msg.get("stop"):
            stop.set()
        else:
            running[msg["i"]] = msg["running"]

    def read_stdin():  # a thread: the parent's updates, in order
        for line in sys.stdin:
            loop.call_soon_threadsafe(apply, json.loads(line))
        loop.call_soon_threadsafe(apply, {"stop": True})

    threading.Thread(target=read_stdin, daemon=True).start()

    async def beat(i, worker_id):
        nxt = time.monotonic() + random.uniform(0, interval)
        while not stop.is_set():
            delay = nxt - time.monotonic()
            if delay > 0:
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                    return
                except asyncio.TimeoutError:
                    pass
            body = {"worker_id": worker_id,
                    "running": [{"attempt_id": at, "rank": r, "pid": pid}
                                for (at, r, pid) in running[i]]}
            start = time.monotonic()
            try:
                code, out, _ = await conns[i].call("POST", "/api/v1/agent/heartbeat", body,
                                                   timeout=10)
            except (ConnectionError, asyncio.TimeoutError) as e:
                code, out = 0, repr(e)
            done = time.monotonic()
            hb_ms.append((round(start - t_begin, 3), round((done - start) * 1000.0, 3)))
            if code != 200:
                hb_failed.append((round(start - t_begin, 1), code, str(out)[:200]))
            nxt += interval
            if nxt < done:  # late: the next one goes at once, as a slow agent would
                nxt = done

    async def lag():
        while not stop.is_set():
            t = time.monotonic()
            await asyncio.sleep(0.5)
            lag_ms.append((time.monotonic() - t - 0.5) * 1000.0)

    tasks = [asyncio.create_task(beat(i, w)) for i, (w, _) in enumerate(cfg["agents"])]
    tasks.append(asyncio.create_task(lag()))
    await asyncio.gather(*tasks, return_exceptions=True)
    for c in conns:
        c.close()
    sys.stdout.write(json.dumps({"hb_ms": hb_ms, "hb_failed": hb_failed, "counters": counters,
                                 "event_loop_lag_ms": summary(lag_ms)}))
    sys.stdout.flush()
    return 0


async def sustained(args, port, token, server, log_path, tmp, bin_dir):
    counters = {"connections_opened": 0, "transport_errors": 0, "timeouts": 0}
    admin = Http(port, token, counters)
    t_begin = time.monotonic()
    end_of_gangs = t_begin + args.duration  # set again once registered

    # Clusters: --gang-clusters of --gang-hosts slices, the rest on one idle cluster.
    suffix = os.urandom(3).hex()
    layout = []
    left = args.agents
    for g in range(args.gang_clusters):
        k = min(args.gang_hosts, left)
        if k > 0:
            layout.append((f"gang{g}-{suffix}", k, True))
            left -= k
    if left > 0:
        layout.append((f"idle-{suffix}", left, False))
    agents = []
    t0 = time.monotonic()
    for name, slices, _ in layout:
        code, out, _ = await admin.call("POST", "/api/v1/clusters",
                                        {"name": name, "accelerator": "cpu-1",
                                         "num_slices": slices})
        if code != 201:
            raise RuntimeError(f"POST /api/v1/clusters -> {code}: {out}")
        code, out, _ = await admin.call("POST", f"/api/v1/clusters/{name}/worker-tokens")
        if code != 201:
            raise RuntimeError(f"worker-tokens -> {code}: {out}")
        wtoken = out["token"]
        sem = asyncio.Semaphore(16)

        async def register(s, wtoken=wtoken, name=name):
            async with sem:
                conn = Http(port, wtoken, counters)
                try:
                    for _ in range(20):
                        code, out, _ = await conn.call(
                            "POST", "/api/v1/agent/register",
                            {"cluster": name, "slice": s, "host": 0, "hostname": f"{name}-{s}",
                             "address": "127.0.0.1", "devices": 1, "version": "bench",
                             "instance": f"bench-{suffix}-{name}-{s}", "running": []})
                        if code == 200:
                            return Agent(name, s, out["worker_id"], out["credential"], port,
                                         counters)
                        await asyncio.sleep(1.0)
                    raise RuntimeError(f"register {name}/{s} -> {code}: {out}")
                finally:
                    conn.close()
        agents += await asyncio.gather(*(register(s) for s in range(slices)))
    register_s = time.monotonic() - t0
    print(f"agent_scale: {len(agents)} agents registered on {len(layout)} clusters in "
          f"{register_s:.1f} s", flush=True)

    stop_agents = asyncio.Event()
    polls = {"answered_204": 0, "refused_503": 0, "errors": 0, "assignments": 0,
             "redeliveries_ignored": 0, "cancels": 0}
    reports = {"ok": 0, "conflict_409": 0, "failed": 0}
    answers = {}  # run_id -> [(monotonic, rank, attempt_id)]
    answer_events = {}  # run_id -> asyncio.Event set when world-size answers arrived
    gang_size = {}  # run_id -> expected ranks

    async def report(a, attempt_id, body):
        for attempt in range(10):
            try:
                code, out, _ = await a.report.call(
                    "POST", f"/api/v1/agent/attempts/{attempt_id}/status", body, timeout=30)
            except (ConnectionError, asyncio.TimeoutError):
                code, out = 0, None
            if code == 200:
                reports["ok"] += 1
                return True
            if code == 409:
                reports["conflict_409"] += 1
                return False
            if 400 <= code < 500:
                break
            await asyncio.sleep(min(10.0, 0.5 * 2 ** attempt))
        reports["failed"] += 1
        return False

    async def poll_loop(a):
        await asyncio.sleep(random.uniform(0, args.heartbeat))  # agents start spread out
        while not stop_agents.is_set():
            try:
                code, out, headers = await a.poll.call(
                    "GET", f"/api/v1/agent/assignment?worker_id={a.worker_id}&wait={args.wait}",
                    timeout=args.wait + 15)
            except (ConnectionError, asyncio.TimeoutError):
                polls["errors"] += 1
                await asyncio.sleep(1.0)
                continue
            now = time.monotonic()
            if code == 204:
                polls["answered_204"] += 1
                continue
            if code == 503:
                polls["refused_503"] += 1
                await asyncio.sleep(float(headers.get("retry-after", "1")))
                continue
            if code != 200 or not isinstance(out, dict):
                polls["errors"] += 1
                await asyncio.sleep(1.0)
                continue
            if "cancel" in out:
                polls["cancels"] += 1
                continue
            key = (out["attempt_id"], out["rank"])
            if key in a.seen:
                polls["redeliveries_ignored"] += 1
                continue
            a.seen.add(key)
            polls["assignments"] += 1
            run_id = out["run_id"]
            answers.setdefault(run_id, []).append((now, out["rank"], out["attempt_id"]))
            ev = answer_events.setdefault(run_id, asyncio.Event())
            if len(answers[run_id]) >= gang_size.get(run_id, 1 << 30):
                ev.set()
            # The rank's process: `true` starts and exits at once.
            pid = 100000 + a.slice
            a.running[key] = pid
            hb_child.running(a)
            if await report(a, out["attempt_id"], {"rank": out["rank"], "state": "running",
                                                   "pid": pid}):
                await report(a, out["attempt_id"], {"rank": out["rank"], "state": "exited",
                                                    "exit_code": 0, "signal": None})
            a.running.pop(key, None)
            hb_child.running(a)

    # Server and machine sampling, every second.
    samples = {"threads": [], "rss_mb": [], "loadavg": []}
    lag_ms = []

    async def sampler():
        while not stop_agents.is_set():
            try:
                st = proc_status(server.pid)
                samples["threads"].append(int(st["Threads"]))
                samples["rss_mb"].append(int(st["VmRSS"].split()[0]) / 1024.0)
            except (OSError, KeyError, ValueError):
                pass
            samples["loadavg"].append(os.getloadavg()[0])
            want = time.monotonic() + 1.0
            try:
                await asyncio.wait_for(stop_agents.wait(), 1.0)
                return
            except asyncio.TimeoutError:
                pass
            lag_ms.append(max(0.0, (time.monotonic() - want) * 1000.0))

    unhealthy_seen = {}  # worker id -> first time seen unhealthy (s since start)
    final_errors = []  # the final checks' failed requests (then the counts are incomplete)
    health_checks = [0]
    reader = Http(port, token, counters)

    async def health_watch():
        while not stop_agents.is_set():
            for name, _, _ in layout:
                try:
                    code, out, _ = await reader.call("GET", f"/api/v1/clusters/{name}/workers",
                                                     timeout=30)
                except (ConnectionError, asyncio.TimeoutError):
                    continue
                if code == 200:
                    for w in out["items"]:
                        if not w["healthy"]:
                            unhealthy_seen.setdefault(w["id"], round(time.monotonic() - t_begin,
                                                                     1))
            health_checks[0] += 1
            try:
                await asyncio.wait_for(stop_agents.wait(), 10.0)
                return
            except asyncio.TimeoutError:
                pass

    gangs = []  # per gang: dict

    async def gang_driver(name, slices):
        conn = Http(port, token, counters)
        submit_conn = None
        last_submit = None
        for i in range(args.max_gangs):
            if last_submit is not None and args.gang_interval > 0:
                await asyncio.sleep(max(0.0, last_submit + args.gang_interval - time.monotonic()))
            if time.monotonic() >= end_of_gangs:
                break
            last_submit = time.monotonic()
            spec = {"name": f"{name}-g{i}", "cluster": name, "workload": "command",
                    "command": ["true"], "max_restarts": 0}
            refused = 0
            for _ in range(30):  # a 503 (handler queue full) created nothing: again, as the CLI
                submit_conn = Http(port, token, counters)  # never resent: a new connection
                t_submit = time.monotonic()
                try:
                    code, run, hdrs = await submit_conn.call("POST", "/api/v1/runs", spec,
                                                             timeout=30)
                except (ConnectionError, asyncio.TimeoutError) as e:
                    code, run, hdrs = 0, repr(e), {}
                submit_conn.close()
                if code != 503:
                    break
                refused += 1
                await asyncio.sleep(float(hdrs.get("retry-after", "1")))
            t_created = time.monotonic()
            g = {"cluster": name, "index": i, "submit_ms": round((t_created - t_submit) * 1e3, 3),
                 "submit_refused_503": refused}
            gangs.append(g)
            if code != 201:
                g["error"] = f"POST /api/v1/runs -> {code}: {str(run)[:300]}"
                await asyncio.sleep(1.0)
                continue
            run_id = run["id"]
            g["run_id"] = run_id
            gang_size[run_id] = slices
            ev = answer_events.setdefault(run_id, asyncio.Event())
            if len(answers.get(run_id, [])) >= slices:
                ev.set()
            try:
                await asyncio.wait_for(ev.wait(), args.gang_timeout)
            except asyncio.TimeoutError:
                pass
            got = answers.get(run_id, [])
            g["ranks_assigned"] = len(got)
            g["distinct_ranks"] = len({r for (_, r, _) in got})
            if got:
                g["assigned_ms"] = round((max(t for (t, _, _) in got) - t_submit) * 1e3, 3)
                g["first_rank_ms"] = round((min(t for (t, _, _) in got) - t_submit) * 1e3, 3)
                g["rank_ms"] = [round((t - t_submit) * 1e3, 3) for (t, _, _) in got]
            # Wait for the run's end before the next one (its hosts are then free).
            deadline = time.monotonic() + args.gang_timeout
            state = None
            while time.monotonic() < deadline:
                try:
                    code, out, _ = await conn.call("GET", f"/api/v1/runs/{run_id}", timeout=30)
                    state = out.get("state") if code == 200 and isinstance(out, dict) else None
                except (ConnectionError, asyncio.TimeoutError):
                    state = None
                if state in ("succeeded", "failed", "cancelled", "lost"):
                    break
                await asyncio.sleep(0.1)
            g["state"] = state
            g["ended_ms"] = round((time.monotonic() - t_submit) * 1e3, 3)
            print(f"agent_scale: t={time.monotonic() - t_begin:6.1f}s {name} gang {i}: "
                  f"{g['ranks_assigned']}/{slices} ranks, last assigned "
                  f"{g.get('assigned_ms')} ms, run {state} after {g['ended_ms']:.0f} ms",
                  flush=True)
        conn.close()

    tasks = []
    for i, a in enumerate(agents):
        a.index = i
    hb_child = HeartbeatChild()
    await hb_child.start(args, port, agents, t_begin)
    for a in agents:
        if not args.no_poll:
            tasks.append(asyncio.create_task(poll_loop(a)))
    tasks.append(asyncio.create_task(sampler()))
    watcher = asyncio.create_task(health_watch())
    tasks.append(watcher)
    # Every poll reaches the server and parks before the first gang.
    await asyncio.sleep(min(8.0, args.duration / 4))
    t_gangs = time.monotonic()
    end_of_gangs = t_gangs + args.duration
    drivers = [asyncio.create_task(gang_driver(name, slices))
               for name, slices, gang in layout if gang]
    try:
        await asyncio.wait_for(asyncio.gather(*drivers),
                               args.duration + 2 * args.gang_timeout + 30)
    except asyncio.TimeoutError:
        for d in drivers:
            d.cancel()
    gangs_s = time.monotonic() - t_gangs
    watcher.cancel()
    await asyncio.gather(watcher, return_exceptions=True)

    # Final look, agents still alive: every worker healthy, every run's attempts.
    final = Http(port, token, counters)  # its own connection: one request at a time on each
    final_unhealthy = 0
    for name, _, _ in layout:
        try:
            code, out, _ = await final.call("GET", f"/api/v1/clusters/{name}/workers",
                                            timeout=60)
        except (ConnectionError, asyncio.TimeoutError) as e:
            code, out = 0, repr(e)
        if code != 200:
            final_errors.append(f"workers of {name}: {code} {str(out)[:200]}")
        else:
            for w in out["items"]:
                if not w["healthy"]:
                    final_unhealthy += 1
                    unhealthy_seen.setdefault(w["id"], round(time.monotonic() - t_begin, 1))
    lost_ranks = 0
    extra_attempts = 0
    failure_classes = {}
    for g in gangs:
        if "run_id" not in g:
            continue
        try:
            code, out, _ = await final.call("GET", f"/api/v1/runs/{g['run_id']}/attempts",
                                            timeout=60)
        except (ConnectionError, asyncio.TimeoutError) as e:
            code, out = 0, repr(e)
        if code != 200 or not isinstance(out, dict):
            final_errors.append(f"attempts of {g['run_id']}: {code} {str(out)[:200]}")
            continue
        items = out.get("items", [])
        extra_attempts += max(0, len(items) - 1)
        for att in items:
            if att.get("failure_class"):
                failure_classes[att["failure_class"]] = \
                    failure_classes.get(att["failure_class"], 0) + 1
            lost_ranks += sum(1 for h in att.get("hosts", []) if h.get("state") == "lost")
    stop_agents.set()
    hb = await hb_child.finish()
    hb_ms, hb_failed = hb["hb_ms"], hb["hb_failed"]
    await asyncio.sleep(0.2)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for a in agents:
        a.hb.close()
        a.poll.close()
        a.report.close()
    admin.close()
    reader.close()
    final.close()

    with open(log_path, errors="replace") as f:
        log_text = f.read()
    worker_lost_lines = len(re.findall(r'"worker lost"', log_text))
    try:
        st = proc_status(server.pid)
        rss_hwm_mb = int(st["VmHWM"].split()[0]) / 1024.0
        with open(f"/proc/{server.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        server_cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, KeyError, ValueError, IndexError):
        rss_hwm_mb, server_cpu_s = None, None

    hb_values = [ms for (_, ms) in hb_ms]
    warmup_s = t_gangs - t_begin
    hb_gang_phase = [ms for (t, ms) in hb_ms if warmup_s <= t <= warmup_s + gangs_s]
    done = [g for g in gangs if "run_id" in g]
    full = [g for g in done if g.get("distinct_ranks") == gang_size[g["run_id"]]]
    gang_assigned = summary([g["assigned_ms"] for g in full])
    rank_ms = [x for g in done for x in g.get("rank_ms", [])]
    not_succeeded = [g for g in gangs if g.get("state") != "succeeded"]
    gang_hosts = [s for (_, s, gang) in layout if gang]
    lost_hosts = len(unhealthy_seen)
    meets = {
        "heartbeat_p99_ms": bool(hb_values) and summary(hb_values)["p99"]
        < TARGET_HEARTBEAT_P99_MS and not hb_failed,
        "gang_assigned_p99_ms": gang_assigned["p99"] is not None
        and gang_assigned["p99"] < TARGET_GANG_ASSIGNED_MS and len(full) == len(gangs),
        "hosts_lost": lost_hosts == 0 and lost_ranks == 0 and worker_lost_lines == 0
        and not final_errors,
        "runs_succeeded": bool(gangs) and not not_succeeded,
        "server_threads_below": bool(samples["threads"])
        and max(samples["threads"]) < TARGET_SERVER_THREADS,
    }
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    la = samples["loadavg"]
    result = {
        "benchmark": "agent_scale",
        "mode": "sustained",
        "what": f"{len(agents)} simulated agents (heartbeat every {args.heartbeat:g} s, assignment "
                f"long-poll wait={args.wait}, keep-alive connections) on one podium-server with "
                f"default handler threads; gangs of {args.gang_hosts} hosts (`true`, "
                f"max_restarts 0) on {len(gang_hosts)} clusters, each "
                + (f"starting one every {args.gang_interval:g} s (after the previous ended)"
                   if args.gang_interval > 0 else "back to back") +
                f" for {args.duration:g} s; rank reports running then exited 0",
        "gang_interval_seconds": args.gang_interval,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit(),
        "command": "/usr/bin/python3 bench/agent_scale.py " + " ".join(sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(),
                    "loadavg_1m_during_run": summary(la) if la else None,
                    "loadavg_at_end": list(os.getloadavg())},
        "database": "external" if args.database_url else "embedded",
        "binaries": os.path.relpath(bin_dir, ROOT),
        "agents": len(agents),
        "clusters": [{"name": n, "slices": s, "gangs": g} for (n, s, g) in layout],
        "register_seconds": round(register_s, 2),
        "gang_phase_seconds": round(gangs_s, 1),
        "heartbeat_ms": summary(hb_values),
        "heartbeat_ms_while_gangs_ran": summary(hb_gang_phase),
        "warmup_seconds": round(warmup_s, 1),
        "heartbeats_failed": len(hb_failed),
        "heartbeat_failures_first": hb_failed[:10],
        "gangs": len(gangs),
        "gangs_fully_assigned": len(full),
        "gang_assigned_ms": gang_assigned,
        "gang_first_rank_ms": summary([g["first_rank_ms"] for g in full]),
        "rank_assigned_ms": summary(rank_ms),
        "gang_submit_ms": summary([g["submit_ms"] for g in gangs]),
        "gang_submissions_refused_503": sum(g.get("submit_refused_503", 0) for g in gangs),
        "gang_run_succeeded_ms": summary([g["ended_ms"] for g in done
                                          if g.get("state") == "succeeded"]),
        "gangs_per_cluster": {n: sum(1 for g in gangs if g["cluster"] == n)
                              for (n, _, gg) in layout if gg},
        "hosts_lost": lost_hosts,
        "hosts_unhealthy_at_end": final_unhealthy,
        "lost_hosts_first_seen_s": dict(list(unhealthy_seen.items())[:20]),
        "ranks_lost": lost_ranks,
        "worker_lost_log_lines": worker_lost_lines,
        "runs_not_succeeded": len(not_succeeded),
        "runs_not_succeeded_first": [{k: g.get(k) for k in ("cluster", "index", "run_id",
                                                             "state", "error")}
                                     for g in not_succeeded[:10]],
        "extra_attempts": extra_attempts,
        "failure_classes": failure_classes,
        "health_checks": health_checks[0],
        "final_check_errors": final_errors[:10],
        "final_check_errors_count": len(final_errors),
        "polls": polls,
        "status_reports": reports,
        "client": {"connections_opened": counters["connections_opened"],
                   "transport_errors": counters["transport_errors"],
                   "timeouts": counters["timeouts"],
                   "event_loop_lag_ms": summary(lag_ms),
                   "cpu_seconds": round(cpu.ru_utime + cpu.ru_stime, 1),
                   "heartbeat_process": {
                       "connections_opened": hb["counters"]["connections_opened"],
                       "transport_errors": hb["counters"]["transport_errors"],
                       "timeouts": hb["counters"]["timeouts"],
                       "event_loop_lag_ms": hb["event_loop_lag_ms"]}},
        "server": {"threads_max": max(samples["threads"]) if samples["threads"] else None,
                   "threads_min": min(samples["threads"]) if samples["threads"] else None,
                   "rss_mb_max": round(max(samples["rss_mb"]), 1) if samples["rss_mb"] else None,
                   "rss_mb_hwm": round(rss_hwm_mb, 1) if rss_hwm_mb else None,
                   "cpu_seconds": round(server_cpu_s, 1) if server_cpu_s is not None else None,
                   "samples": len(samples["threads"])},
        "targets": {"heartbeat_p99_ms": TARGET_HEARTBEAT_P99_MS,
                    "gang_assigned_p99_ms": TARGET_GANG_ASSIGNED_MS,
                    "hosts_lost": 0, "runs_succeeded": "all",
                    "server_threads_below": TARGET_SERVER_THREADS},
        "meets": meets,
        "meets_targets": all(meets.values()),
    }
    return result


def update_latest(result, path):
    """Replaces the agent_scale_* entries of bench/results/latest.json (issue-11 format)."""
    try:
        with open(path) as f:
            latest = json.load(f)
    except (OSError, ValueError):
        return "absent or unreadable"
    if not isinstance(latest, dict) or not isinstance(latest.get("scenarios"), list):
        return "not in the issue-11 format"
    entries = [
        ("agent_scale_heartbeat_p99", result["heartbeat_ms"]["p99"], "ms",
         TARGET_HEARTBEAT_P99_MS, result["meets"]["heartbeat_p99_ms"]),
        ("agent_scale_gang_256_assigned_p99", result["gang_assigned_ms"]["p99"], "ms",
         TARGET_GANG_ASSIGNED_MS, result["meets"]["gang_assigned_p99_ms"]),
        ("agent_scale_hosts_lost", result["hosts_lost"] + result["ranks_lost"], "hosts", 0,
         result["meets"]["hosts_lost"]),
    ]
    old = {s.get("name"): s for s in latest["scenarios"] if isinstance(s, dict)}
    kept = [s for s in latest["scenarios"]
            if not (isinstance(s, dict) and str(s.get("name", "")).startswith("agent_scale"))]
    details = {"agents": result["agents"], "gangs": result["gangs"],
               "gang_interval_seconds": result.get("gang_interval_seconds"),
               "heartbeats": result["heartbeat_ms"]["n"],
               "gang_assigned_ms": result["gang_assigned_ms"],
               "hosts_lost": result["hosts_lost"], "ranks_lost": result["ranks_lost"],
               "runs_not_succeeded": result["runs_not_succeeded"],
               "server": result["server"], "machine": result["machine"],
               "source": "bench/results/agent_scale.json (issue 13's 10-minute scenario)"}
    for name, value, unit, target, ok in entries:
        prev = old.get(name, {})
        base = prev.get("baseline_value")
        kept.append({"name": name, "value": value, "unit": unit, "baseline_value": base,
                     "ratio": ratio_of(value, base),
                     "target": target, "meets": bool(ok), "details": details,
                     "measured": {"commit": result.get("commit"), "date": result["date"]}})
    latest["scenarios"] = kept
    tmp = path + ".agent_scale.tmp"
    with open(tmp, "w") as f:
        json.dump(latest, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return "updated"


def sustained_main(args):
    # Three sockets per agent on each side (heartbeat, poll, reports).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE,
                       (min(hard, max(soft, 4 * args.agents + 1024)), hard))
    bin_dir = server_bin_dir(args.bin_dir)
    tmp = tempfile.mkdtemp(prefix="podium-bench-agents-")
    os.chmod(tmp, 0o755)  # the embedded PostgreSQL runs as 'postgres' when we are root
    token = "pdm_bench_" + os.urandom(16).hex()
    server = None
    try:
        server = start_server(bin_dir, tmp, token, 4 * args.agents + 256, args.database_url)
        result = asyncio.run(sustained(args, server.port, token, server, server.proc.log_path,
                                       tmp, bin_dir))
        if not server.running():
            result["server_exited"] = server.proc.returncode
            result["meets_targets"] = False
        write_json(args.output, result)
        if args.latest:
            print(f"agent_scale: {args.latest}: {update_latest(result, args.latest)}", flush=True)
        brief = {k: result[k] for k in ("heartbeat_ms", "heartbeats_failed", "gangs",
                                        "gang_assigned_ms", "rank_assigned_ms", "hosts_lost",
                                        "ranks_lost", "runs_not_succeeded", "server", "machine",
                                        "client", "meets")}
        print(json.dumps(brief, indent=2))
        return 0 if result["meets_targets"] else 1
    finally:
        if server is not None:
            server.stop(grace=60)
        if args.keep:
            print(f"agent_scale: kept {tmp}", flush=True)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main():
    if sys.argv[1:] == ["--heartbeat-child"]:
        return heartbeat_child_main()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", type=int, default=None, help="simulated agents (default 1000)")
    ap.add_argument("--gang-hosts", type=int, default=None,
                    help="hosts per gang and slices per gang cluster (default 256)")
    ap.add_argument("--gang-clusters", type=int, default=None,
                    help="clusters running gangs (default 3; the other agents only poll)")
    ap.add_argument("--duration", type=float, default=None,
                    help="seconds of gangs (default 600)")
    ap.add_argument("--gang-interval", type=float, default=5.0,
                    help="seconds between one cluster's gang submissions (default 5; 0: back "
                         "to back, the machine's capacity)")
    ap.add_argument("--heartbeat", type=float, default=3.0, help="heartbeat interval, s")
    ap.add_argument("--wait", type=int, default=25, help="assignment long-poll wait, s")
    ap.add_argument("--max-gangs", type=int, default=10000, help="bound per cluster")
    ap.add_argument("--gang-timeout", type=float, default=60.0,
                    help="longest wait for a gang's ranks, then for its run's end, s")
    ap.add_argument("--no-poll", action="store_true", help=argparse.SUPPRESS)  # diagnosis
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 64 agents, 2 gang clusters of 16, 60 s")
    ap.add_argument("--single-gang", action="store_true",
                    help="the earlier measure: one cluster of N slices, heartbeats every 5 s, "
                         "one gang over all N")
    ap.add_argument("--bin-dir", help="directory with podium-server (default build/scale/bin, "
                                      "build/release/bin, ...)")
    ap.add_argument("--database-url", default=os.environ.get("PODIUM_BENCH_DATABASE_URL", ""))
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory (server log, database)")
    ap.add_argument("--output", default=None,
                    help="default bench/results/agent_scale.json (--quick: "
                         "agent_scale_quick.json; --single-gang: agent_scale_single_gang.json)")
    ap.add_argument("--latest", default=None,
                    help="issue-11 results file whose agent_scale_* entries are replaced "
                         "(default bench/results/latest.json for a full run, none for --quick)")
    args = ap.parse_args()
    results = os.path.join(ROOT, "bench", "results")
    if args.single_gang:
        args.agents = args.agents or 1000
        args.output = args.output or os.path.join(results, "agent_scale_single_gang.json")
        return single_gang_main(args)
    quick = args.quick
    args.agents = args.agents or (64 if quick else 1000)
    args.gang_hosts = args.gang_hosts or (16 if quick else 256)
    args.gang_clusters = args.gang_clusters if args.gang_clusters is not None else (
        2 if quick else 3)
    args.duration = args.duration or (60.0 if quick else 600.0)
    args.output = args.output or os.path.join(
        results, "agent_scale_quick.json" if quick else "agent_scale.json")
    if args.latest is None and not quick:
        args.latest = os.path.join(results, "latest.json")
    return sustained_main(args)


if __name__ == "__main__":
    sys.exit(main())
