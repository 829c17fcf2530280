#!/usr/bin/env python3
"""HBM against the compiler: a grid of MaxText-shaped training steps (jax_decoder.py: dense and
MoE reference shapes x batch x sequence x remat policy x TPU family) compiled for TPU topologies
on this CPU host, each compared with Podium's HBM estimate for the same model config and mesh.

The compiler's figure is MaxText's "Total memory size" (max_utils.print_compiled_memory_stats):
argument + output - alias + temp of compiled.memory_analysis(). A step that does not fit fails to
compile with RESOURCE_EXHAUSTED ("Used X of Y hbm"): the compiler's verdict is then does_not_fit
and X is its figure. Podium answers through build/test/bin/planner_verdicts (kind "hbm"), from
the model given as a catalog YAML of MaxText keys.

Usage: compile_grid.py --planner build/test/bin/planner_verdicts [--ids a,b (in that order)] [--out FILE]
       [--cache FILE] (compiled figures are cached by case key; --fresh ignores the cache)
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import pathlib
import re
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

GIB = 2.0 ** 30

# Reference shapes in MaxText's model keys. dense-8b is llama3-8b (MaxText llama3-8b.yml);
# the others are scaled-down members of the same families so that several fit a small slice.
MODELS = {
    "dense-1b": dict(emb_dim=2048, num_query_heads=16, num_kv_heads=8, head_dim=128,
                     mlp_dim=8192, num_decoder_layers=16, vocab_size=32000),
    "dense-3b": dict(emb_dim=3072, num_query_heads=24, num_kv_heads=8, head_dim=128,
                     mlp_dim=8192, num_decoder_layers=28, vocab_size=128256),
    "dense-8b": dict(emb_dim=4096, num_query_heads=32, num_kv_heads=8, head_dim=128,
                     mlp_dim=14336, num_decoder_layers=32, vocab_size=128256),
    "moe-8x1b": dict(emb_dim=2048, num_query_heads=16, num_kv_heads=8, head_dim=128,
                     mlp_dim=4096, num_decoder_layers=16, vocab_size=32000, num_experts=8,
                     num_experts_per_tok=2, moe_mlp_dim=4096, capacity_factor=1.25),
    "moe-16x2b": dict(emb_dim=3072, num_query_heads=24, num_kv_heads=8, head_dim=128,
                      mlp_dim=6144, num_decoder_layers=12, vocab_size=32000, num_experts=16,
                      num_experts_per_tok=4, moe_mlp_dim=6144, capacity_factor=1.0),
    # For the CI subset (tests/fidelity): compiles in seconds; the large-batch case does not fit.
    "dense-tiny": dict(emb_dim=256, num_query_heads=4, num_kv_heads=2, head_dim=64, mlp_dim=1024,
                       num_decoder_layers=2, vocab_size=32000),
    "moe-tiny": dict(emb_dim=256, num_query_heads=4, num_kv_heads=2, head_dim=64, mlp_dim=512,
                     num_decoder_layers=2, vocab_size=4096, num_experts=4, num_experts_per_tok=2,
                     moe_mlp_dim=512, capacity_factor=1.25),
    # Cheap to compile (seconds of CPU each) yet with activations, not only logits, deciding the
    # verdict: a small vocabulary, a few wide layers; the MoE one routes 8 experts top-2 with
    # capacity, so its dispatch/combine buffers grow with the sequence.
    "dense-small": dict(emb_dim=1024, num_query_heads=8, num_kv_heads=4, head_dim=128,
                        mlp_dim=4096, num_decoder_layers=4, vocab_size=8192),
    "moe-small": dict(emb_dim=512, num_query_heads=8, num_kv_heads=4, head_dim=64, mlp_dim=1024,
                      num_decoder_layers=4, vocab_size=8192, num_experts=8, num_experts_per_tok=2,
                      moe_mlp_dim=1024, capacity_factor=1.25),
}

# Podium slice -> (family, topology) for the JAX topology devices.
SLICES = {"v5e-8": ("v5e", "2x4"), "v6e-8": ("v6e", "2x4"), "v5p-8": ("v5p", "2x2x1"),
          "tpu7x-8": ("tpu7x", "2x2x1")}


def grid(subset: str = "full") -> list[dict]:
    """The full grid, or the CI subset ("ci": five small compiles, dense and MoE, two that fit
    and three that do not; the failing ones stop at XLA's memory assignment and are the
    cheapest). The fifth is the remat floor's: a step whose natural peak is twice capacity that
    XLA cannot rematerialize to fit, because its floor is over capacity too (2-3 s of CPU)."""
    cases = []

    def add(accelerator, model, pdb, seq, remat, axes=None):
        cases.append({"id": f"{accelerator}/{model}/b{pdb}s{seq}/{remat}" +
                            ("".join(f"/{k}{v}" for k, v in sorted((axes or {}).items()))),
                      "accelerator": accelerator, "model": model, "per_device_batch_size": pdb,
                      "max_target_length": seq, "remat_policy": remat, "axes": axes or {}})

    if subset == "ci":
        add("v5e-8", "dense-tiny", 1, 512, "full")
        add("tpu7x-8", "moe-tiny", 2, 512, "minimal")
        add("v5e-8", "dense-tiny", 16, 8192, "full")
        add("v6e-8", "moe-tiny", 16, 8192, "full")
        add("v5e-8", "dense-small", 40, 8192, "full")
        return cases
    # The first shapes (1B-8B models, 16-32 layers) take minutes of CPU per compile on this
    # host; their figures are kept in compiled_cache.json. The rest are small models whose
    # compiles take seconds, sized so that each family sees shapes well inside and well beyond
    # its HBM (v5e 16 GiB, v6e 32 GiB, v5p and tpu7x 96 GiB per device) under three remat
    # policies, dense and MoE.
    for model, pdb, seq in (("dense-1b", 1, 2048), ("moe-8x1b", 1, 2048)):
        for accelerator in ("v5e-8", "v6e-8", "tpu7x-8"):
            add(accelerator, model, pdb, seq, "full")
    add("v5e-8", "dense-8b", 1, 2048, "full")
    add("tpu7x-8", "dense-8b", 1, 2048, "full")
    add("v5e-8", "dense-1b", 2, 2048, "full")
    add("v5e-8", "moe-8x1b", 2, 2048, "full")
    add("v5e-8", "dense-tiny", 1, 512, "full")
    add("tpu7x-8", "moe-tiny", 2, 512, "minimal")
    add("v6e-8", "moe-tiny", 16, 8192, "full")
    for accelerator, batches in (("v5e-8", (4, 16, 32)), ("v6e-8", (8, 32)),
                                 ("v5p-8", (32, 128)), ("tpu7x-8", (32, 128))):
        for pdb in batches:
            add(accelerator, "dense-tiny", pdb, 8192, "full")
    small = {  # accelerator -> (remat, batch, sequence) of dense-small
        "v5e-8": (("full", 8, 4096), ("full", 32, 8192), ("minimal", 16, 4096),
                  ("minimal", 16, 8192), ("save_dot_except_mlp", 8, 8192)),
        "v6e-8": (("full", 32, 4096), ("minimal", 32, 8192), ("save_dot_except_mlp", 16, 8192)),
        "v5p-8": (("full", 64, 8192), ("minimal", 32, 8192), ("minimal", 128, 8192)),
        "tpu7x-8": (("full", 32, 8192), ("minimal", 32, 8192), ("minimal", 128, 8192),
                    ("save_dot_except_mlp", 64, 8192)),
    }
    for accelerator, shapes in small.items():
        for remat, pdb, seq in shapes:
            add(accelerator, "dense-small", pdb, seq, remat)
    moe = {  # accelerator -> (remat, batch, sequence) of moe-small
        "v5e-8": (("full", 2, 4096), ("full", 1, 8192), ("full", 8, 8192), ("minimal", 4, 4096)),
        "v6e-8": (("full", 4, 8192), ("full", 16, 8192), ("minimal", 8, 4096)),
        "v5p-8": (("full", 16, 8192), ("full", 64, 8192)),
        "tpu7x-8": (("full", 16, 8192), ("full", 64, 8192), ("minimal", 16, 4096)),
    }
    for accelerator, shapes in moe.items():
        for remat, pdb, seq in shapes:
            add(accelerator, "moe-small", pdb, seq, remat)
    # Out-of-sample tests of the remat floor (docs/planner.md "HBM against the compiler"), chosen
    # after the rule from the 49 above: shapes whose natural peak is over capacity, with the floor
    # under it (Podium: fits only through XLA's rematerialization) or still over it.
    for accelerator, model, remat, pdb, seq in (
            ("v5e-8", "dense-small", "full", 24, 8192),
            ("v5e-8", "dense-small", "full", 40, 8192),
            ("v5e-8", "dense-small", "minimal", 32, 4096),
            ("v5e-8", "dense-small", "save_dot_except_mlp", 16, 8192),
            ("v6e-8", "dense-small", "full", 48, 8192),
            ("v6e-8", "moe-tiny", "full", 32, 8192)):
        add(accelerator, model, pdb, seq, remat)
    # (Tried and left out: v5p-8 dense-small full 128 x 8192 fails to compile for scoped VMEM,
    # CompileTimeScopedVmemOom in an attention fusion of 128 sequences' query blocks, not for HBM:
    # it gives no HBM figure.)
    return cases


def model_yaml(name: str, cfg: dict) -> str:
    """The model as a Podium catalog entry: MaxText keys plus the podium block."""
    lines = ["podium:", f"  name: {name}", "  description: fidelity grid model",
             "  source: bench/fidelity/compile_grid.py",
             f"base_emb_dim: {cfg['emb_dim']}", f"base_num_query_heads: {cfg['num_query_heads']}",
             f"base_num_kv_heads: {cfg['num_kv_heads']}", f"head_dim: {cfg['head_dim']}",
             f"base_mlp_dim: {cfg['mlp_dim']}",
             f"base_num_decoder_layers: {cfg['num_decoder_layers']}",
             f"vocab_size: {cfg['vocab_size']}", 'mlp_activations: ["silu", "linear"]',
             "logits_via_embedding: false"]
    if cfg.get("num_experts", 1) > 1:
        lines += [f"num_experts: {cfg['num_experts']}",
                  f"num_experts_per_tok: {cfg['num_experts_per_tok']}",
                  f"base_moe_mlp_dim: {cfg['moe_mlp_dim']}"]
    return "\n".join(lines) + "\n"


def mesh_axes(case: dict, devices: int) -> dict[str, int]:
    axes = dict(case["axes"])
    rest = devices
    for v in axes.values():
        rest //= v
    axes["fsdp"] = axes.get("fsdp", 1) * rest
    return axes


# XLA's two ways of saying a step does not fit: "Used X of Y hbm" (the whole program), or
# "the total memory required for HLO temporaries (X) exceeds available HBM (Y)" (temporaries
# alone: the figure is then a lower bound of the total, and not used for ratios).
_USED = re.compile(r"Used ([0-9.]+)([KMGT]) of ([0-9.]+)([KMGT]) hbm")
_TEMPS = re.compile(r"required for HLO temporaries \(([0-9.]+)([KMGT])\) exceeds available HBM "
                    r"\(([0-9.]+)([KMGT])\)")
_UNIT = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}


def oom_result(text: str) -> dict | None:
    """The compiler's does-not-fit verdict from its RESOURCE_EXHAUSTED message, or None."""
    if "RESOURCE_EXHAUSTED" not in text:
        return None
    for pattern, lower_bound in ((_USED, False), (_TEMPS, True)):
        m = pattern.search(text)
        if m:
            return {"verdict": "does_not_fit", "gib": float(m.group(1)) * _UNIT[m.group(2)] / GIB,
                    "capacity_gib": float(m.group(3)) * _UNIT[m.group(4)] / GIB,
                    "lower_bound": lower_bound, "message": text[:300]}
    return None


