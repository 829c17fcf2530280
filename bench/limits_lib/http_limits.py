"""api_get_run: GET /api/v1/runs/{id} under wrk (keep-alive, 64 connections) against nginx serving
a static file of the same bytes on loopback, in the same run. server_rss: the server's resident
memory while it holds 1,000 idle keep-alive connections, 200 parked assignment polls and 20 SSE
log followers."""

import os
import re
import resource
import socket
import subprocess
import threading
import time

from kit.http import Client
from kit.postgres import Psql
from kit.procs import Process, free_port
from kit.results import scenario

from .common import log, require_tool

TARGET_RATIO = 0.3  # issue 31 point 2
TARGET_P99_MS = 10.0
TARGET_RSS_MB = 150.0
NGINX_CONF = """worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile on;
  tcp_nodelay on;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  client_body_temp_path {prefix}/client_body;
  proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/fastcgi;
  uwsgi_temp_path {prefix}/uwsgi;
  scgi_temp_path {prefix}/scgi;
  server {{
    listen 127.0.0.1:{port};
    root {prefix}/www;
    location / {{ default_type application/json; }}
  }}
}}
"""


def wrk(url, token, connections, seconds, threads=2):
    """(requests/s, p50 ms, p99 ms, non-2xx count) from wrk --latency."""
    exe = require_tool("wrk", "wrk")
    out = subprocess.run([exe, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency",
                          "--timeout", "5s", "-H", f"Authorization: Bearer {token}", url],
                         capture_output=True, text=True, check=True,
                         timeout=seconds + 60).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    requests = int(re.search(r"(\d+) requests in", out).group(1))

    def ms(pct):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]
        return float(m.group(1)) * scale
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return (rps, ms(50), ms(99), int(bad.group(1)) if bad else 0,
            errors.group(1) if errors else "", requests)


class Nginx:
    def __init__(self, tmp, body):
        exe = require_tool("nginx", "nginx-light")
        self.prefix = os.path.join(tmp, "nginx")
        os.makedirs(os.path.join(self.prefix, "www"), exist_ok=True)
        for d in (tmp, self.prefix, os.path.join(self.prefix, "www")):
            os.chmod(d, 0o755)  # nginx's workers run as nobody when started by root
        with open(os.path.join(self.prefix, "www", "run.json"), "wb") as f:
            f.write(body)
        os.chmod(os.path.join(self.prefix, "www", "run.json"), 0o644)
        self.port = free_port()
        conf = os.path.join(self.prefix, "nginx.conf")
        with open(conf, "w") as f:
            # As many workers as cores: what nginx's own default 'auto' gives.
            f.write(NGINX_CONF.format(workers=os.cpu_count(), prefix=self.prefix, port=self.port))
        self.proc = Process("nginx", [exe, "-p", self.prefix, "-c", conf],
                            os.path.join(self.prefix, "nginx.out"), env=dict(os.environ)).start()

        def accepting():
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                return False
        self.proc.wait_until(accepting, 20, "accepting connections")

    def stop(self):
        self.proc.stop(grace=20)


def some_run(server):
    """A run with a plan: what GET /runs/{id} returns for a real submission."""
    admin = server.admin
    cluster = "get-" + os.urandom(3).hex()
    admin.require("POST", "/api/v1/clusters",
                  {"name": cluster, "accelerator": "cpu-1", "num_slices": 1}, status=(201,))
    return admin.require("POST", "/api/v1/runs",
                         {"name": "get-run", "cluster": cluster, "workload": "command",
                          "command": ["sleep", "1"], "max_restarts": 0}, status=(201,))["id"]


# The statement one GET /api/v1/runs/{id} would send on its own once the token is known
# (backend/api/run_view.cpp's run_select(); keep it in step): the run's row with its latest
# attempt's environment. The token lookup before it is answered from the server's credential
# cache (backend/common/credential_cache.h) after the first request of the run. The server
# batches the reads that arrive while one is in flight into one statement
# (backend/api/run_read_batch.h, `WHERE r.id = ANY($1)`): `database_transactions_per_request`
# in details (pg_stat_database) and `reads_per_query` (the server's counters) say how far, and
# pgbench's rate of this statement is what one statement per request would be bounded by.
# pgbench reads ":MI" and ":SS" as its variables, even inside a string: the colons are spelled
# chr(58), which PostgreSQL folds to the same constant format when it plans the statement.
_TS = ("to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24' || chr(58) || 'MI' || chr(58) || "
       "'SS.US\"Z\"')")
