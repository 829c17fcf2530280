"""quickstart: the README's first command (./scripts/run.sh) on a fresh clone of this commit,
with the system packages already installed, until GET /readyz answers. The clone has no build
directory, so this is the first build a new user waits for."""

import os
import subprocess
import time
import urllib.request

from kit import ROOT
from kit.procs import Process, free_port
from kit.results import scenario

from .common import log

TARGET_S = 240.0
LIMIT_S = 1800  # a bound on the wait, not the target


def quickstart(tmp):
    clone = os.path.join(tmp, "clone")
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", ROOT, clone], check=True, timeout=300)
    # The web dashboard's node_modules come from setup's npm ci; reuse the checkout's download
    # cache only (npm's), never its build outputs.
    port = free_port()
    env = dict(os.environ, PODIUM_LISTEN=f"127.0.0.1:{port}",
               PODIUM_DATA_DIR=os.path.join(tmp, "quickstart-var"))
    env = {k: v for k, v in env.items() if not k.startswith("PODIUM_") or k in
           ("PODIUM_LISTEN", "PODIUM_DATA_DIR")}
    proc = Process("quickstart", ["./scripts/run.sh"], os.path.join(tmp, "quickstart.log"),
                   env=env, new_session=True, cwd=clone)
    log(f"quickstart: ./scripts/run.sh in {clone} (log {proc.log_path})")
    t0 = time.monotonic()
    proc.start()
    ready = None
    try:
        while time.monotonic() - t0 < LIMIT_S and proc.running():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                    if r.status == 200:
                        ready = time.monotonic() - t0
                        break
            except OSError:
                pass
            time.sleep(1)
    finally:
        proc.stop(grace=60)
    if ready is None:
        raise RuntimeError(f"quickstart: no /readyz within {LIMIT_S} s; log tail:\n"
                           f"{proc.log_tail(15)}")
    log(f"quickstart: /readyz after {ready:.0f} s")
    return [scenario("quickstart", ready, "s", f"< {TARGET_S:.0f} s", ready < TARGET_S)]