def compile_case(case: dict) -> dict:
    import maxtext_mesh
    import jax_decoder
    from jax.experimental import mesh_utils
    from jax.sharding import Mesh
    family, topology = SLICES[case["accelerator"]]
    devices = maxtext_mesh.tpu_devices(family, topology, 1)
    axes = mesh_axes(case, len(devices))
    names = ("data", "fsdp", "tensor", "expert")
    mesh = Mesh(mesh_utils.create_device_mesh([axes.get(n, 1) for n in names], devices), names)
    t0, cpu0 = time.time(), time.process_time()
    try:
        compiled = jax_decoder.compile_step(MODELS[case["model"]], mesh, case["remat_policy"],
                                            case["per_device_batch_size"],
                                            case["max_target_length"])
    except Exception as e:  # noqa: BLE001 - RESOURCE_EXHAUSTED is the answer for OOM
        result = oom_result(str(e))
        if result is None:
            raise
        result["seconds"] = round(time.time() - t0, 1)
        result["cpu_seconds"] = round(time.process_time() - cpu0, 1)
        return result
    ma = compiled.memory_analysis()
    total = (ma.argument_size_in_bytes + ma.output_size_in_bytes - ma.alias_size_in_bytes +
             ma.temp_size_in_bytes)
    return {"verdict": "fits", "gib": total / GIB,
            "argument_gib": ma.argument_size_in_bytes / GIB,
            "output_gib": ma.output_size_in_bytes / GIB, "alias_gib": ma.alias_size_in_bytes / GIB,
            "temp_gib": ma.temp_size_in_bytes / GIB, "seconds": round(time.time() - t0, 1),
            "cpu_seconds": round(time.process_time() - cpu0, 1)}


