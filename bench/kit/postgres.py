"""The benches' PostgreSQL: a cluster of scripts/test-postgres.sh in a directory of the bench's
choosing (kept between runs, or private to one run), and psql against it."""

import os
import re
import subprocess

from . import ROOT

SCRIPT = os.path.join(ROOT, "scripts", "test-postgres.sh")


class TestPostgres:
    """scripts/test-postgres.sh with PODIUM_TEST_PG_DIR=directory."""

    def __init__(self, directory):
        self.dir = directory
        self.url = None

    def run(self, command, check=True, timeout=600):
        """The script's stdout (stripped); raises RuntimeError when it fails and check."""
        r = subprocess.run([SCRIPT, command], env=dict(os.environ, PODIUM_TEST_PG_DIR=self.dir),
                           capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"test-postgres.sh {command} failed: {r.stderr}")
        return r.stdout.strip()

    def running(self):
        return subprocess.run([SCRIPT, "status"], env=dict(os.environ, PODIUM_TEST_PG_DIR=self.dir),
                              capture_output=True).returncode == 0

    def start(self):
        """Starts it (initdb on the first start) and returns its URL."""
        self.url = self.run("start")
        return self.url

    def database_url(self, database):
        """The URL of another database on the same server."""
        return self.url.rsplit("/", 1)[0] + "/" + database


class Psql:
    """psql against one database: the baselines' client and the data generator."""

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