_RUN_SQL = (
    "SELECT r.id, r.seq, r.name, r.owner_id, u.username AS owner, r.cluster_id, c.name AS "
    "cluster, r.dataset_id, d.name AS dataset, r.model, r.workload, r.spec::text AS spec, "
    "r.plan::text AS plan, r.forced, array_to_json(r.skipped_checks)::text AS skipped_checks, "
    "r.state, r.failure_class, r.failure_detail, r.restarts, r.recoveries, r.last_step, "
    "r.resumed_from_step, r.priority, array_to_json(r.tags)::text AS tags, r.project, r.notes, "
    "r.imported, "
    "COALESCE(r.accelerator, c.accelerator) AS accelerator, "
    "COALESCE(r.num_slices, c.num_slices) AS num_slices, r.current_slices, r.waiting_reason, "
    "r.preflight_state, r.preflight_run_id, r.compile_check_for, r.plan_check::text AS "
    "plan_check, (SELECT a.stall::text FROM attempts a WHERE a.run_id = r.id AND "
    "a.finished_at IS NULL AND a.stall IS NOT NULL ORDER BY a.number DESC LIMIT 1) AS stall, "
    "(SELECT json_build_object('recorded', a.environment, 'ranks', (SELECT "
    "COALESCE(json_agg(ah.environment ORDER BY ah.rank), '[]') FROM attempt_hosts ah WHERE "
    "ah.attempt_id = a.id AND ah.environment IS NOT NULL))::text FROM attempts a WHERE "
    "a.run_id = r.id ORDER BY a.number DESC LIMIT 1) AS environment, "
    + ", ".join(f"{_TS.format('r.' + c)} AS {c}"
                for c in ("created_at", "started_at", "finished_at", "updated_at"))
    + " FROM runs r LEFT JOIN clusters c ON c.id = r.cluster_id LEFT JOIN users u ON "
    "u.id = r.owner_id LEFT JOIN datasets d ON d.id = r.dataset_id WHERE r.id = :run;")


def database_transactions(psql):
    """Transactions the bench database has ended so far (pg_stat_database): a statement sent
    on its own is one. PostgreSQL publishes a backend's counts within a second of its last
    transaction, hence the wait."""
    time.sleep(1.5)
    return int(psql.value("SELECT xact_commit + xact_rollback FROM pg_stat_database "
                          "WHERE datname = current_database()"))


class WaitSampler:
    """Where requests wait off the CPU while wrk runs, from the server's gauges sampled five
    times a second: for a handler thread (podium_http_queued_requests), for a database connection
    (podium_db_pool_waiting), holding one (podium_db_pool_connections in_use). By Little's law a
    mean count divided by the request rate is the mean time a request spends there."""

    GAUGES = {"queued_for_handler": r"^podium_http_queued_requests (\d+)$",
              "waiting_for_connection": r"^podium_db_pool_waiting (\d+)$",
              "holding_connection": r'^podium_db_pool_connections\{state="in_use"\} (\d+)$'}

    def __init__(self, server):
        self.client = Client(server.port, server.token)
        self.samples = {k: [] for k in self.GAUGES}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.wait(0.2):
            text = self.client.require("GET", "/metrics")
            for k, pattern in self.GAUGES.items():
                m = re.search(pattern, text, re.M)
                if not m:
                    raise RuntimeError(f"/metrics has no {pattern}")
                self.samples[k].append(int(m.group(1)))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.client.close()

    def mean_ms(self, rps):
        """{gauge: mean time a request spends there, ms} at `rps` requests per second."""
        return {f"{k}_ms": (sum(v) / len(v)) / rps * 1000.0 if v and rps else None
                for k, v in self.samples.items()}


def batch_counters(server):
    """(queries, reads) of the server's batched GET /runs/{id} reads, from its /metrics;
    (0, 0) from a server from before the batching (an A/B against an older binary)."""
    text = server.admin.require("GET", "/metrics")
    found = [re.search(rf"^{name} (\d+)$", text, re.M)
             for name in ("podium_run_read_batches_total", "podium_run_reads_total")]
    return tuple(int(m.group(1)) if m else 0 for m in found)


