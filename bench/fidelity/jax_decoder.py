"""A compact JAX decoder that mirrors MaxText's model structure, for compiling training steps
for TPU topologies on a CPU host (compile_grid.py). Not a training program: it exists so that the
compiler can say what a MaxText-shaped step needs per device, with the model given by the same
MaxText keys Podium's catalog uses.

What is mirrored (MaxText src/maxtext/layers/*, configs/base.yml; restated, not copied):
- weights in weight_dtype (float32), computation in dtype (bfloat16): each weight is cast where
  it is used; AdamW (optax) moments in float32; gradients float32;
- token embedding [vocab, embed]; decoder layers stacked on a "layers" axis and run with
  jax.lax.scan (scan_layers: true), each under jax.checkpoint with the remat policy
  (full: nothing saved; save_qkv_proj / save_dot_except_mlp / minimal: MaxText's
  checkpoint_name tags saved; none: no jax.checkpoint);
- pre-norm RMSNorm, grouped-query attention (q [E,Hq,D], k/v [E,Hkv,D], out [Hq,D,E]) with a
  causal mask, computed in query chunks so that no [S, S] score matrix of all heads is live at
  once (MaxText runs splash/flash attention on TPU: memory linear in S);
- gated MLP (silu x linear, wi_0/wi_1 [E,M], wo [M,E]);
- MoE layers as MaxText's dense_matmul path with capacity_factor > 0: float32 router logits,
  softmax, top-k, expert capacity C = int(S * k / X * capacity_factor) per sequence, dispatch and
  combine masks [B, S, X, C], dispatched tokens [X, B, C, E], expert MLPs, combine;
- final RMSNorm, unembedding [embed, vocab], logits cast to float32 (cast_logits_to_fp32),
  softmax cross-entropy;
- shardings from MaxText's logical_axis_rules: weights' embed -> fsdp, heads/mlp/vocab ->
  tensor, exp -> expert; activations' batch -> (data, fsdp, expert), embed -> tensor.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import optax
from jax.ad_checkpoint import checkpoint_name
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

BATCH = ("data", "fsdp", "expert")

# Queries per attention block (each block's scores span the whole sequence); Podium's estimate
# is told the same (attention_query_block), as MaxText's splash kernel keeps its blocks in VMEM.
ATTENTION_CHUNK = 512

REMAT_SAVED = {
    "full": (),
    "save_qkv_proj": ("query_proj", "key_proj", "value_proj"),
    "save_dot_except_mlp": ("query_proj", "key_proj", "value_proj", "out_proj"),
    "minimal": ("query_proj", "key_proj", "value_proj", "out_proj", "mlpwi_0", "mlpwi_1",
                "mlpwo"),
}


def _axes(mesh, names):
    present = tuple(n for n in names if n in mesh.axis_names and mesh.shape[n] > 1)
    return present if present else None


def param_specs(cfg: dict, mesh) -> dict:
    """PartitionSpecs of every weight (MaxText logical axes -> mesh axes)."""
    fsdp = _axes(mesh, ("fsdp",))
    fsdp_x = _axes(mesh, ("fsdp", "expert"))  # embed of non-expert weights also over expert
    tensor = _axes(mesh, ("tensor",))
    expert = _axes(mesh, ("expert",))
    layer = {
        "attn_norm": P(None, None),
        "mlp_norm": P(None, None),
        "query": P(None, fsdp_x, tensor, None),
        "key": P(None, fsdp_x, tensor, None),
        "value": P(None, fsdp_x, tensor, None),
        "out": P(None, tensor, None, fsdp_x),
    }
    if cfg.get("num_experts", 1) > 1:
        layer.update({
            "gate": P(None, fsdp_x, None),
            "wi_0": P(None, expert, fsdp, tensor),
            "wi_1": P(None, expert, fsdp, tensor),
            "wo": P(None, expert, tensor, fsdp),
        })
    else:
        layer.update({"wi_0": P(None, fsdp_x, tensor), "wi_1": P(None, fsdp_x, tensor),
                      "wo": P(None, tensor, fsdp_x)})
    return {"embedding": P(tensor, fsdp_x), "layers": layer, "final_norm": P(None),
            "unembedding": P(fsdp_x, tensor)}


def param_shapes(cfg: dict) -> dict:
    e, hq, hkv, d = cfg["emb_dim"], cfg["num_query_heads"], cfg["num_kv_heads"], cfg["head_dim"]
    n, v = cfg["num_decoder_layers"], cfg["vocab_size"]
    layer = {"attn_norm": (n, e), "mlp_norm": (n, e), "query": (n, e, hq, d),
             "key": (n, e, hkv, d), "value": (n, e, hkv, d), "out": (n, hq, d, e)}
    if cfg.get("num_experts", 1) > 1:
        x, m = cfg["num_experts"], cfg["moe_mlp_dim"]
        layer.update({"gate": (n, e, x), "wi_0": (n, x, e, m), "wi_1": (n, x, e, m),
                      "wo": (n, x, m, e)})
    else:
        m = cfg["mlp_dim"]
        layer.update({"wi_0": (n, e, m), "wi_1": (n, e, m), "wo": (n, m, e)})
    return {"embedding": (v, e), "layers": layer, "final_norm": (e,), "unembedding": (e, v)}


def rms_norm(x, scale):
    xf = x.astype(jnp.float32)
    y = xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + 1e-6)
    return (y * scale.astype(jnp.float32)).astype(x.dtype)


def attention(q, k, v, chunk: int):
    """Causal grouped-query attention in query chunks; each chunk's scores are recomputed in the
    backward pass (jax.checkpoint), so the live scores are [B, Hq, chunk, S]."""
    b, s, hq, d = q.shape
    hkv = k.shape[2]
    g = hq // hkv
    c = min(chunk, s)
    q = q.reshape(b, s // c, c, hkv, g, d).transpose(1, 0, 2, 3, 4, 5)

    @jax.checkpoint
    def one(args):
        i, qc = args
        scores = jnp.einsum("bckgd,bskd->bkgcs", qc, k).astype(jnp.float32) / math.sqrt(d)
        mask = (i * c + jnp.arange(c))[:, None] >= jnp.arange(s)[None, :]
        scores = jnp.where(mask, scores, -1e30)
        probs = jax.nn.softmax(scores, axis=-1).astype(qc.dtype)
        return jnp.einsum("bkgcs,bskd->bckgd", probs, v)

    out = jax.lax.map(one, (jnp.arange(s // c), q))
    return out.transpose(1, 0, 2, 3, 4, 5).reshape(b, s, hq, d)


def dense_mlp(x, w, dtype):
    h0 = checkpoint_name(jnp.einsum("bse,em->bsm", x, w["wi_0"].astype(dtype)), "mlpwi_0")
    h1 = checkpoint_name(jnp.einsum("bse,em->bsm", x, w["wi_1"].astype(dtype)), "mlpwi_1")
    return checkpoint_name(jnp.einsum("bsm,me->bse", jax.nn.silu(h0) * h1, w["wo"].astype(dtype)),
                           "mlpwo")


def moe_mlp(x, w, cfg, dtype, mesh):
    """MaxText dense_matmul with capacity: top-k routing, dispatch/combine masks, experts."""
    b, s, e = x.shape
    n_exp, k = cfg["num_experts"], cfg["num_experts_per_tok"]
    capacity = max(1, int(s * k / n_exp * cfg.get("capacity_factor", 1.0)))
    logits = jnp.einsum("bse,ex->bsx", x, w["gate"].astype(dtype)).astype(jnp.float32)
    probs = jax.nn.softmax(logits, axis=-1)
    top_w, top_i = jax.lax.top_k(probs, k)  # [B,S,k]
    top_w = top_w / jnp.sum(top_w, axis=-1, keepdims=True)
    expert_mask = jax.nn.one_hot(top_i, n_exp, dtype=jnp.int32)  # [B,S,k,X]
    # Position of each (token, choice) in its expert's queue, choices of earlier tokens first.
    flat = expert_mask.reshape(b, s * k, n_exp)
    position = (jnp.cumsum(flat, axis=1) - 1).reshape(b, s, k, n_exp)
    keep = (position < capacity) & (expert_mask > 0)
    slot = jax.nn.one_hot(jnp.where(keep, position, -1), capacity, dtype=dtype)  # [B,S,k,X,C]
    dispatch = jnp.sum(slot, axis=2)  # [B,S,X,C]
    combine = jnp.einsum("bsk,bskxc->bsxc", top_w.astype(dtype), slot)
    batch = _axes(mesh, ("data", "fsdp"))
    expert = _axes(mesh, ("expert",))
    dispatch = jax.lax.with_sharding_constraint(dispatch, NamedSharding(mesh, P(batch, None, expert, None)))
    tokens = jnp.einsum("bse,bsxc->xbce", x, dispatch)
    tokens = jax.lax.with_sharding_constraint(tokens, NamedSharding(mesh, P(expert, batch, None, None)))
    h0 = checkpoint_name(jnp.einsum("xbce,xem->xbcm", tokens, w["wi_0"].astype(dtype)), "mlpwi_0")
    h1 = checkpoint_name(jnp.einsum("xbce,xem->xbcm", tokens, w["wi_1"].astype(dtype)), "mlpwi_1")
    out = checkpoint_name(jnp.einsum("xbcm,xme->xbce", jax.nn.silu(h0) * h1, w["wo"].astype(dtype)),
                          "mlpwo")
    return jnp.einsum("xbce,bsxc->bse", out, combine)


def make_train_step(cfg: dict, mesh, remat_policy: str, attention_chunk: int = ATTENTION_CHUNK):
    dtype = jnp.bfloat16
    moe = cfg.get("num_experts", 1) > 1
    act = NamedSharding(mesh, P(_axes(mesh, BATCH), None, _axes(mesh, ("tensor",))))

    def layer(x, w):
        x = jax.lax.with_sharding_constraint(x, act)
        h = rms_norm(x, w["attn_norm"])
        q = checkpoint_name(jnp.einsum("bse,ehd->bshd", h, w["query"].astype(dtype)), "query_proj")
        k = checkpoint_name(jnp.einsum("bse,ehd->bshd", h, w["key"].astype(dtype)), "key_proj")
        v = checkpoint_name(jnp.einsum("bse,ehd->bshd", h, w["value"].astype(dtype)), "value_proj")
        ctx = attention(q, k, v, attention_chunk)
        x = x + checkpoint_name(jnp.einsum("bshd,hde->bse", ctx, w["out"].astype(dtype)), "out_proj")
        h = rms_norm(x, w["mlp_norm"])
        x = x + (moe_mlp(h, w, cfg, dtype, mesh) if moe else dense_mlp(h, w, dtype))
        return jax.lax.with_sharding_constraint(x, act), None

    if remat_policy != "none":
        policy = jax.checkpoint_policies.save_only_these_names(*REMAT_SAVED[remat_policy])
        layer = jax.checkpoint(layer, policy=policy, prevent_cse=False)

    def loss_fn(params, tokens):
        inputs, targets = tokens[:, :-1], tokens[:, 1:]
        x = params["embedding"].astype(dtype)[inputs]
        x, _ = jax.lax.scan(layer, x, params["layers"])
        x = rms_norm(x, params["final_norm"])
        logits = jnp.einsum("bse,ev->bsv", x, params["unembedding"].astype(dtype))
        logits = logits.astype(jnp.float32)
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    optimizer = optax.adamw(1e-4, weight_decay=0.1)

    def train_step(state, tokens):
        params, opt_state = state
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    return train_step, optimizer


def abstract_inputs(cfg: dict, mesh, optimizer, per_device_batch: int, seq: int):
    """ShapeDtypeStructs with shardings for (state, tokens): nothing is allocated."""
    shapes, specs = param_shapes(cfg), param_specs(cfg, mesh)
    params = jax.tree.map(
        lambda shape, spec: jax.ShapeDtypeStruct(shape, jnp.float32,
                                                 sharding=NamedSharding(mesh, spec)),
        shapes, specs, is_leaf=lambda x: isinstance(x, tuple) and all(isinstance(i, int) for i in x))
    opt_state = jax.eval_shape(optimizer.init, params)
    # optax keeps the moments in the params' shapes: give them the params' shardings.
    flat_params = jax.tree.leaves(params)

    def shard_like(leaf):
        for p in flat_params:
            if p.shape == leaf.shape and p.dtype == leaf.dtype:
                return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=p.sharding)
        return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype,
                                    sharding=NamedSharding(mesh, P()))

    opt_state = jax.tree.map(shard_like, opt_state)
    global_batch = per_device_batch * mesh.size
    tokens = jax.ShapeDtypeStruct((global_batch, seq + 1), jnp.int32,
                                  sharding=NamedSharding(mesh, P(_axes(mesh, BATCH), None)))
    return (params, opt_state), tokens


def compile_step(cfg: dict, mesh, remat_policy: str, per_device_batch: int, seq: int):
    step, optimizer = make_train_step(cfg, mesh, remat_policy)
    state, tokens = abstract_inputs(cfg, mesh, optimizer, per_device_batch, seq)
    jitted = jax.jit(step, donate_argnums=(0,))
    return jitted.lower(state, tokens).compile()
