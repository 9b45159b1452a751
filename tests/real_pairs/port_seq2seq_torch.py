"""Hand-written port, torch side: a tiny Transformer translation model (written by "person B").

The same math as port_seq2seq_paddle.py, written by hand in torch: pre-norm encoder/decoder
blocks with a final LayerNorm each; self-attention with one fused `qkv` projection (rows q | k |
v), cross-attention with `q` and a fused `kv`; the FFN an nn.Sequential(Linear, GELU, Linear);
the shared token embedding scaled by sqrt(d_model); sinusoidal positions computed in forward
([sin | cos] halves); a separate untied `generator` Linear (no bias) that receives the embedding
weight in the transfer. Masks in torch's convention: True = masked out (masked_fill with -inf);
the decoder self-attention builds its own causal mask.

Planted bugs (PADIFF_BUG), see port_seq2seq_truth.json:
  causal_leak    -> decoder block 0's self-attention builds its causal mask with
                    torch.triu(..., diagonal=2): every target position also sees the next one
  pos_interleave -> the positional encoding interleaves sin/cos (even dims sin, odd dims cos)
                    instead of concatenating the [sin | cos] halves
"""
import math
import os
import types

import numpy as np
import torch
from torch import nn

VOCAB, D_MODEL, HEADS, FFN, LAYERS = 40, 32, 4, 64, 2
PAD = 0
BATCH, SRC_LEN, TGT_LEN = 2, 10, 9
SRC_LENGTHS = [10, 7]


def _attend(q, k, v, masked):
    """q, k, v [B, h, T, dh]; masked broadcastable to [B, h, Tq, Tk], True = masked out."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if masked is not None:
        scores = scores.masked_fill(masked, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def _split(x, heads):
    b, t, d = x.shape
    return x.view(b, t, heads, d // heads).transpose(1, 2)


def _merge(x):
    b, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(b, t, h * dh)


class SelfAttention(nn.Module):
    def __init__(self, d_model, heads, causal=False):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def _future_mask(self, t):
        return torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)

    def forward(self, x, pad_mask=None):  # pad_mask [B, S], True = pad
        q, k, v = (_split(z, self.heads) for z in self.qkv(x).chunk(3, dim=-1))
        masked = None
        if pad_mask is not None:
            masked = pad_mask[:, None, None, :]
        if self.causal:
            fut = self._future_mask(x.shape[1])
            masked = fut if masked is None else masked | fut
        return self.proj(_merge(_attend(q, k, v, masked)))


class CrossAttention(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d_model, d_model)
        self.kv = nn.Linear(d_model, 2 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, memory, pad_mask):
        q = _split(self.q(x), self.heads)
        k, v = (_split(z, self.heads) for z in self.kv(memory).chunk(2, dim=-1))
        return self.proj(_merge(_attend(q, k, v, pad_mask[:, None, None, :])))


def _ffn(d_model, ffn):
    return nn.Sequential(nn.Linear(d_model, ffn), nn.GELU(), nn.Linear(ffn, d_model))


class EncoderBlock(nn.Module):
    def __init__(self, d_model, heads, ffn):
        super().__init__()
        self.ln_attn = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, heads)
        self.ln_ff = nn.LayerNorm(d_model)
        self.ff = _ffn(d_model, ffn)

    def forward(self, x, pad_mask):
        x = x + self.attn(self.ln_attn(x), pad_mask)
        return x + self.ff(self.ln_ff(x))


class DecoderBlock(nn.Module):
    def __init__(self, d_model, heads, ffn):
        super().__init__()
        self.ln_self = nn.LayerNorm(d_model)
        self.self_attn = SelfAttention(d_model, heads, causal=True)
        self.ln_cross = nn.LayerNorm(d_model)
        self.cross_attn = CrossAttention(d_model, heads)
        self.ln_ff = nn.LayerNorm(d_model)
        self.ff = _ffn(d_model, ffn)

    def forward(self, y, memory, pad_mask):
        y = y + self.self_attn(self.ln_self(y))
        y = y + self.cross_attn(self.ln_cross(y), memory, pad_mask)
        return y + self.ff(self.ln_ff(y))


class Encoder(nn.Module):
    def __init__(self, n, d_model, heads, ffn):
        super().__init__()
        self.blocks = nn.ModuleList(EncoderBlock(d_model, heads, ffn) for _ in range(n))
        self.ln_f = nn.LayerNorm(d_model)

    def forward(self, x, pad_mask):
        for blk in self.blocks:
            x = blk(x, pad_mask)
        return self.ln_f(x)


class Decoder(nn.Module):
    def __init__(self, n, d_model, heads, ffn):
        super().__init__()
        self.blocks = nn.ModuleList(DecoderBlock(d_model, heads, ffn) for _ in range(n))
        self.ln_f = nn.LayerNorm(d_model)

    def forward(self, y, memory, pad_mask):
        for blk in self.blocks:
            y = blk(y, memory, pad_mask)
        return self.ln_f(y)


class SinusoidalPositions(nn.Module):
    """Adds [sin | cos] positional features, computed on the fly (no buffer)."""

    def __init__(self, d_model, interleave=False):
        super().__init__()
        self.d_model, self.interleave = d_model, interleave

    def forward(self, x):
        pos = torch.arange(x.shape[1], dtype=torch.float64)[:, None]
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, self.d_model, 2, dtype=torch.float64) / self.d_model))
        ang = pos * inv_freq
        if self.interleave:  # the bug: sin on even dims, cos on odd dims
            pe = torch.stack([ang.sin(), ang.cos()], dim=-1).flatten(-2)
        else:
            pe = torch.cat([ang.sin(), ang.cos()], dim=-1)
        return x + pe.to(x.dtype)


class Seq2SeqTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embed = nn.Embedding(VOCAB, D_MODEL)
        self.pos = SinusoidalPositions(D_MODEL)
        self.encoder = Encoder(LAYERS, D_MODEL, HEADS, FFN)
        self.decoder = Decoder(LAYERS, D_MODEL, HEADS, FFN)
        self.generator = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(self, src_ids, tgt_ids):
        pad_mask = src_ids == PAD  # True = masked out
        src = self.pos(self.tok_embed(src_ids) * math.sqrt(D_MODEL))
        memory = self.encoder(src, pad_mask)
        tgt = self.pos(self.tok_embed(tgt_ids) * math.sqrt(D_MODEL))
        return self.generator(self.decoder(tgt, memory, pad_mask))


def _leaky_future_mask(self, t):
    """The bug: diagonal=2, so position i also attends to i + 1."""
    return torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=2)


def model():
    torch.manual_seed(0)
    m = Seq2SeqTransformer().eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "causal_leak":
        sa = m.decoder.blocks[0].self_attn
        sa._future_mask = types.MethodType(_leaky_future_mask, sa)
    elif bug == "pos_interleave":
        m.pos.interleave = True
    return m


def _arrays():
    rng = np.random.default_rng(0)
    src = rng.integers(1, VOCAB, size=(BATCH, SRC_LEN)).astype("int64")  # no pad id (0) ...
    for b, n in enumerate(SRC_LENGTHS):
        src[b, n:] = PAD  # ... except the source padding after each length
    tgt = rng.integers(1, VOCAB, size=(BATCH, TGT_LEN)).astype("int64")
    return src, tgt


def inputs():
    src, tgt = _arrays()
    return (torch.from_numpy(src), torch.from_numpy(tgt)), {}


def loss(output):
    # logits [B, T, VOCAB] through the generator (not a LayerNorm output itself)
    return (output**2).mean()
