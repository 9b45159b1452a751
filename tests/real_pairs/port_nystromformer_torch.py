"""Hand-written port, torch side: a tiny Nystromformer encoder (written by "person B", lucidrains style).

The same math as port_nystromformer_paddle.py, re-implemented by hand: positional `input_ids`
[2, 16] int64, vocab 50, width 32, 4 heads of 8, 4 landmarks, FFN 64 (exact GELU), 2 post-LN
blocks (eps 1e-5), output the last hidden state [2, 16, 32].

Torch idioms on this side:
- root `NystromEncoder`: `embed` (TokenPositionEmbedding: `tok`, `pos`, `norm`; the position ids
  arange(2, L + 2) are built inline in its forward, HF Nystromformer's offset of 2), `blocks`
  (ModuleList of NystromBlock, iterated).
- `NystromBlock` registers `ln1`, `attn`, `ln2`, `ff` (nn.Sequential Linear / nn.GELU / Linear);
  forward x = ln1(x + attn(x)); x = ln2(x + ff(x)).
- `NystromAttention` (lucidrains nystrom-attention layout): ONE fused `to_qkv` Linear(32, 96)
  (q | k | v blocks of 32 output rows), `res_conv` nn.Conv2d(4, 4, (1, 5), padding=(0, 2),
  groups=4, bias=False) applied to the values laid out [B, H, d, L] (the kernel runs along the
  last axis), `to_out` Linear(32, 32). q is scaled once by d ** -0.5 (k is not scaled); the
  landmarks are segment sums divided by the segment length; the pseudo-inverse is a module-level
  function `moore_penrose_iter_pinv` with init Z0 = K^T / (max |row sum| * max |col sum|) (max
  over the whole batch; the row sums of a softmax are 1, so this is HF's "original" init).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_pos_no_offset   -> the embedding builds position ids arange(L) instead of arange(2, L + 2)
                           (HF Nystromformer's offset forgotten)
  torch_ff_gelu_tanh    -> the feed-forward is built with nn.GELU(approximate="tanh") instead of the
                           exact erf GELU (precision-level: the two differ by at most ~5e-4 per
                           element)
"""
import os

import numpy as np
import torch
from torch import nn

VOCAB_SIZE, DIM, N_HEADS, DIM_FF, DEPTH = 50, 32, 4, 64, 2
MAX_LEN, LANDMARKS, RES_KERNEL, PINV_ITERS = 24, 4, 5, 6
BATCH, SEQ_LEN = 2, 16
OWN_BUGS = {"torch_pos_no_offset", "torch_ff_gelu_tanh"}
OTHER_BUGS = {"paddle_landmarks_strided", "paddle_pinv_init_per_head"}


def moore_penrose_iter_pinv(x, iters=PINV_ITERS):
    abs_x = torch.abs(x)
    col = abs_x.sum(dim=-1)
    row = abs_x.sum(dim=-2)
    z = x.transpose(-1, -2) / (torch.max(col) * torch.max(row))
    eye = torch.eye(x.shape[-1], device=x.device, dtype=x.dtype)
    for _ in range(iters):
        xz = x @ z
        z = 0.25 * z @ (13 * eye - (xz @ (15 * eye - (xz @ (7 * eye - xz)))))
    return z


class TokenPositionEmbedding(nn.Module):
    def __init__(self, pos_offset=2):
        super().__init__()
        self.tok = nn.Embedding(VOCAB_SIZE, DIM)
        self.pos = nn.Embedding(MAX_LEN, DIM)
        self.norm = nn.LayerNorm(DIM, eps=1e-5)
        self.pos_offset = pos_offset

    def forward(self, ids):
        n = ids.shape[1]
        positions = torch.arange(self.pos_offset, n + self.pos_offset, device=ids.device).unsqueeze(0)
        return self.norm(self.tok(ids) + self.pos(positions))


class NystromAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = N_HEADS
        self.dim_head = DIM // N_HEADS
        self.scale = self.dim_head**-0.5
        self.num_landmarks = LANDMARKS
        self.to_qkv = nn.Linear(DIM, 3 * DIM)
        self.res_conv = nn.Conv2d(N_HEADS, N_HEADS, (1, RES_KERNEL), padding=(0, RES_KERNEL // 2), groups=N_HEADS,
                                  bias=False)
        self.to_out = nn.Linear(DIM, DIM)

    def forward(self, x):
        b, n, _ = x.shape
        h, m = self.heads, self.num_landmarks
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(b, n, h, -1).transpose(1, 2) for t in (q, k, v))  # [b, h, n, d]
        q = q * self.scale
        seg = n // m
        q_land = q.view(b, h, m, seg, -1).sum(dim=-2) / seg
        k_land = k.view(b, h, m, seg, -1).sum(dim=-2) / seg
        attn1 = torch.einsum("bhid,bhjd->bhij", q, k_land).softmax(dim=-1)
        attn2 = torch.einsum("bhid,bhjd->bhij", q_land, k_land).softmax(dim=-1)
        attn3 = torch.einsum("bhid,bhjd->bhij", q_land, k).softmax(dim=-1)
        attn2_inv = moore_penrose_iter_pinv(attn2)
        out = (attn1 @ attn2_inv) @ (attn3 @ v)
        out = out + self.res_conv(v.transpose(-1, -2)).transpose(-1, -2)
        out = out.transpose(1, 2).reshape(b, n, h * self.dim_head)
        return self.to_out(out)


class NystromBlock(nn.Module):
    def __init__(self, gelu_approximate="none"):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM, eps=1e-5)
        self.attn = NystromAttention()
        self.ln2 = nn.LayerNorm(DIM, eps=1e-5)
        self.ff = nn.Sequential(nn.Linear(DIM, DIM_FF), nn.GELU(approximate=gelu_approximate), nn.Linear(DIM_FF, DIM))

    def forward(self, x):
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.ff(x))


class NystromEncoder(nn.Module):
    def __init__(self, pos_offset=2, gelu_approximate="none"):
        super().__init__()
        self.embed = TokenPositionEmbedding(pos_offset)
        self.blocks = nn.ModuleList([NystromBlock(gelu_approximate) for _ in range(DEPTH)])

    def forward(self, input_ids):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x)
        return x


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nystromformer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = NystromEncoder(pos_offset=0 if bug == "torch_pos_no_offset" else 2,
                       gelu_approximate="tanh" if bug == "torch_ff_gelu_tanh" else "none")
    return m.eval()


def _ids():
    rng = np.random.default_rng(31)
    return rng.integers(0, VOCAB_SIZE, size=(BATCH, SEQ_LEN)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # last hidden state [2, 16, 32]
    return (output**2).mean()
