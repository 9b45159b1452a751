"""Hand-written port, torch side: a tiny Qwen2-MoE-style decoder LM (written by "person B").

The same math as port_qwen2_moe_paddle.py, re-implemented by hand: vocab 64, width 32, 4 query
heads of 8, 2 kv heads, 2 pre-norm blocks (RMSNorm eps 1e-6), q / k / v with bias, full rotary
(half-split) with base 1e6, causal attention, then a sparse MoE FFN: router softmax over 4 experts
(fp32), top-2 NOT renormalised, SwiGLU experts of hidden 24, plus a shared SwiGLU expert of hidden
48 gated by sigmoid(Linear(32, 1)). Input: positional `input_ids [2, 8]`. Output: logits
[2, 8, 64].

Torch idioms on this side:
- root `MoETransformerLM`: `embed`, `blocks` (ModuleList of `MoEDecoderBlock`), `final_norm`
  (nn.RMSNorm), `lm_head`.
- `MoEDecoderBlock`: `attn_norm`, `attn`, `ffn_norm`, `moe` (torch nn.RMSNorm, eps 1e-6).
- `GQAttention`: ONE fused `qkv` nn.Linear(32, 64, bias=True): rows 0:32 q, 32:48 k, 48:64 v;
  a `rotary` module (`RotaryEmbedding`, non-persistent `inv_freq` buffer) called as
  rotary(q, k) -> (q, k); GQA by expand + reshape; F.scaled_dot_product_attention(is_causal=True);
  `o` nn.Linear(32, 32, bias=False).
- `SparseMoE` registers the shared expert FIRST: `shared_expert` (`FusedSwiGLU`: ONE `gate_up`
  Linear(32, 96) rows 0:48 gate, 48:96 up, and `down`), `shared_expert_gate`, then `router`
  Linear(32, 4, no bias), then the routed experts as two STACKED parameters: `w13` [4, 48, 32]
  (per expert rows 0:24 gate, 24:48 up, [out, in]) and `w2` [4, 32, 24] ([out, in]). There are
  no expert modules: every expert runs on every token (einsum) and the top-2 weights are
  scattered into a dense [T, 4] combine matrix (zero for the unselected experts).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_topk_renormalized -> Mixtral-style routing: top-2 of the router LOGITS, softmax over the
                             two selected logits only, so the two weights sum to 1
                             (norm_topk_prob = True) where the model wants the unnormalised
                             full-softmax probabilities
  torch_rope_default_base -> GQAttention builds RotaryEmbedding(8) without passing the model's
                             rope_theta, so the rotary uses the class default base 10000
                             instead of 1e6
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, D_MODEL, N_HEADS, N_KV_HEADS, HEAD_DIM, N_LAYERS = 64, 32, 4, 2, 8, 2
N_EXPERTS, TOP_K, EXPERT_FF, SHARED_FF = 4, 2, 24, 48
ROPE_THETA, NORM_EPS = 1.0e6, 1e-6
BATCH, SEQ = 2, 8
OWN_BUGS = {"torch_topk_renormalized", "torch_rope_default_base"}
OTHER_BUGS = {"paddle_router_weights_bf16", "paddle_expert_gate_up_swapped"}


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @staticmethod
    def _rotate_half(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)

    def forward(self, q, k):  # [B, H, T, D]
        t = torch.arange(q.shape[-2], dtype=torch.float32)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        return q * cos + self._rotate_half(q) * sin, k * cos + self._rotate_half(k) * sin


class GQAttention(nn.Module):
    def __init__(self, rope_default_base=False):
        super().__init__()
        self.qkv = nn.Linear(D_MODEL, (N_HEADS + 2 * N_KV_HEADS) * HEAD_DIM, bias=True)
        if rope_default_base:
            self.rotary = RotaryEmbedding(HEAD_DIM)
        else:
            self.rotary = RotaryEmbedding(HEAD_DIM, base=ROPE_THETA)
        self.o = nn.Linear(N_HEADS * HEAD_DIM, D_MODEL, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).split([N_HEADS * HEAD_DIM, N_KV_HEADS * HEAD_DIM, N_KV_HEADS * HEAD_DIM], dim=-1)
        q = q.view(b, t, N_HEADS, HEAD_DIM).transpose(1, 2)
        k = k.view(b, t, N_KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = v.view(b, t, N_KV_HEADS, HEAD_DIM).transpose(1, 2)
        q, k = self.rotary(q, k)
        groups = N_HEADS // N_KV_HEADS
        k = k[:, :, None].expand(b, N_KV_HEADS, groups, t, HEAD_DIM).reshape(b, N_HEADS, t, HEAD_DIM)
        v = v[:, :, None].expand(b, N_KV_HEADS, groups, t, HEAD_DIM).reshape(b, N_HEADS, t, HEAD_DIM)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / math.sqrt(HEAD_DIM))
        return self.o(y.transpose(1, 2).reshape(b, t, N_HEADS * HEAD_DIM))


class FusedSwiGLU(nn.Module):
    def __init__(self, d_ff):
        super().__init__()
        self.gate_up = nn.Linear(D_MODEL, 2 * d_ff, bias=False)
        self.down = nn.Linear(d_ff, D_MODEL, bias=False)

    def forward(self, x):
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class SparseMoE(nn.Module):
    def __init__(self, renormalize=False):
        super().__init__()
        self.renormalize = renormalize
        self.shared_expert = FusedSwiGLU(SHARED_FF)
        self.shared_expert_gate = nn.Linear(D_MODEL, 1, bias=False)
        self.router = nn.Linear(D_MODEL, N_EXPERTS, bias=False)
        self.w13 = nn.Parameter(torch.randn(N_EXPERTS, 2 * EXPERT_FF, D_MODEL) * 0.1)
        self.w2 = nn.Parameter(torch.randn(N_EXPERTS, D_MODEL, EXPERT_FF) * 0.1)

    def forward(self, x):
        b, t, d = x.shape
        tokens = x.reshape(-1, d)
        logits = self.router(tokens).float()  # [T, E]
        if self.renormalize:
            top_logits, top_idx = logits.topk(TOP_K, dim=-1)
            top_w = F.softmax(top_logits, dim=-1)
        else:
            probs = F.softmax(logits, dim=-1)
            top_w, top_idx = probs.topk(TOP_K, dim=-1)
        combine = torch.zeros_like(logits).scatter(1, top_idx, top_w)  # [T, E]
        h = torch.einsum("td,efd->etf", tokens, self.w13)  # [E, T, 2F]
        gate, up = h.chunk(2, dim=-1)
        expert_out = torch.einsum("etf,edf->etd", F.silu(gate) * up, self.w2)  # [E, T, D]
        routed = torch.einsum("te,etd->td", combine, expert_out)
        shared = torch.sigmoid(self.shared_expert_gate(tokens)) * self.shared_expert(tokens)
        return (routed + shared).reshape(b, t, d)


class MoEDecoderBlock(nn.Module):
    def __init__(self, renormalize=False, rope_default_base=False):
        super().__init__()
        self.attn_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.attn = GQAttention(rope_default_base)
        self.ffn_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.moe = SparseMoE(renormalize)

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.moe(self.ffn_norm(x))


class MoETransformerLM(nn.Module):
    def __init__(self, **bugs):
        super().__init__()
        self.embed = nn.Embedding(VOCAB_SIZE, D_MODEL)
        self.blocks = nn.ModuleList([MoEDecoderBlock(**bugs) for _ in range(N_LAYERS)])
        self.final_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.lm_head = nn.Linear(D_MODEL, VOCAB_SIZE, bias=False)

    def forward(self, input_ids):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_qwen2_moe torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MoETransformerLM(renormalize=bug == "torch_topk_renormalized",
                         rope_default_base=bug == "torch_rope_default_base")
    return m.eval()


def _ids():
    rng = np.random.default_rng(118)
    return rng.integers(0, VOCAB_SIZE, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 8, 64]
    return (output**2).mean()
