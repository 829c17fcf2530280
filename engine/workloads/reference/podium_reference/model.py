"""The reference GPT in torch: decoder-only, pre-norm, causal self-attention, byte vocabulary.

Its shape comes from catalog.ModelDims; every matmul here is one of the terms counted by
catalog.training_flops_per_device, so the TFLOP/s/device the trainer reports is the work this
code actually does (attention probabilities are computed in full and masked, as MaxText's
dot-product attention, but counted at half as MaxText counts causal attention).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(seq_len, head_dim, dtype, theta=10000.0):
    """cos/sin tables for rotary position embeddings (no parameters, any sequence length)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float32), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_rope(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = d.num_query_heads, d.num_kv_heads, d.head_dim
        self.query = nn.Linear(d.emb_dim, d.num_query_heads * d.head_dim, bias=False)
        self.key = nn.Linear(d.emb_dim, d.num_kv_heads * d.head_dim, bias=False)
        self.value = nn.Linear(d.emb_dim, d.num_kv_heads * d.head_dim, bias=False)
        self.out = nn.Linear(d.num_query_heads * d.head_dim, d.emb_dim, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        q = self.query(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.key(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.value(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if self.kv_heads != self.heads:  # grouped-query attention: share each KV head
            k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
            v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(mask, float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, s, self.heads * self.head_dim))


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.wi = nn.Linear(d.emb_dim, d.mlp_dim * d.mlp_activations, bias=False)
        self.wo = nn.Linear(d.mlp_dim, d.emb_dim, bias=False)

    def forward(self, x):
        return self.wo(F.gelu(self.wi(x)))


class DecoderLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.attention_norm = RMSNorm(d.emb_dim)
        self.attention = Attention(d)
        self.mlp_norm = RMSNorm(d.emb_dim)
        self.mlp = MLP(d)

    def forward(self, x, cos, sin, mask):
        x = x + self.attention(self.attention_norm(x), cos, sin, mask)
        return x + self.mlp(self.mlp_norm(x))


class GPT(nn.Module):
    def __init__(self, d):
        super().__init__()
        if d.mlp_activations != 1:
            raise ValueError("the reference MLP implements a single (GELU) activation")
        self.dims = d
        self.embedding = nn.Embedding(d.vocab_size, d.emb_dim)
        self.layers = nn.ModuleList(DecoderLayer(d) for _ in range(d.num_decoder_layers))
        self.final_norm = RMSNorm(d.emb_dim)
        self.unembedding = nn.Linear(d.emb_dim, d.vocab_size, bias=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):
        # GPT-2's initialisation; deterministic given torch.manual_seed(seed) before construction.
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, tokens):
        s = tokens.shape[1]
        x = self.embedding(tokens)
        cos, sin = rope_tables(s, self.dims.head_dim, x.dtype)
        mask = torch.ones(s, s, dtype=torch.bool).triu(1)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.unembedding(self.final_norm(x))

    def loss(self, sequences):
        """Mean next-byte cross-entropy over a (batch, max_target_length + 1) tensor."""
        inputs, targets = sequences[:, :-1], sequences[:, 1:]
        logits = self(inputs)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