def podium_estimates(planner: str, cases: list[dict]) -> dict[str, dict]:
    import jax_decoder
    lines = []
    for c in cases:
        family, topology = SLICES[c["accelerator"]]
        import maxtext_mesh
        n = len(maxtext_mesh.tpu_devices(family, topology, 1))
        lines.append(json.dumps({
            "kind": "hbm", "id": c["id"], "accelerator": c["accelerator"],
            "model_yaml": model_yaml(c["model"], MODELS[c["model"]]),
            "axes": mesh_axes(c, n), "per_device_batch_size": c["per_device_batch_size"],
            "max_target_length": c["max_target_length"], "remat_policy": c["remat_policy"],
            "capacity_factor": MODELS[c["model"]].get("capacity_factor", -1.0),
            # jax_decoder's attention: blocks of 512 queries against the whole sequence.
            "attention_query_block": jax_decoder.ATTENTION_CHUNK}))
    done = subprocess.run([planner], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, check=True)
    out = {}
    for line in done.stdout.splitlines():
        v = json.loads(line)
        if "error" in v:
            raise SystemExit(f"planner_verdicts refused {v['id']}: {v['error']}")
        out[v["id"]] = v
    return out


def summarize(rows: list[dict]) -> dict:
    agree = sum(1 for r in rows if r["podium"]["verdict"] == r["compiled"]["verdict"])
    # Ratios where the compiler gave the whole program's figure (not a lower bound).
    ratios = [r["podium"]["per_device_gib"] / r["compiled"]["gib"] for r in rows
              if not r["compiled"].get("lower_bound")]
    worst = max(ratios, key=lambda x: max(x, 1 / x)) if ratios else None
    return {"cases": len(rows), "verdict_agree": agree,
            "verdict_agree_share": round(agree / len(rows), 4) if rows else None,
            "uncertain": sum(1 for r in rows if r["podium"]["verdict"] == "uncertain"),
            # Podium says fits only through the remat floor (natural band over capacity).
            "remat_pressure": sum(1 for r in rows if r["podium"]["remat_pressure"]),
            "remat_pressure_agree": sum(1 for r in rows if r["podium"]["remat_pressure"] and
                                        r["compiled"]["verdict"] == "fits"),
            "ratio_cases": len(ratios),
            "median_ratio": round(statistics.median(ratios), 4) if ratios else None,
            "worst_ratio": round(worst, 4) if worst else None}


