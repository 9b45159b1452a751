"""The torch side of relpos_paddle.py: the attention computes the clipped relative distances
inline and looks them up in its own ``rel_embed = nn.Embedding(2K + 1, heads)``.

PADIFF_BUG: torch_clip_short (this side: the distances clipped to [-(K-1), K-1], an off-by-one
in the attention's own code; the lookup itself is right), paddle_distance_flipped (the other
side's: accepted, ignored)."""
import math

import torch
import torch.nn.functional as F
from _common import D, bug, hidden
from torch import nn

HEADS, K = 2, 3


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(D, D)
        self.key = nn.Linear(D, D)
        self.value = nn.Linear(D, D)
        self.rel_embed = nn.Embedding(2 * K + 1, HEADS)
        self.dense = nn.Linear(D, D)

    def forward(self, x):
        b, n, _ = x.shape
        def heads(t):
            return t.view(b, n, HEADS, D // HEADS).transpose(1, 2)
        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        pos = torch.arange(n)
        clip = K - 1 if bug() == "torch_clip_short" else K
        idx = (pos[:, None] - pos[None, :]).clamp(-clip, clip) + K
        bias = self.rel_embed(idx).permute(2, 0, 1)  # [heads, n, n]
        logits = q @ k.transpose(-1, -2) / math.sqrt(D // HEADS) + bias[None]
        y = F.softmax(logits, dim=-1) @ v
        return self.dense(y.transpose(1, 2).reshape(b, n, D))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = SelfAttention()
        self.ln = nn.LayerNorm(D)

    def forward(self, x):
        return self.ln(x + self.attention(x))


def model():
    if bug() not in ("", "paddle_distance_flipped", "torch_clip_short"):
        raise ValueError(f"relpos torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
