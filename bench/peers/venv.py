"""The peers' own virtual environment, made on demand from requirements/bench.txt (exact pins,
every transitive dependency included, installed with --no-deps so that nothing unpinned comes
in). Kept beside the bench build (<build>/peers-venv) and remade when the requirements file
changes: MLflow and Aim stay out of the project's .venv and out of CI's test path."""

import hashlib
import os
import shutil
import subprocess
import sys

from kit import ROOT
from limits_lib.common import log

REQUIREMENTS = os.path.join(ROOT, "requirements", "bench.txt")


def _digest():
    with open(REQUIREMENTS, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def ensure(venv_dir):
    """Returns the venv's python, creating or refreshing the venv when its stamp differs from
    the requirements' digest. Uses the python3 on PATH (3.11 here) for the venv."""
    stamp = os.path.join(venv_dir, "podium-requirements.sha256")
    python = os.path.join(venv_dir, "bin", "python")
    want = _digest()
    if os.path.exists(stamp) and os.access(python, os.X_OK):
        with open(stamp) as f:
            if f.read().strip() == want:
                return python
    log(f"peers: making {venv_dir} from {os.path.relpath(REQUIREMENTS, ROOT)} (a few minutes "
        "the first time)")
    shutil.rmtree(venv_dir, ignore_errors=True)
    base = shutil.which("python3") or sys.executable
    subprocess.run([base, "-m", "venv", venv_dir], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "-r", REQUIREMENTS], check=True, timeout=1800)
    # Installed with --no-deps: check that the pins are complete and consistent.
    subprocess.run([python, "-m", "pip", "check"], check=True)
    with open(stamp, "w") as f:
        f.write(want + "\n")
    log(f"peers: {venv_dir} ready")
    return python