def pool_size(server):
    """The server's database.pool_size, from its /metrics."""
    text = server.admin.require("GET", "/metrics")
    m = re.search(r"^podium_db_pool_max_connections (\d+)$", text, re.M)
    if not m:
        raise RuntimeError("podium_db_pool_max_connections missing from /metrics")
    return int(m.group(1))


def database_ceiling(db_url, run_id, tmp, clients, seconds):
    """What PostgreSQL alone sustains of this route's SQL on this machine: pgbench runs its
    statement (prepared, as the server does) from `clients` connections (the server's pool
    size), in the same run. Returns transactions (= requests) per second."""
    require_tool("pgbench", "postgresql-client-15")
    script = os.path.join(tmp, "get_run.pgbench")
    with open(script, "w") as f:
        f.write(_RUN_SQL + "\n")
    p = subprocess.run(
        ["pgbench", "-n", "-M", "prepared", "-c", str(clients), "-j", "2", "-T", str(seconds),
         "-D", f"run={run_id}", "-f", script, db_url],
        capture_output=True, text=True, timeout=seconds + 120)
    m = re.search(r"tps = ([0-9.]+)", p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"pgbench failed ({p.returncode}): {p.stderr[-400:]}")
    return float(m.group(1))


def api_get_run(server, tmp, seconds, db_url):
    run_id = some_run(server)
    path = f"/api/v1/runs/{run_id}"
    # The exact bytes the server sends for this request.
    c = socket.create_connection(("127.0.0.1", server.port))
    c.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.token}\r\n"
              "Connection: close\r\n\r\n".encode())
    raw = b""
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        raw += chunk
    c.close()
    body = raw.split(b"\r\n\r\n", 1)[1]
    nginx = Nginx(tmp, body)
    try:
        log(f"api_get_run: nginx, static file of {len(body)} bytes, 64 connections, {seconds} s")
        n_rps, n_p50, n_p99, n_bad, n_err, _ = wrk(f"http://127.0.0.1:{nginx.port}/run.json",
                                                server.token, 64, seconds)
    finally:
        nginx.stop()
    log(f"api_get_run: podium-server, GET {path}, 64 connections, {seconds} s")
    psql = Psql(db_url)
    before = database_transactions(psql)
    queries_before, reads_before = batch_counters(server)
    with WaitSampler(server) as waits:
        rps, p50, p99, bad, err, requests = wrk(f"http://127.0.0.1:{server.port}{path}",
                                                server.token, 64, seconds)
    waited = waits.mean_ms(rps)
    queries_after, reads_after = batch_counters(server)
    reads_per_query = ((reads_after - reads_before) / (queries_after - queries_before)
                       if queries_after > queries_before else None)
    # Background work (the scheduler's ticks) adds a few: a figure near 1 is one statement.
    per_request = (database_transactions(psql) - before) / requests
    ratio = rps / n_rps
    log(f"api_get_run: {rps:,.0f} req/s (p99 {p99:.2f} ms) vs nginx {n_rps:,.0f} req/s "
        f"(p99 {n_p99:.2f} ms): ratio {ratio:.2f}; {per_request:.2f} database transactions "
        "per request" + (f", {reads_per_query:.1f} reads per query" if reads_per_query else ""))
    log("api_get_run: mean time per request " + ", ".join(
        f"{k[:-3].replace('_', ' ')} {v:.2f} ms" for k, v in waited.items() if v is not None)
        + f" (of {64 / rps * 1000:.2f} ms in all, by Little's law)")
    # Not the target's baseline: what one statement per request would be bounded by (the
    # batched reads go past it), from as many connections as the server's pool holds.
    clients = pool_size(server)
    log(f"api_get_run: PostgreSQL alone, the route's statement, {clients} connections, "
        f"{seconds} s")
    ceiling = database_ceiling(db_url, run_id, tmp, clients, seconds)
    log(f"api_get_run: the database sustains {ceiling:,.0f} of them per second; the server "
        f"reaches {rps / ceiling:.2f} of that")
    meets = ratio >= TARGET_RATIO and p99 < TARGET_P99_MS and bad == 0
    return [scenario("api_get_run", rps, "requests/s",
                     f"ratio >= {TARGET_RATIO}; p99 < {TARGET_P99_MS:.0f} ms", meets,
                     baseline_value=n_rps, ratio=ratio, p50_ms=p50, p99_ms=p99,
                     non_2xx=bad, socket_errors=err, baseline_p50_ms=n_p50,
                     baseline_p99_ms=n_p99, body_bytes=len(body), connections=64,
                     seconds=seconds, database_transactions_per_request=per_request,
                     database_alone_requests_per_s=ceiling, database_alone_clients=clients,
                     ratio_to_database_alone=rps / ceiling, reads_per_query=reads_per_query,
                     **waited)]