def main() -> int:
    parser = argparse.ArgumentParser(description="Podium's HBM estimate against XLA's compiler")
    parser.add_argument("--planner", required=True)
    parser.add_argument("--ids", default="")
    parser.add_argument("--cache", default=str(HERE / "compiled_cache.json"))
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--out", default="")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--subset", default="full", choices=("full", "ci"))
    parser.add_argument("--jobs", type=int, default=2, help="compiles at once")
    parser.add_argument("--cached-only", action="store_true",
                        help="compare only the cases already in the cache (compile nothing)")
    args = parser.parse_args()
    cases = grid(args.subset)
    if args.ids:
        # In the order given: on a busy host the cheap or most telling compiles can go first.
        by_id = {c["id"]: c for c in cases}
        unknown = [i for i in args.ids.split(",") if i not in by_id]
        if unknown:
            raise SystemExit(f"not in the grid: {', '.join(unknown)}")
        cases = [by_id[i] for i in dict.fromkeys(args.ids.split(","))]
    if args.list:
        print("\n".join(c["id"] for c in cases))
        return 0
    cache_path = pathlib.Path(args.cache)
    cache = {} if args.fresh or not cache_path.exists() else json.loads(cache_path.read_text())
    todo = [] if args.cached_only else [c for c in cases if c["id"] not in cache]
    cases = [c for c in cases if c["id"] in cache or c in todo]
    if todo:
        # Separate processes: each compile is single-threaded for most of its time.
        ctx = multiprocessing.get_context("spawn")
        print(f"compiling {len(todo)} cases ({len(cases) - len(todo)} cached), {args.jobs} at "
              f"once", flush=True)
        started = time.time()
        with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs, mp_context=ctx) as pool:
            futures = {pool.submit(compile_case, c): c for c in todo}
            for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                c = futures[future]
                try:
                    cache[c["id"]] = future.result()
                except Exception as e:  # noqa: BLE001 - report and keep the others
                    # An OOM raised in the worker arrives here re-raised with its message.
                    result = oom_result(str(e))
                    if result is None:
                        print(f"FAILED to compile {c['id']}: {type(e).__name__}: {str(e)[:300]}",
                              flush=True)
                        continue
                    cache[c["id"]] = result
                print(f"[{done}/{len(todo)}, {time.time() - started:.0f} s] compiled {c['id']}: "
                      f"{cache[c['id']]['verdict']} {cache[c['id']]['gib']:.2f} GiB "
                      f"({cache[c['id']]['seconds']} s)", flush=True)
                # Merge with what is on disk: another run may have added cases meanwhile.
                on_disk = json.loads(cache_path.read_text()) if cache_path.exists() else {}
                cache = {**on_disk, **cache}
                cache_path.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")
        cases = [c for c in cases if c["id"] in cache]
    pod = podium_estimates(args.planner, cases)
    rows = []
    for c in cases:
        rows.append({**c, "compiled": cache[c["id"]], "podium": pod[c["id"]]})
        p, k = pod[c["id"]], cache[c["id"]]
        mark = "" if p["verdict"] == k["verdict"] else "  <-- verdict differs"
        print(f"{c['id']:55s} compiled {k['verdict']:12s} {k['gib']:7.2f}  podium "
              f"{p['verdict']:12s} {p['per_device_gib']:7.2f} ({p['low_gib']:.1f}-"
              f"{p['high_gib']:.1f}) of {p['capacity_gib']:.2f}  floor {p['remat_floor_gib']:.2f} "
              f"({p['remat_floor_low_gib']:.1f}-{p['remat_floor_high_gib']:.1f})"
              f"{' remat' if p['remat_pressure'] else ''}  ratio "
              f"{p['per_device_gib'] / k['gib']:.2f}{mark}")
    summary = summarize(rows)
    print(json.dumps(summary))
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps({"summary": summary, "rows": rows},
                                                     indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
