"""Result rows and files: the rows of bench/results/latest.json (issue 11's format), the machine
and commit a figure was measured on, and JSON files written whole."""

import json
import math
import os
import platform
import subprocess

from . import ROOT


def scenario(name, value, unit, target, meets, baseline_value=None, ratio=None, **details):
    """One row of latest.json. `target` is text ("ratio >= 0.5", "p99 < 100 ms"); details hold
    the other figures of the scenario (p50 beside a p99, the baseline's own figures)."""
    row = {"name": name, "value": round_figure(value), "unit": unit,
           "baseline_value": round_figure(baseline_value), "ratio": round_figure(ratio, 3),
           "target": target, "meets": bool(meets)}
    if details:
        row["details"] = {k: round_figure(v) if isinstance(v, float) else v
                          for k, v in details.items()}
    return row


def ratio_of(value, baseline, digits=3):
    """value / baseline, None when either is missing or the baseline is 0."""
    if value is None or not baseline:
        return None
    return round(value / baseline, digits)


def round_figure(v, digits=2):
    """A float rounded to `digits`, None for NaN and infinities; other values as they are."""
    if v is None or not isinstance(v, (int, float)):
        return v
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return round(v, digits) if isinstance(v, float) else v


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), "")
    except OSError:
        pass
    with open("/proc/meminfo") as f:
        mem_kb = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    return {"cpus": os.cpu_count(), "cpu_model": model, "memory_gib": round(mem_kb / 2**20, 1),
            "kernel": platform.release(), "loadavg_at_end": [round(x, 2) for x in
                                                             os.getloadavg()]}


def commit(short=True):
    """HEAD: 12 digits and "+dirty" when tracked files have changed; short=False: the whole
    hash as git prints it."""
    if not short:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
    out = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return out + ("+dirty" if dirty else "")


def write_json(path, doc):
    """`doc` as indented JSON with a final newline; the folder is made when missing."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
