"""The bench kit: what every bench script shares (bench/*.py, bench/limits_lib, bench/peers,
bench/reliability). Standard library only, so that Debian's /usr/bin/python3 runs the benches.

  procs     child processes with a log file: start, wait until ready, stop; free ports,
            a clean environment, /proc figures
  podium    podium-server and podium-worker processes, and where their binaries are
  postgres  the bench's PostgreSQL (scripts/test-postgres.sh) and psql
  http      HTTP clients: a keep-alive connection, and one request on a connection of its own
  stats     percentiles and summaries of latencies
  results   result rows and files (bench/results/*.json)
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
