"""What only bench/limits.py's scenarios share: their log lines and the Debian tools they
install when missing. Servers, clients, psql, percentiles and result rows are the bench kit's
(bench/kit)."""

import os
import subprocess
import sys


def log(msg):
    print(f"limits: {msg}", flush=True)


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
