"""What every scenario of bench/limits.py shares: the server it drives, keep-alive HTTP clients,
psql, percentiles and the scenario record. Standard library only (Debian's /usr/bin/python3)."""

import http.client
import json
import math
import os
import pwd
import re
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(msg):
    print(f"limits: {msg}", flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def current_user():
    return pwd.getpwuid(os.getuid()).pw_name


def percentile(values, p):
    """Nearest-rank percentile."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, math.ceil(p / 100.0 * len(s)) - 1))
    return s[k]


def scenario(name, value, unit, target, meets, baseline_value=None, ratio=None, **details):
    """One row of latest.json. `target` is text ("ratio >= 0.5", "p99 < 100 ms"); details hold
    the other figures of the scenario (p50 beside a p99, the baseline's own figures)."""
    row = {"name": name, "value": _round(value), "unit": unit,
           "baseline_value": _round(baseline_value), "ratio": _round(ratio, 3),
           "target": target, "meets": bool(meets)}
    if details:
        row["details"] = {k: _round(v) if isinstance(v, float) else v for k, v in details.items()}
    return row


def _round(v, digits=2):
    if v is None or not isinstance(v, (int, float)):
        return v
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return round(v, digits) if isinstance(v, float) else v


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODIUM_")}
    env.update(extra or {})
    return env


class Client:
    """One keep-alive HTTP/1.1 connection with a bearer token, as an agent or a browser holds."""

    def __init__(self, port, token, timeout=60):
        self.port = port
        self.token = token
        self.timeout = timeout
        self.conn = None

    def call(self, method, path, body=None, raw=None, timeout=None):
        """Returns (status, parsed JSON or text). `raw`: an already encoded JSON body."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        headers = {"Authorization": "Bearer " + self.token}
        if data is not None:
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                       timeout=timeout or self.timeout)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                r = self.conn.getresponse()
                text = r.read()
                break
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine):
                # The server closed an idle keep-alive connection: send once more on a new one.
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        if r.getheader("Connection", "").lower() == "close":
            self.conn.close()
            self.conn = None
        ctype = r.getheader("Content-Type", "")
        if "json" in ctype and text:
            return r.status, json.loads(text)
        return r.status, text.decode(errors="replace")

    def require(self, method, path, body=None, status=(200,), raw=None):
        code, out = self.call(method, path, body, raw=raw)
        if code not in status:
            raise RuntimeError(f"{method} {path} -> {code}: {str(out)[:500]}")
        return out

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Psql:
    """psql against the bench database: the baselines' client and the data generator."""

    def __init__(self, url):
        self.url = url

    def run(self, sql, timeout=3600, stdin=None):
        p = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", self.url,
                            "-c", sql], input=stdin, capture_output=True, text=stdin is None
                           or isinstance(stdin, str), timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"psql failed ({p.returncode}): {p.stderr}\n{sql[:400]}")
        return p.stdout if isinstance(p.stdout, str) else p.stdout.decode()

    def value(self, sql):
        return self.run(sql).strip()

    def timed(self, sql, repeat):
        """Server-side execution time of `sql` (ms), `repeat` times in one psql session, from
        EXPLAIN (ANALYZE, TIMING OFF)'s Execution Time plus its Planning Time: what the query
        costs PostgreSQL, without a client's connection start."""
        script = "\n".join(f"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) {sql};"
                           for _ in range(repeat))
        p = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", self.url],
                           input=script, capture_output=True, text=True, timeout=3600)
        if p.returncode != 0:
            raise RuntimeError(f"psql failed: {p.stderr}\n{sql[:400]}")
        plans = re.findall(r"Planning Time: ([\d.]+) ms", p.stdout)
        execs = re.findall(r"Execution Time: ([\d.]+) ms", p.stdout)
        return [float(a) + float(b) for a, b in zip(plans, execs)]


class Server:
    """A Release podium-server on loopback against the bench database, stopped by stop()."""

    def __init__(self, bin_dir, database_url, tmp, token, extra_settings=()):
        self.port = free_port()
        self.token = token
        self.log_path = os.path.join(tmp, f"server-{self.port}.log")
        cmd = [os.path.join(bin_dir, "podium-server"), "--listen", f"127.0.0.1:{self.port}",
               "--data-dir", os.path.join(tmp, "data"), "--admin-token", self.token,
               "--database-url", database_url, "--set", "log.level=warn"]
        for s in extra_settings:
            cmd += ["--set", s]
        with open(self.log_path, "w") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=clean_env())
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if Client(self.port, self.token, timeout=2).call("GET", "/readyz")[0] == 200:
                    self.admin = Client(self.port, self.token)
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        with open(self.log_path, errors="replace") as f:
            tail = "".join(f.readlines()[-20:])
        raise RuntimeError(f"podium-server not ready; log tail:\n{tail}")

    def rss_mb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
        return float("nan")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def require_tool(binary, package):
    """The bench's own tools (wrk, nginx) come from Debian; installed here when missing, saying
    so, rather than in scripts/setup.sh, which only the README's commands need."""
    for d in ("/usr/bin", "/usr/sbin", "/usr/local/bin"):
        if os.access(os.path.join(d, binary), os.X_OK):
            return os.path.join(d, binary)
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", package]
    if os.getuid() != 0:
        cmd = ["sudo", "-n"] + cmd
    log(f"{binary} not found: running {' '.join(cmd)}")
    subprocess.run(cmd, check=True, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"),
                   timeout=600)
    for d in ("/usr/bin", "/usr/sbin"):
        if os.access(os.path.join(d, binary), os.X_OK):
            return os.path.join(d, binary)
    sys.exit(f"limits: {binary} still missing after installing {package}")
