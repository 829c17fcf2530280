"""Hostile clients against one podium-server while a well-behaved client keeps asking
GET /healthz: thousands of idle connections, slowloris on headers and on bodies, oversized
headers and bodies, pipelined garbage, half-closed sockets, and Server-Sent-Events followers
that never read while a run prints thousands of lines a second.

Measured: /healthz latency from the well-behaved client (p99), the server's resident memory
(maximum, sampled), and for every hostile connection when the server closed it, against the
deadline that applies to it (the server's read, idle and write timeouts, set short here so the
scenario is short; the same code paths enforce the defaults).
"""

import errno
import os
import selectors
import socket
import threading
import time

import common as c
import soak as soak_mod
from common import say
from kit.http import call
from kit.procs import rss_mb
from kit.stats import percentile

READ_TIMEOUT = 5
IDLE_TIMEOUT = 10
WRITE_TIMEOUT = 5
SLACK = 5  # seconds beyond a deadline before a connection counts as not closed in time


class Conn:
    def __init__(self, kind, deadline, expect_status=None):
        self.kind = kind
        self.deadline = deadline  # seconds from opening by which the server must close it
        self.expect_status = expect_status
        self.sock = None
        self.opened = None
        self.closed = None
        self.received = b""
        self.to_send = b""  # sent one byte per tick (slowloris) or at once
        self.drip = False
        self.error = None

    def open(self, port, rcvbuf=None):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(10)
        s.connect(("127.0.0.1", port))
        s.setblocking(False)
        self.sock = s
        self.opened = time.monotonic()

    def status(self):
        line = self.received.split(b"\r\n", 1)[0]
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(b"HTTP/"):
            try:
                return int(parts[1])
            except ValueError:
                return None
        return None


def request_head(method, path, extra=(), length=None):
    h = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1"]
    h += list(extra)
    if length is not None:
        h.append("Content-Type: application/json")
        h.append("Content-Length: %d" % length)
    return ("\r\n".join(h) + "\r\n\r\n").encode()


