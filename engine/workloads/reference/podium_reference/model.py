"""The reference decoder in flax (linen): decoder-only, pre-norm, causal self-attention, bytes.

Its shape comes from catalog.ModelDims, and each matmul is one of the terms counted by
catalog.training_flops_per_device, so the TFLOP/s/device the trainer prints is the work this
code does (attention scores are computed in full and masked, as MaxText's dot-product
attention, and counted at half as MaxText counts causal attention). catalog.param_count is
the number of parameters this module creates (a unit test checks it).

Parameter names (the checkpoint's tree): embedding, layers_<i>/{attention_norm,
attention/{query,key,value,out}, mlp_norm, mlp/{wi,wo}}, final_norm, unembedding.
"""

import jax
import jax.numpy as jnp
from flax import linen as nn

_INIT = nn.initializers.normal(stddev=0.02)  # GPT-2's initialisation


class RMSNorm(nn.Module):
    eps: float = 1e-6

    @nn.compact
    def __call__(self, x):
        scale = self.param("scale", nn.initializers.ones, (x.shape[-1],), jnp.float32)
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + self.eps) * scale


def rope(x, theta=10000.0):
    """Rotary position embedding of x: (batch, seq, heads, head_dim); no parameters."""
    seq, head_dim = x.shape[1], x.shape[-1]
    inv_freq = 1.0 / (theta ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))
    angles = jnp.outer(jnp.arange(seq, dtype=jnp.float32), inv_freq)
    angles = jnp.concatenate([angles, angles], axis=-1)[None, :, None, :]
    half = head_dim // 2
    rotated = jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * jnp.cos(angles) + rotated * jnp.sin(angles)


def _dense(features, name):
    return nn.Dense(features, use_bias=False, kernel_init=_INIT, name=name)


class Attention(nn.Module):
    dims: object

    @nn.compact
    def __call__(self, x):
        d = self.dims
        b, s, _ = x.shape
        q = _dense(d.num_query_heads * d.head_dim, "query")(x).reshape(b, s, d.num_query_heads, d.head_dim)
        k = _dense(d.num_kv_heads * d.head_dim, "key")(x).reshape(b, s, d.num_kv_heads, d.head_dim)
        v = _dense(d.num_kv_heads * d.head_dim, "value")(x).reshape(b, s, d.num_kv_heads, d.head_dim)
        q, k = rope(q), rope(k)
        if d.num_kv_heads != d.num_query_heads:  # grouped-query attention: share each KV head
            k = jnp.repeat(k, d.num_query_heads // d.num_kv_heads, axis=2)
            v = jnp.repeat(v, d.num_query_heads // d.num_kv_heads, axis=2)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(jnp.float32(d.head_dim))
        causal = jnp.tril(jnp.ones((s, s), dtype=bool))
        scores = jnp.where(causal, scores, jnp.finfo(scores.dtype).min)
        y = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), v)
        return _dense(d.emb_dim, "out")(y.reshape(b, s, d.num_query_heads * d.head_dim))


class MLP(nn.Module):
    dims: object

    @nn.compact
    def __call__(self, x):
        d = self.dims
        return _dense(d.emb_dim, "wo")(nn.gelu(_dense(d.mlp_dim * d.mlp_activations, "wi")(x)))


class DecoderLayer(nn.Module):
    dims: object

    @nn.compact
    def __call__(self, x):
        x = x + Attention(self.dims, name="attention")(RMSNorm(name="attention_norm")(x))
        return x + MLP(self.dims, name="mlp")(RMSNorm(name="mlp_norm")(x))


class Decoder(nn.Module):
    dims: object

    @nn.compact
    def __call__(self, tokens):
        d = self.dims
        if d.mlp_activations != 1:
            raise ValueError("the reference MLP implements a single (GELU) activation")
        x = nn.Embed(d.vocab_size, d.emb_dim, embedding_init=_INIT, name="embedding")(tokens)
        for i in range(d.num_decoder_layers):
            x = DecoderLayer(d, name=f"layers_{i}")(x)
        return _dense(d.vocab_size, "unembedding")(RMSNorm(name="final_norm")(x))


def loss_fn(model, params, sequences):
    """Mean next-byte cross-entropy over a (batch, max_target_length + 1) int32 array."""
    inputs, targets = sequences[:, :-1], sequences[:, 1:]
    logits = model.apply({"params": params}, inputs)
    logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))
