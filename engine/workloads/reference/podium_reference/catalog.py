"""Model catalog of the reference workload: architecture, parameter count and FLOPs.

Pure Python (no JAX) on purpose: Podium mirrors these figures in its own model catalog
and planner, and `python3 -m podium_reference.catalog --json` must work with any Python 3.
The trainer builds its flax model from the same ModelDims, and a unit test checks that
param_count() equals the number of parameters of the flax model, so the two cannot drift.
"""

import argparse
import json
import sys
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ModelDims:
    """Architecture of a decoder-only transformer (pre-norm, RMSNorm, RoPE, GELU MLP).

    Field names follow MaxText's config keys so Podium can treat a reference model like
    any MaxText model when it computes FLOPs and memory.
    """

    name: str
    num_decoder_layers: int
    emb_dim: int
    num_query_heads: int
    num_kv_heads: int
    head_dim: int
    mlp_dim: int
    vocab_size: int
    # One activation (GELU) feeding wi, as MaxText's mlp_activations=["gelu"]: the FFN has
    # two matrices, wi (emb x mlp) and wo (mlp x emb).
    mlp_activations: int = 1


# reference-tiny: ~40 steps of 2 x 64 tokens take about a second of compute on one CPU core,
# so Podium's end-to-end tests (gang launch, kill, resume) stay fast.
# reference-small: about 7x the work of reference-tiny per step (0.65 GFLOP at 2 x 64), so
# step times are dominated by matmuls rather than Python overhead, yet still well under a
# second per step on one CPU core.
CATALOG = {
    "reference-tiny": ModelDims(
        name="reference-tiny",
        num_decoder_layers=2,
        emb_dim=64,
        num_query_heads=4,
        num_kv_heads=4,
        head_dim=16,
        mlp_dim=256,
        vocab_size=256,
    ),
    "reference-small": ModelDims(
        name="reference-small",
        num_decoder_layers=4,
        emb_dim=128,
        num_query_heads=4,
        num_kv_heads=4,
        head_dim=32,
        mlp_dim=512,
        vocab_size=256,
    ),
}


def get_dims(model_name):
    try:
        return CATALOG[model_name]
    except KeyError:
        # MaxText's wording for an unknown model_name, so Podium classifies it as a config error.
        raise ValueError(
            f"Invalid model name was passed. Got {model_name}, Valid options {tuple(CATALOG)}"
        ) from None


def param_count(d):
    """Exact number of trainable parameters of the flax model built from `d`.

    token embedding (vocab x emb)
    + per layer: attention norm (emb) + q (emb x Hq*hd) + k, v (emb x Hkv*hd each)
      + o (Hq*hd x emb) + MLP norm (emb) + wi (emb x mlp*n_act) + wo (mlp x emb)
    + final norm (emb) + unembedding (emb x vocab, not tied to the embedding).
    Positions use RoPE, which has no parameters; no biases anywhere.
    """
    e, hd = d.emb_dim, d.head_dim
    attention = e * d.num_query_heads * hd + 2 * e * d.num_kv_heads * hd + d.num_query_heads * hd * e
    mlp = e * d.mlp_dim * d.mlp_activations + d.mlp_dim * e
    per_layer = attention + mlp + 2 * e
    return d.vocab_size * e + d.num_decoder_layers * per_layer + e + e * d.vocab_size


def training_flops_per_device(d, per_device_batch_size, max_target_length, gradient_accumulation_steps=1):
    """Training FLOPs per device per step, as MaxText's calculate_tflops_training_per_device.

    Returns (total, learnable_weight, attention) in FLOPs (not TFLOPs). With B the per-device
    batch, S the sequence length, E emb_dim, per layer:
      ffn        = 2*B*S*mlp*E*n_activations + 2*B*S*mlp*E
      qkv        = 2*B*S*E*(Hq + 2*Hkv)*head_dim
      projection = 2*B*S*E*Hq*head_dim
      attention  = 4*B*S^2*Hq*head_dim / 2        (scores + values, halved for causality)
    plus the unembedding 2*B*S*E*vocab once; everything x3 (forward + backward) and
    x gradient_accumulation_steps (each step runs that many micro-batches).
    The input embedding is a lookup and costs no matmul FLOPs, as in MaxText.
    """
    b, s, e = per_device_batch_size, max_target_length, d.emb_dim
    ffn = 2 * b * s * d.mlp_dim * e * d.mlp_activations + 2 * b * s * d.mlp_dim * e
    qkv = 2 * b * s * e * (d.num_query_heads + 2 * d.num_kv_heads) * d.head_dim
    projection = 2 * b * s * e * d.num_query_heads * d.head_dim
    causal_attention = 4 * b * s * s * d.num_query_heads * d.head_dim / 2
    unembedding = 2 * b * s * e * d.vocab_size
    learnable = ((ffn + qkv + projection) * d.num_decoder_layers + unembedding) * 3
    attention = causal_attention * d.num_decoder_layers * 3
    learnable *= gradient_accumulation_steps
    attention *= gradient_accumulation_steps
    return learnable + attention, learnable, attention


def catalog_json():
    return {name: dict(asdict(d), num_parameters=param_count(d)) for name, d in CATALOG.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description="Print the reference workload's model catalog.")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    if args.json:
        json.dump(catalog_json(), sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
        return 0
    for name, d in CATALOG.items():
        print(f"{name}: layers {d.num_decoder_layers}, d_model {d.emb_dim}, heads {d.num_query_heads} "
              f"(kv {d.num_kv_heads}, head_dim {d.head_dim}), mlp {d.mlp_dim}, vocab {d.vocab_size}, "
              f"parameters {param_count(d):,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
