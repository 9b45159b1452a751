"""Hand-written port, torch side: a tiny mixture-of-experts decoder LM (written by "person B").

The same math as port_moe_paddle.py, re-implemented by hand. Sizes: vocab 64, hidden 32, 4 heads
of 8, 2 blocks, 16 learned positions, RMSNorm eps 1e-6, no biases, untied head; 4 SwiGLU experts
(intermediate 48), top-2 routing. Batch 2 x 8 tokens, eval mode.

Torch idioms on this side:
- `MoELM`: `tok_emb` (nn.Embedding), `pos_emb` (a raw nn.Parameter [16, 32], sliced and added),
  `blocks` (ModuleList of `Block`: `attn_norm`, `attn`, `ffn_norm`, `ffn`), `final_norm`, `head`.
  The norms are torch's built-in nn.RMSNorm(32, eps=1e-6).
- `CausalSelfAttention`: ONE fused `qkv` Linear(32, 96) (rows q | k | v) and `proj`;
  F.scaled_dot_product_attention(is_causal=True).
- `MoEFFN`: the `router` Linear(32, 4); top-2 of the router LOGITS, then a softmax over the two
  selected logits (float32). This equals the paddle side's softmax over all four followed by
  top-2 and renormalisation (the common normaliser cancels).
- `StackedExperts` (`ffn.experts`): the 4 experts' weights are STACKED 3-D parameters
  `w_gate` [4, 32, 48], `w_up` [4, 32, 48], `w_down` [4, 48, 32] (x @ W layout, no transpose).
  Every (token, slot) gathers its expert's matrices by index and runs torch.bmm; the two slot
  outputs are weighted and summed. All four experts live in ONE module called once per layer;
  the paddle side calls a separate layer per expert on its routed tokens.

Planted bug (PADIFF_BUG), see port_moe_truth.json; the paddle side's bug names are accepted and
ignored, any other name raises:
  router_softmax_fp16 -> the softmax over the two selected logits runs in float16
                         (top_logits.half()) and is cast back to float32
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, D_MODEL, N_HEAD, N_LAYER, BLOCK_SIZE = 64, 32, 4, 2, 16
N_EXPERT, TOP_K, D_FF = 4, 2, 48
NORM_EPS = 1e-6
BATCH, SEQ = 2, 8
OWN_BUGS = {"router_softmax_fp16"}
OTHER_BUGS = {"paddle_w1_w3_swapped", "paddle_topk_no_renorm"}


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL, bias=False)
        self.proj = nn.Linear(D_MODEL, D_MODEL, bias=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, N_HEAD, c // N_HEAD).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class StackedExperts(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_gate = nn.Parameter(torch.randn(N_EXPERT, D_MODEL, D_FF) * D_MODEL**-0.5)
        self.w_up = nn.Parameter(torch.randn(N_EXPERT, D_MODEL, D_FF) * D_MODEL**-0.5)
        self.w_down = nn.Parameter(torch.randn(N_EXPERT, D_FF, D_MODEL) * D_FF**-0.5)

    def forward(self, x, expert_idx, expert_w):
        """x [N, d], expert_idx [N, k] (int64), expert_w [N, k] -> [N, d]"""
        n, k = expert_idx.shape
        flat = expert_idx.reshape(-1)  # [N * k]
        xs = x.repeat_interleave(k, dim=0).unsqueeze(1)  # [N * k, 1, d]
        gate = torch.bmm(xs, self.w_gate[flat])
        up = torch.bmm(xs, self.w_up[flat])
        y = torch.bmm(F.silu(gate) * up, self.w_down[flat]).squeeze(1)  # [N * k, d]
        return (y.view(n, k, -1) * expert_w.unsqueeze(-1)).sum(dim=1)


class MoEFFN(nn.Module):
    def __init__(self, softmax_fp16=False):
        super().__init__()
        self.router = nn.Linear(D_MODEL, N_EXPERT, bias=False)
        self.experts = StackedExperts()
        self.softmax_fp16 = softmax_fp16

    def forward(self, x):
        b, t, c = x.shape
        flat = x.reshape(-1, c)
        logits = self.router(flat)
        top_logits, top_idx = torch.topk(logits, TOP_K, dim=-1)
        if self.softmax_fp16:  # the bug
            weights = F.softmax(top_logits.half(), dim=-1).float()
        else:
            weights = F.softmax(top_logits.float(), dim=-1)
        return self.experts(flat, top_idx, weights.to(x.dtype)).view(b, t, c)


class Block(nn.Module):
    def __init__(self, **bugs):
        super().__init__()
        self.attn_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.attn = CausalSelfAttention()
        self.ffn_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.ffn = MoEFFN(**bugs)

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.ffn(self.ffn_norm(x))


class MoELM(nn.Module):
    def __init__(self, **bugs):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, D_MODEL)
        self.pos_emb = nn.Parameter(torch.zeros(BLOCK_SIZE, D_MODEL))
        self.blocks = nn.ModuleList(Block(**bugs) for _ in range(N_LAYER))
        self.final_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok_emb(idx) + self.pos_emb[:t]
        for block in self.blocks:
            x = block(x)
        return self.head(self.final_norm(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_moe torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MoELM(softmax_fp16=bug == "router_softmax_fp16")
    return m.eval()


def _ids():
    rng = np.random.default_rng(3)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [B, T, VOCAB] through the head
    return (output**2).mean()
