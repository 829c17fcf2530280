#!/usr/bin/env python3
"""Differential mesh check: every case of a corpus (make_mesh_corpus.py) asked of real JAX
(maxtext_mesh.py: libtpu topology devices, MaxText's fill, mesh_utils) and of Podium's planner
(build/test/bin/planner_verdicts), compared.

Two verdicts agree when both map, with the same filled ICI and DCN vectors, or both refuse at
the same step: MaxText's fill of the ICI or DCN vector (same MaxText message; values Podium refuses
before the fill, 0 or -2, count as the same step), or JAX's mapping onto the torus (same failing
logical axis index and the same remaining assignable mesh).

Usage: mesh_diff.py --planner build/test/bin/planner_verdicts [--corpus FILE] [--ids a,b]
                    [--every N] [--out FILE]
Prints one line per disagreement and a summary; exit 1 when any case disagrees.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import maxtext_mesh  # noqa: E402

FILL_CODES = {"mesh_product_mismatch", "invalid_parallelism"}


def podium_verdicts(planner: str, cases: list[dict]) -> dict[str, dict]:
    lines = "".join(json.dumps({"kind": "mesh", **c}) + "\n" for c in cases)
    done = subprocess.run([planner], input=lines, capture_output=True, text=True, check=True)
    out = {}
    for line in done.stdout.splitlines():
        v = json.loads(line)
        out[v["id"]] = v
    return out


def podium_phase(p: dict) -> str:
    if "error" in p:
        return "spec"  # the run spec itself was refused (e.g. a parallelism value of 0)
    if p["ok"]:
        return "ok"
    if p["error_code"] == "mesh_unmappable":
        return "mapping"
    if p["error_code"] in FILL_CODES:
        return "dcn_fill" if ("DCN" in p["message"] or "slices" in p["message"].split(" does")[0]
                              and "devices per slice" not in p["message"]) else "ici_fill"
    return p["error_code"] or "unknown"


def compare(case: dict, jax: dict, pod: dict) -> str | None:
    """None when they agree, else the reason."""
    phase = podium_phase(pod)
    if jax["ok"] != (phase == "ok"):
        return (f"verdict: JAX {'maps' if jax['ok'] else 'refuses (' + jax['phase'] + ')'}, "
                f"Podium {'maps' if phase == 'ok' else 'refuses (' + phase + ')'}")
    if jax["ok"]:
        if pod["ici"] != jax["ici"]:
            return f"filled ICI: JAX {jax['ici']}, Podium {pod['ici']}"
        if case["num_slices"] > 1 and pod["dcn"] != jax["dcn"]:
            return f"filled DCN: JAX {jax['dcn']}, Podium {pod['dcn']}"
        return None
    if phase in ("spec",) or (phase in ("ici_fill", "dcn_fill") and
                              pod["error_code"] == "invalid_parallelism" and
                              "is not a valid parallelism" in pod["message"]):
        # Podium refuses a value MaxText only rejects through its fill: the same step.
        return None if jax["phase"] in ("ici_fill", "dcn_fill") else (
            f"step: JAX {jax['phase']}, Podium refuses the values first")
    if phase != jax["phase"]:
        return f"step: JAX {jax['phase']}, Podium {phase}"
    if phase == "mapping":
        if jax["logical_axis_index"] is None:  # JAX's split search fails without naming an axis
            return None
        if (pod["logical_axis_index"], pod["remaining_mesh"]) != (jax["logical_axis_index"],
                                                                 jax["remaining_mesh"]):
            return (f"mapping failure: JAX axis {jax['logical_axis_index']} remaining "
                    f"{jax['remaining_mesh']}, Podium axis {pod['logical_axis_index']} remaining "
                    f"{pod['remaining_mesh']}")
        return None
    if pod["message"] != jax["message"]:
        return f"message: JAX {jax['message']!r}, Podium {pod['message']!r}"
    return None


def run(planner: str, cases: list[dict], progress: bool = False) -> dict:
    """Both verdicts for every case; with progress, a line to stderr every 100 cases."""
    t0 = time.time()
    jax = {}
    for i, c in enumerate(cases, 1):
        jax[c["id"]] = maxtext_mesh.maxtext_mesh(c)
        if progress and (i % 100 == 0 or i == len(cases)):
            print(f"mesh: JAX answered {i}/{len(cases)} cases ({time.time() - t0:.0f} s)",
                  file=sys.stderr, flush=True)
    t_jax = time.time() - t0
    pod = podium_verdicts(planner, cases)
    disagree = []
    for c in cases:
        reason = compare(c, jax[c["id"]], pod[c["id"]])
        if reason:
            disagree.append({"id": c["id"], "origin": c["origin"], "accelerator": c["accelerator"],
                             "num_slices": c["num_slices"], "parallelism": c["parallelism"],
                             "allow_split_physical_axes": c["allow_split_physical_axes"],
                             "reason": reason})
    return {"cases": len(cases), "agree": len(cases) - len(disagree), "disagree": disagree,
            "jax_maps": sum(1 for v in jax.values() if v["ok"]),
            "jax_refuses": {p: sum(1 for v in jax.values() if v["phase"] == p)
                            for p in ("ici_fill", "dcn_fill", "mapping", "other")},
            "seconds": round(time.time() - t0, 1), "jax_seconds": round(t_jax, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description="Podium's mesh verdicts against real JAX")
    parser.add_argument("--planner", required=True)
    parser.add_argument("--corpus", default=str(HERE / "mesh_corpus.jsonl"))
    parser.add_argument("--ids", default="", help="comma-separated case ids to run")
    parser.add_argument("--every", type=int, default=1, help="run every N-th case only")
    parser.add_argument("--out", default="", help="write the summary JSON here")
    args = parser.parse_args()
    cases = [json.loads(line) for line in open(args.corpus) if line.strip()]
    if args.ids:
        wanted = set(args.ids.split(","))
        cases = [c for c in cases if c["id"] in wanted]
    cases = cases[::args.every]
    summary = run(args.planner, cases)
    for d in summary["disagree"]:
        print(f"DISAGREE {d['id']} {d['accelerator']} x{d['num_slices']} {d['parallelism']}"
              f"{' split' if d['allow_split_physical_axes'] else ''}: {d['reason']}")
    print(f"mesh: {summary['agree']}/{summary['cases']} agree, JAX maps {summary['jax_maps']}, "
          f"refuses {summary['jax_refuses']}, {summary['seconds']} s")
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(summary, indent=1) + "\n")
    return 1 if summary["disagree"] else 0


if __name__ == "__main__":
    sys.exit(main())