class Attack:
    def __init__(self, server, run_id, admin, idle, small):
        self.server = server
        self.port = server.port
        self.run_id = run_id
        self.admin = admin
        self.idle = idle
        self.small = small
        self.conns = []
        self.sel = selectors.DefaultSelector()

    def add(self, conn, rcvbuf=None, send_now=b"", drip=b""):
        try:
            conn.open(self.port, rcvbuf)
        except OSError as e:
            conn.error = "connect: %s" % e
            conn.closed = time.monotonic()
            self.conns.append(conn)
            return
        conn.to_send = drip
        conn.drip = bool(drip)
        if send_now:
            try:
                conn.sock.sendall(send_now) if len(send_now) < 65536 else self.send_big(conn,
                                                                                       send_now)
            except (BlockingIOError, OSError):
                pass
        self.sel.register(conn.sock, selectors.EVENT_READ, conn)
        self.conns.append(conn)
        # Opening thousands takes seconds: closes meanwhile are seen now, not after the last.
        if len(self.conns) % 50 == 0:
            self.poll(0)

    @staticmethod
    def send_big(conn, data):
        # Best effort: as much as the socket takes now; the server answers before reading it all.
        try:
            conn.sock.send(data)
        except (BlockingIOError, OSError):
            pass

    def open_all(self):
        n = self.small
        # Slowloris on headers: a request line, then one header byte a second, never ending.
        for _ in range(n):
            self.add(Conn("slow_headers", READ_TIMEOUT + SLACK),
                     send_now=b"GET /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                     drip=b"X-Slow: " + b"a" * 10000)
        # Slowloris on a body: complete headers announcing 100 kB, then a byte a second.
        for _ in range(n):
            self.add(Conn("slow_body", READ_TIMEOUT + SLACK),
                     send_now=request_head("POST", "/api/v1/datasets",
                                           ["Authorization: Bearer " + self.admin], 100000),
                     drip=b"{" + b" " * 99999)
        # Oversized headers: 64 KiB of one header (limit 16 KiB): 431, closed.
        for _ in range(n):
            self.add(Conn("oversized_headers", SLACK, 431),
                     send_now=b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 65536 +
                     b"\r\n\r\n")
        # Oversized body: announces 512 MiB (limit 8 MiB): 413 before the body, closed.
        for _ in range(n):
            self.add(Conn("oversized_body", SLACK + 2, 413),
                     send_now=request_head("POST", "/api/v1/datasets",
                                           ["Authorization: Bearer " + self.admin],
                                           512 * 1024 * 1024) + b"x" * 60000)
        # Pipelined garbage: 100 malformed requests in one write: 400, closed.
        for _ in range(n):
            self.add(Conn("pipelined_garbage", SLACK, 400),
                     send_now=b"\x00\xffNOT A REQUEST \x01\x02 HTTP/9.9\r\n\r\n" * 100)
        # Half-closed: a request then shutdown(SHUT_WR); the answer comes, then the close.
        for _ in range(n):
            conn = Conn("half_closed_after_request", IDLE_TIMEOUT + SLACK, 200)
            self.add(conn, send_now=b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            if conn.sock:
                try:
                    conn.sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
        for _ in range(n):
            conn = Conn("half_closed_silent", IDLE_TIMEOUT + SLACK)
            self.add(conn)
            if conn.sock:
                try:
                    conn.sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
        # Thousands that connect and say nothing.
        for _ in range(self.idle):
            self.add(Conn("idle", max(READ_TIMEOUT, IDLE_TIMEOUT) + SLACK))

    def open_followers(self):
        # SSE followers that never read: a tiny receive buffer, and no recv() ever. The server's
        # write deadline must end them once its send buffer is full. Checked at the end (a
        # socket that is never read cannot tell when it was closed).
        followers = []
        for _ in range(self.small):
            conn = Conn("sse_never_read", None)
            try:
                conn.open(self.port, rcvbuf=4096)
                conn.sock.sendall(request_head(
                    "GET", "/api/v1/runs/%s/logs/stream" % self.run_id,
                    ["Authorization: Bearer " + self.admin, "Accept: text/event-stream"]))
            except OSError as e:
                conn.error = "connect: %s" % e
            followers.append(conn)
        return followers

    def poll(self, timeout):
        """Reads what is there and records every close, when it is seen (so: often)."""
        for key, _ in self.sel.select(timeout=timeout):
            conn = key.data
            try:
                data = conn.sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError as e:
                data = b""
                conn.error = str(e)
            if data:
                if len(conn.received) < 4096:
                    conn.received += data[:4096]
                continue
            conn.closed = time.monotonic()
            self.sel.unregister(conn.sock)
            conn.sock.close()

    def pump(self, seconds):
        """Drips slow bytes each second and records closes, for `seconds`."""
        end = time.monotonic() + seconds
        next_drip = time.monotonic() + 1
        while time.monotonic() < end:
            self.poll(0.2)
            if time.monotonic() >= next_drip:
                next_drip += 1
                for conn in self.conns:
                    if conn.drip and conn.closed is None and conn.to_send:
                        try:
                            conn.sock.send(conn.to_send[:1])
                            conn.to_send = conn.to_send[1:]
                        except BlockingIOError:
                            pass
                        except OSError as e:
                            if e.errno in (errno.EPIPE, errno.ECONNRESET):
                                conn.drip = False  # the server closed it; recv will tell
            # No early end once every connection closed: the followers that never read and the
            # well-behaved client are measured over the whole attack.

    def close_rest(self):
        for conn in self.conns:
            if conn.closed is None and conn.sock:
                try:
                    self.sel.unregister(conn.sock)
                except (KeyError, ValueError):
                    pass
                conn.sock.close()


def follower_closed(conn, seconds=10):
    """Drains a never-read follower: True when the server had closed it (EOF after its data)."""
    if conn.sock is None:
        return False
    end = time.monotonic() + seconds
    conn.sock.setblocking(False)
    while time.monotonic() < end:
        try:
            data = conn.sock.recv(1 << 20)
        except BlockingIOError:
            return False  # nothing more and not closed: the server still holds it
        except OSError:
            return True  # reset by the server
        if not data:
            return True
    return False


class Probe(threading.Thread):
    """The well-behaved client: GET /healthz on a fresh connection every 50 ms."""

    def __init__(self, url):
        super().__init__(daemon=True)
        self.url = url
        self.stop = threading.Event()
        self.lat = []
        self.failed = 0

    def run(self):
        while not self.stop.is_set():
            t0 = time.monotonic()
            st = call(self.url, "GET", "/healthz", timeout=5)[0]
            ms = (time.monotonic() - t0) * 1000
            if st == 200:
                self.lat.append(ms)
            else:
                self.failed += 1
            time.sleep(0.05)


class RssSampler(threading.Thread):
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.stop = threading.Event()
        self.max_mb = 0.0
        self.fds_max = 0

    def run(self):
        while not self.stop.is_set():
            self.max_mb = max(self.max_mb, rss_mb(self.pid, gone=0.0))
            self.fds_max = max(self.fds_max, c.open_fds(self.pid))
            time.sleep(0.25)


# A command run whose every rank (4: the whole cluster) prints about 250 lines of 220 bytes a
# second for `seconds`: enough to fill what a follower that never reads can buffer, without
# turning the scenario into an ingestion benchmark.
def spewing_command(seconds):
    code = ("import time\n"
            "end = time.time() + %d\n"
            "i = 0\n"
            "while time.time() < end:\n"
            "    for _ in range(25):\n"
            "        print('hostile-sse %%08d %%s' %% (i, 'x' * 200))\n"
            "        i += 1\n"
            "    time.sleep(0.1)\n" % seconds)
    return ["/usr/bin/python3", "-u", "-c", code]


def run(args, work):
    idle = args.idle_connections
    settings = ["limits.max_connections=%d" % (idle + 1000),
                "limits.read_timeout_seconds=%d" % READ_TIMEOUT,
                "limits.idle_timeout_seconds=%d" % IDLE_TIMEOUT,
                "limits.write_timeout_seconds=%d" % WRITE_TIMEOUT]
    h = soak_mod.Soak(work, 0, args.seed, args.hostile_minutes, args.steps,
                      os.path.join(args.pg_root, "hostile"), settings=settings)
    h.start()
    problems = []
    spew_seconds = args.hostile_seconds + 60
    st, j, raw, _ = h.server.api("POST", "/api/v1/runs", {
        "name": "spew", "cluster": "soak", "workload": "command",
        "command": spewing_command(spew_seconds), "max_restarts": 0}, timeout=15)
    if st != 201:
        raise RuntimeError("submitting the spewing run: %d %s" % (st, raw[:300]))
    run_id = j["id"]
    # A backlog of lines first, so that a follower's first answer already fills its buffers.
    c.wait_until(lambda: (h.server.api("GET", "/api/v1/runs/%s" % run_id)[1] or {})
                 .get("state") == "running", 120, 0.5)
    time.sleep(10)
    server_pid = h.server.proc.pid
    rss_before = rss_mb(server_pid, gone=0.0)
    sampler = RssSampler(server_pid)
    sampler.start()
    probe = Probe(h.server.url)
    probe.start()
    time.sleep(2)
    baseline = list(probe.lat)
    attack = Attack(h.server, run_id, h.admin, idle, args.hostile_small)
    t0 = time.monotonic()
    attack.open_all()
    followers = attack.open_followers()
    say("hostile: %d connections open in %.1f s (%d idle), %d SSE followers that never read" %
        (len(attack.conns), time.monotonic() - t0, idle, len(followers)))
    attack.pump(args.hostile_seconds)
    attack.close_rest()
    probe.stop.set()
    probe.join(timeout=10)
    during = probe.lat[len(baseline):]
    closed_followers = sum(1 for f in followers if follower_closed(f))
    for f in followers:
        if f.sock:
            f.sock.close()
    sampler.stop.set()
    sampler.join(timeout=5)
    # Every hostile connection: closed by the server within its deadline, with the right answer.
    late = {}
    wrong = {}
    for conn in attack.conns:
        if conn.closed is None or conn.closed - conn.opened > conn.deadline:
            late.setdefault(conn.kind, 0)
            late[conn.kind] += 1
        if conn.expect_status is not None and conn.status() != conn.expect_status:
            wrong.setdefault(conn.kind, []).append(conn.status())
    for kind, n in late.items():
        problems.append("%d %s connections were not closed by the server within their deadline" %
                        (n, kind))
    for kind, got in wrong.items():
        problems.append("%d %s connections got %s instead of %s" %
                        (len(got), kind, sorted(set(map(str, got)))[:5],
                         [x.expect_status for x in attack.conns if x.kind == kind][0]))
    if closed_followers != len(followers):
        problems.append("%d of %d SSE followers that never read were still open after %d s" %
                        (len(followers) - closed_followers, len(followers), args.hostile_seconds))
    p99 = percentile(during, 99, empty=None)
    if p99 is None or p99 >= 50:
        problems.append("GET /healthz p99 %s ms under attack (target < 50)" % p99)
    if probe.failed:
        problems.append("%d GET /healthz calls failed under attack" % probe.failed)
    if not h.server.proc.running():
        problems.append("podium-server exited under attack: " + h.server.proc.log_tail(20))
    # After the attack the server still serves (a database-backed call).
    if h.server.api("GET", "/api/v1/runs?limit=1")[0] != 200:
        problems.append("GET /api/v1/runs failed after the attack")
    fds_after = c.wait_until(lambda: c.open_fds(server_pid) < 200 and c.open_fds(server_pid),
                             20, 0.5) or c.open_fds(server_pid)
    if fds_after >= 200:
        problems.append("the server still has %d open files after every hostile connection "
                        "ended" % fds_after)
    h.server.api("POST", "/api/v1/runs/%s/cancel" % run_id)
    h.drain(60)
    h.stop_agents()
    logs = [p for a in h.agents.values() for p in a.logs] + h.server.logs
    problems += c.find_secrets(h.secrets, logs)
    h.server.terminate()
    by_kind = {}
    for conn in attack.conns:
        k = by_kind.setdefault(conn.kind, {"n": 0, "closed": 0, "max_seconds_to_close": 0.0,
                                           "deadline_seconds": conn.deadline})
        k["n"] += 1
        if conn.closed is not None:
            k["closed"] += 1
            k["max_seconds_to_close"] = round(max(k["max_seconds_to_close"],
                                                  conn.closed - conn.opened), 2)
    server_side = c.access_log_ms(h.server.logs, ("/healthz",), 200)
    summary = {"healthz_p99_ms": round(p99, 1) if p99 is not None else None,
               "max_rss_mb": round(sampler.max_mb, 1),
               # Beside the schema's figures: /healthz as the server timed it.
               "server_healthz_p99_ms": percentile(server_side, 99, empty=None)}
    details = dict(summary)
    details.update({"healthz_calls_under_attack": len(during),
                    "server_side_healthz_max_ms": max(server_side) if server_side else None,
                    "healthz_p50_ms": round(percentile(during, 50, empty=None) or -1, 1),
                    "healthz_max_ms": round(max(during or [-1]), 1),
                    "healthz_failed": probe.failed, "rss_mb_before": round(rss_before, 1),
                    "max_open_files": sampler.fds_max, "open_files_after": fds_after,
                    "connections": by_kind,
                    "sse_followers": len(followers), "sse_followers_closed": closed_followers,
                    "problems": problems[:50]})
    return summary, details, problems
