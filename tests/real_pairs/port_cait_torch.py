"""Hand-written port, torch side: a tiny CaiT image transformer (written by "person B").

The same math as port_cait_paddle.py, re-implemented by hand: image [2, 3, 16, 16]
(positional), a 4x4 / stride 4 patch conv (3 -> 32) to 16 tokens plus a position embedding,
2 self-attention blocks with talking-heads attention (4 heads of 8) and LayerScale, 2
class-attention blocks in which only the class token queries, a final LayerNorm (eps 1e-6) and a
Linear(32, 10) head on the class token: logits [2, 10].

Torch idioms on this side:
- root `CaiTTiny` registers its parameters FIRST: `cls_token` [1, 1, 32], `pos_embed`
  [1, 16, 32]; then `patch_embed` (nn.Conv2d), `sa_blocks`, `ca_blocks` (ModuleLists),
  `norm`, `head`.
- TOKEN LAYOUT: the class token is appended LAST: u = cat([patch tokens, cls]); the class
  attention queries with u[:, -1:], and the head reads token -1 after the final norm.
- `TalkingHeadSelfAttention`: SEPARATE `to_q`, `to_k`, `to_v` Linears; head mixing is an
  einsum "bhij,gh->bgij" with [H, H] parameters `mix_pre` / `mix_post` ([out head, in head])
  plus `mix_pre_bias` / `mix_post_bias` [H]; logits = (q @ k^T) * scale; then `to_out`.
- `SelfAttentionBlock` / `ClassAttentionBlock`: `ln_attn`, `attn`, `ls_attn`, `ln_ff`, `ff`,
  `ls_ff`, where LayerScale is a MODULE (`LayerScale`, parameter `gamma` [32]).
- `ClassAttention`: `q` Linear and ONE fused `kv` Linear(32, 64) (rows [k | v]), then `to_out`.
- `FeedForward`: `fc_in`, `act` (nn.GELU module), `fc_out`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_ca_scale_dim -> ClassAttention scales the logits by dim ** -0.5 (32) instead of
                        head_dim ** -0.5 (8)
  torch_gelu_tanh    -> FeedForward's activation is nn.GELU(approximate="tanh") instead of
                        the exact erf GELU (every feed-forward of both block kinds)
"""
import os

import numpy as np
import torch
from torch import nn

