"""Torch side of crossroles_paddle.py: q|k|v packed in one Linear, gate and up apart, the
embedding scaled inline after the lookup, and the padding mask turned into one boolean
``[B, S, 1, S]`` mask (causal and padding, GPTBigCode's layout) before the blocks.

PADIFF_BUG (this side): torch_gate_tanh -> block 0's MLP gate uses tanh instead of SiLU."""
import math

import torch
import torch.nn.functional as F
from _common import B, S, V, bug, ids, mask
from torch import nn

D, H, KV = 16, 4, 2
HD = 8
BUGS = ("", "paddle_embed_scale", "paddle_mask_query_axis", "torch_gate_tanh")


class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(D))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv_proj = nn.Linear(D, (H + 2 * KV) * HD, bias=False)
        self.out_proj = nn.Linear(H * HD, D, bias=False)

    def forward(self, x, keep):
        q, k, v = self.qkv_proj(x).split([H * HD, KV * HD, KV * HD], dim=-1)
        q = q.view(B, S, H, HD).transpose(1, 2)
        k = k.view(B, S, KV, HD).transpose(1, 2).repeat_interleave(H // KV, dim=1)
        v = v.view(B, S, KV, HD).transpose(1, 2).repeat_interleave(H // KV, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(HD)
        scores = scores.masked_fill(~keep.transpose(1, 2), -1e9)
        out = scores.softmax(-1) @ v
        return self.out_proj(out.transpose(1, 2).reshape(B, S, H * HD))


class FeedForward(nn.Module):
    def __init__(self, index):
        super().__init__()
        self.index = index
        self.gate_proj = nn.Linear(D, 32, bias=False)
        self.up_proj = nn.Linear(D, 32, bias=False)
        self.down_proj = nn.Linear(32, D, bias=False)

    def forward(self, x):
        act = torch.tanh if bug() == "torch_gate_tanh" and self.index == 0 else F.silu
        return self.down_proj(act(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, index):
        super().__init__()
        self.input_norm = Norm()
        self.self_attn = SelfAttention()
        self.post_norm = Norm()
        self.ffn = FeedForward(index)

    def forward(self, x, keep):
        x = x + self.self_attn(self.input_norm(x), keep)
        return x + self.ffn(self.post_norm(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(V, D)
        self.layers = nn.ModuleList([Layer(i) for i in range(2)])
        self.final_norm = Norm()

    def forward(self, x, pad):
        h = self.tokens(x) * math.sqrt(D)
        causal = torch.ones(S, S, dtype=torch.bool).tril()
        keep = causal[None, :, None, :] & pad.bool()[:, None, None, :]
        for layer in self.layers:
            h = layer(h, keep)
        return self.final_norm(h)


def model():
    if bug() not in BUGS:
        raise ValueError(f"crossroles torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(ids()), torch.from_numpy(mask())), {}


def loss(out):
    return out.pow(2).mean()