def _send(port, request):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(request)
    return s


def _read_head(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed before a response")
        data += chunk
    return data


def server_rss(server_factory, idle=1000, polls=200, followers=20):
    """Starts its own server (server_factory(settings)) so its memory is that of this load only."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * (idle + polls) + 1024)),
                                                hard))
    server = server_factory([f"limits.max_connections={idle + polls + followers + 256}"])
    sockets = []
    try:
        admin = server.admin
        cluster = "rss-" + os.urandom(3).hex()
        admin.require("POST", "/api/v1/clusters",
                      {"name": cluster, "accelerator": "cpu-1", "num_slices": polls},
                      status=(201,))
        wtoken = admin.require("POST", f"/api/v1/clusters/{cluster}/worker-tokens",
                               status=(201,))["token"]
        registrar = Client(server.port, wtoken)
        creds = []
        for s in range(polls):
            reg = registrar.require("POST", "/api/v1/agent/register",
                                    {"cluster": cluster, "slice": s, "host": 0,
                                     "instance": f"rss-{s}"})
            creds.append((reg["worker_id"], reg["credential"]))
        # A run to follow: queued on another cluster with no agent, so its stream stays open.
        other = "rssq-" + os.urandom(3).hex()
        admin.require("POST", "/api/v1/clusters",
                      {"name": other, "accelerator": "cpu-1", "num_slices": 1}, status=(201,))
        run_id = admin.require("POST", "/api/v1/runs",
                               {"name": "followed", "cluster": other, "workload": "command",
                                "command": ["true"], "max_restarts": 0}, status=(201,))["id"]
        before = server.rss_mb()
        head = f"Host: x\r\nAuthorization: Bearer {server.token}\r\n"
        for _ in range(idle):
            s = _send(server.port, f"GET /healthz HTTP/1.1\r\n{head}\r\n".encode())
            _read_head(s)
            sockets.append(s)
        for worker_id, cred in creds:
            sockets.append(_send(server.port, (
                f"GET /api/v1/agent/assignment?worker_id={worker_id}&wait=55 HTTP/1.1\r\n"
                f"Host: x\r\nAuthorization: Bearer {cred}\r\n\r\n").encode()))
        for _ in range(followers):
            s = _send(server.port, f"GET /api/v1/runs/{run_id}/logs/stream HTTP/1.1\r\n{head}"
                      "Accept: text/event-stream\r\n\r\n".encode())
            _read_head(s)
            sockets.append(s)
        time.sleep(3)  # every poll parked
        # The connections are all still open: a closed one would not count.
        alive = sum(1 for s in sockets if _open(s))
        rss = server.rss_mb()
        with open(f"/proc/{server.proc.pid}/status") as f:
            threads = int(next(line for line in f if line.startswith("Threads:")).split()[1])
        log(f"server_rss: {rss:.1f} MB with {alive} connections held ({before:.1f} MB before), "
            f"{threads} threads")
        return [scenario("server_rss", rss, "MB", f"< {TARGET_RSS_MB:.0f} MB",
                         rss < TARGET_RSS_MB and alive == len(sockets), rss_mb_before=before,
                         connections_open=alive, idle_keepalive=idle, parked_polls=polls,
                         sse_followers=followers, threads=threads)]
    finally:
        for s in sockets:
            s.close()
        server.stop()


def _open(s):
    s.setblocking(False)
    try:
        data = s.recv(65536, socket.MSG_PEEK)
        return data != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.setblocking(True)