IMAGE_SIZE, PATCH_SIZE, CHANNELS = 16, 4, 3
EMBED_DIM, NUM_HEADS, FF_DIM = 32, 4, 64
SA_DEPTH, CA_DEPTH, N_CLASSES = 2, 2, 10
N_TOKENS = (IMAGE_SIZE // PATCH_SIZE) ** 2
BATCH = 2
OWN_BUGS = {"torch_ca_scale_dim", "torch_gelu_tanh"}
OTHER_BUGS = {"paddle_heads_mix_swapped", "paddle_gammas_swapped"}


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


class FeedForward(nn.Module):
    def __init__(self, dim, hidden, tanh_gelu=False):
        super().__init__()
        self.fc_in = nn.Linear(dim, hidden)
        self.act = nn.GELU(approximate="tanh" if tanh_gelu else "none")
        self.fc_out = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc_out(self.act(self.fc_in(x)))


class TalkingHeadSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.mix_pre = nn.Parameter(torch.randn(heads, heads) / heads**0.5)
        self.mix_pre_bias = nn.Parameter(torch.zeros(heads))
        self.mix_post = nn.Parameter(torch.randn(heads, heads) / heads**0.5)
        self.mix_post_bias = nn.Parameter(torch.zeros(heads))
        self.to_out = nn.Linear(dim, dim)

    def _split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self._split(self.to_q(x)), self._split(self.to_k(x)), self._split(self.to_v(x))
        dots = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        dots = torch.einsum("bhij,gh->bgij", dots, self.mix_pre) + self.mix_pre_bias.view(1, -1, 1, 1)
        attn = dots.softmax(dim=-1)
        attn = torch.einsum("bhij,gh->bgij", attn, self.mix_post) + self.mix_post_bias.view(1, -1, 1, 1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, n, c)
        return self.to_out(out)


class SelfAttentionBlock(nn.Module):
    def __init__(self, dim, heads, hidden, tanh_gelu=False):
        super().__init__()
        self.ln_attn = nn.LayerNorm(dim, eps=1e-6)
        self.attn = TalkingHeadSelfAttention(dim, heads)
        self.ls_attn = LayerScale(dim)
        self.ln_ff = nn.LayerNorm(dim, eps=1e-6)
        self.ff = FeedForward(dim, hidden, tanh_gelu)
        self.ls_ff = LayerScale(dim)

    def forward(self, x):
        x = x + self.ls_attn(self.attn(self.ln_attn(x)))
        x = x + self.ls_ff(self.ff(self.ln_ff(x)))
        return x


class ClassAttention(nn.Module):
    def __init__(self, dim, heads, scale_by_dim=False):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = (dim if scale_by_dim else self.head_dim) ** -0.5
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, u):
        # u: [B, N + 1, C] with the class token LAST
        b, n, c = u.shape
        q = self.q(u[:, -1:]).view(b, 1, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(u).view(b, n, 2, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        attn = (torch.matmul(q, k.transpose(-2, -1)) * self.scale).softmax(dim=-1)  # [B, H, 1, N+1]
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, 1, c)
        return self.to_out(out)


class ClassAttentionBlock(nn.Module):
    def __init__(self, dim, heads, hidden, scale_by_dim=False, tanh_gelu=False):
        super().__init__()
        self.ln_attn = nn.LayerNorm(dim, eps=1e-6)
        self.attn = ClassAttention(dim, heads, scale_by_dim)
        self.ls_attn = LayerScale(dim)
        self.ln_ff = nn.LayerNorm(dim, eps=1e-6)
        self.ff = FeedForward(dim, hidden, tanh_gelu)
        self.ls_ff = LayerScale(dim)

    def forward(self, tokens, cls):
        u = torch.cat([tokens, cls], dim=1)
        cls = cls + self.ls_attn(self.attn(self.ln_attn(u)))
        cls = cls + self.ls_ff(self.ff(self.ln_ff(cls)))
        return cls


class CaiTTiny(nn.Module):
    def __init__(self, scale_by_dim=False, tanh_gelu=False):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, EMBED_DIM))
        self.pos_embed = nn.Parameter(torch.zeros(1, N_TOKENS, EMBED_DIM))
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        self.patch_embed = nn.Conv2d(CHANNELS, EMBED_DIM, PATCH_SIZE, stride=PATCH_SIZE)
        self.sa_blocks = nn.ModuleList(
            [SelfAttentionBlock(EMBED_DIM, NUM_HEADS, FF_DIM, tanh_gelu) for _ in range(SA_DEPTH)])
        self.ca_blocks = nn.ModuleList(
            [ClassAttentionBlock(EMBED_DIM, NUM_HEADS, FF_DIM, scale_by_dim, tanh_gelu) for _ in range(CA_DEPTH)])
        self.norm = nn.LayerNorm(EMBED_DIM, eps=1e-6)
        self.head = nn.Linear(EMBED_DIM, N_CLASSES)

    def forward(self, img):
        x = self.patch_embed(img).flatten(2).transpose(1, 2) + self.pos_embed  # [B, 16, 32]
        for blk in self.sa_blocks:
            x = blk(x)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        for blk in self.ca_blocks:
            cls = blk(x, cls)
        x = self.norm(torch.cat([x, cls], dim=1))
        return self.head(x[:, -1])


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cait torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = CaiTTiny(scale_by_dim=bug == "torch_ca_scale_dim", tanh_gelu=bug == "torch_gelu_tanh")
    return m.eval()


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, CHANNELS, IMAGE_SIZE, IMAGE_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
