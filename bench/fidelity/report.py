#!/usr/bin/env python3
"""Runs both fidelity checks and writes bench/results/fidelity.json and a Markdown table
(bench/results/fidelity.md, and in docs/planner.md between its fidelity table markers). Called by
bench/fidelity/run.sh.

fidelity.json: {"commit", "versions", "seconds", "mesh": {"cases", "agree", "disagree": [...]},
                "hbm": {"cases", "verdict_agree", "median_ratio", "worst_ratio", ...,
                        "rows": [...]}}
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import compile_grid  # noqa: E402
import mesh_diff  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--planner", required=True)
    parser.add_argument("--fresh", action="store_true", help="recompile the whole grid")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cached-only", action="store_true",
                        help="HBM: only the grid cases already compiled (compiled_cache.json)")
    parser.add_argument("--reuse-mesh", action="store_true",
                        help="keep the mesh section of the existing output (and the commit it was "
                             "computed at) instead of asking JAX the whole corpus again")
    parser.add_argument("--out", default=str(ROOT / "bench/results/fidelity.json"))
    parser.add_argument("--docs", default=str(ROOT / "docs/planner.md"),
                        help="document whose fidelity table is replaced ('' leaves it)")
    args = parser.parse_args()

    started = time.time()
    mesh_commit = None
    if args.reuse_mesh:
        previous = json.loads(pathlib.Path(args.out).read_text())
        mesh = previous["mesh"]
        mesh_commit = previous["mesh"].get("commit", previous["commit"])
        print(f"mesh: reused from {args.out} (commit {mesh_commit})", file=sys.stderr, flush=True)
    else:
        cases = [json.loads(line) for line in open(HERE / "mesh_corpus.jsonl") if line.strip()]
        mesh = mesh_diff.run(args.planner, cases, progress=True)
        print(f"mesh: {mesh['agree']}/{mesh['cases']} agree ({mesh['seconds']} s)",
              file=sys.stderr, flush=True)
    grid_args = [sys.executable, str(HERE / "compile_grid.py"), "--planner", args.planner,
                 "--jobs", str(args.jobs), "--out", "/dev/stdout"]
    # compile_grid prints progress lines, then the JSON document as the last output.
    rows_path = ROOT / "bench/results/fidelity_hbm_rows.json"
    grid_args[-1] = str(rows_path)
    if args.fresh:
        grid_args.append("--fresh")
    if args.cached_only:
        grid_args.append("--cached-only")
    subprocess.run(grid_args, check=True, stdout=sys.stderr)
    hbm = json.loads(rows_path.read_text())
    rows_path.unlink()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    versions = {p: importlib.metadata.version(p) for p in ("jax", "jaxlib", "libtpu")}
    result = {
        "commit": commit, "versions": versions,
        "mesh": {"cases": mesh["cases"], "agree": mesh["agree"], "disagree": mesh["disagree"],
                 "jax_maps": mesh["jax_maps"], "jax_refuses": mesh["jax_refuses"],
                 "seconds": mesh.get("seconds"), "commit": mesh_commit or commit},
        "hbm": {**hbm["summary"], "rows": [
            {"id": r["id"], "compiled_verdict": r["compiled"]["verdict"],
             "compiled_gib": round(r["compiled"]["gib"], 3),
             "podium_verdict": r["podium"]["verdict"],
             "podium_gib": round(r["podium"]["per_device_gib"], 3),
             "podium_band_gib": [round(r["podium"]["low_gib"], 3), round(r["podium"]["high_gib"], 3)],
             "podium_remat_floor_gib": [round(r["podium"][k], 3) for k in (
                 "remat_floor_low_gib", "remat_floor_gib", "remat_floor_high_gib")],
             "podium_remat_pressure": r["podium"]["remat_pressure"],
             "capacity_gib": r["podium"]["capacity_gib"],
             "ratio": round(r["podium"]["per_device_gib"] / r["compiled"]["gib"], 3)}
            for r in hbm["rows"]]},
    }
    result["seconds"] = round(time.time() - started, 1)
    out = pathlib.Path(args.out)
    out.write_text(json.dumps(result, indent=1) + "\n")
    lines = ["| case (slice/model/batch x seq/remat) | compiler | GiB | Podium | GiB (band) | "
             "remat floor (band) | ratio |",
             "|---|---|---|---|---|---|---|"]
    for r in result["hbm"]["rows"]:
        verdict = r["podium_verdict"] + (" (remat)" if r["podium_remat_pressure"] else "")
        low, floor, high = r["podium_remat_floor_gib"]
        lines.append(f"| {r['id']} | {r['compiled_verdict']} | {r['compiled_gib']:.2f} | "
                     f"{verdict} | {r['podium_gib']:.2f} ({r['podium_band_gib'][0]:.2f}-"
                     f"{r['podium_band_gib'][1]:.2f}) | {floor:.2f} ({low:.2f}-{high:.2f}) | "
                     f"{r['ratio']:.2f} |")
    h = result["hbm"]
    lines += ["", f"Mesh: {mesh['agree']} of {mesh['cases']} cases agree with JAX. HBM: verdict "
              f"agrees on {h['verdict_agree']} of {h['cases']}, median estimate/compiled "
              f"{h['median_ratio']}, worst {h['worst_ratio']} (ratios over the "
              f"{h['ratio_cases']} cases with a whole-program figure; {h['uncertain']} "
              f"uncertain; {h['remat_pressure']} fit through XLA's rematerialization, the "
              f"compiler agreeing on {h['remat_pressure_agree']}). Regenerated in "
              f"{result['seconds']:.0f} s."]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    if args.docs:
        replace_between_markers(pathlib.Path(args.docs), "\n".join(lines))
    print("\n".join(lines))
    return 0


BEGIN = "<!-- fidelity table: bench/fidelity/run.sh writes from here -->"
END = "<!-- fidelity table: to here -->"


def replace_between_markers(path: pathlib.Path, table: str) -> None:
    """The table in docs/planner.md, between its two marker comments, replaced by this run's."""
    text = path.read_text()
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{path}: the fidelity table markers are missing ({BEGIN!r} ... {END!r})")
    path.write_text(text[:start + len(BEGIN)] + "\n" + table + "\n" + text[end:])


if __name__ == "__main__":
    sys.exit(main())
