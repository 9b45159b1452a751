"""Hand-written port, torch side: a tiny CrossViT (Chen et al., 2021) image classifier (written by "person B").

The same math as port_crossvit_paddle.py, re-implemented by hand in the style of lucidrains'
vit-pytorch: input `img` [2, 3, 16, 16] (positional), a large-patch branch (8x8 patches, width
32, 2 heads) and a small-patch branch (4x4 patches, width 16, 2 heads), each with a CLS token,
a learned position embedding and 2 pre-norm transformer layers (LayerNorm eps 1e-6, exact
GELU, MLP ratio 2); one cross-attention fusion in which each branch's CLS token is projected
(LayerNorm -> GELU -> Linear) to the other branch's width, attends (as the only query) over
itself plus the other branch's patch tokens, is added to the attention output and projected
back (LayerNorm -> GELU -> Linear); a LayerNorm + Linear head per branch on the CLS token;
logits = (large + small) / 2, [2, 10].

Torch idioms on this side:
- root `CrossViTClassifier` registers `small` BEFORE `large` (two `BranchEncoder`s), then `cross`
  (`CrossFusion`), then `small_head` / `large_head` = nn.Sequential(LayerNorm, Linear) applied to
  the CLS vector only. The forward runs the large branch first, then the small one.
- `BranchEncoder`: `cls_token` [1, 1, D], `to_patch` (`PatchToTokens`: the image cut into
  patches by reshape / permute, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", then ONE nn.Linear
  `proj` (p*p*3 -> D)), the position embedding SPLIT into `pos_cls` [1, 1, D] and `pos_patch`
  [1, N, D], and `layers` = ModuleList of ModuleList([PreNorm(SelfAttention), PreNorm(FeedForward)]);
  the residual adds are inline in the branch forward.
- `PreNorm`: `norm` (LayerNorm) then `fn`. `SelfAttention`: ONE fused `to_qkv` Linear(D, 3D)
  (output rows [q | k | v]), chunked, and `to_out`. `FeedForward`: `net` = nn.Sequential(Linear,
  nn.GELU(), Linear).
- `CrossFusion` holds one `CLSBridge` per branch, `small_cls` registered before `large_cls`
  (called large first). `CLSBridge` registers `proj_in_norm`, `proj_in`, `attn_norm`, `attn`,
  `proj_out_norm`, `proj_out`; the GELUs are F.gelu inline and the other branch's CLS token is
  sliced off inside the bridge. `CrossAttention` keeps SEPARATE `to_q`, `to_k`, `to_v`, then
  `to_out`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_patch_transposed -> PatchToTokens permutes the patch grid as (w, h) instead of (h, w),
                            so the tokens come out in column-major patch order (the position
                            embedding then lands on the wrong patches)
  torch_cross_scale_dim  -> CrossAttention scales the logits by dim ** -0.5 (the full width)
                            instead of dim_head ** -0.5
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMAGE_SIZE, CHANNELS, NUM_CLASSES = 16, 3, 10
LG_PATCH, LG_DIM, LG_HEADS = 8, 32, 2
SM_PATCH, SM_DIM, SM_HEADS = 4, 16, 2
DEPTH, FF_MULT = 2, 2
LN_EPS = 1e-6
BATCH = 2
OWN_BUGS = {"torch_patch_transposed", "torch_cross_scale_dim"}
OTHER_BUGS = {"paddle_mlp_gelu_tanh", "paddle_kv_includes_cls"}


class PatchToTokens(nn.Module):
    def __init__(self, patch, dim, transposed=False):
        super().__init__()
        self.patch, self.transposed = patch, transposed
        self.proj = nn.Linear(patch * patch * CHANNELS, dim)

    def forward(self, img):
        b, c, h, w = img.shape
        p = self.patch
        x = img.reshape(b, c, h // p, p, w // p, p)  # b c h p1 w p2
        if self.transposed:
            x = x.permute(0, 4, 2, 3, 5, 1)  # b w h p1 p2 c
        else:
            x = x.permute(0, 2, 4, 3, 5, 1)  # b h w p1 p2 c
        x = x.reshape(b, (h // p) * (w // p), p * p * c)
        return self.proj(x)


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=LN_EPS)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.norm(x))


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.to_qkv = nn.Linear(dim, dim * 3)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = (t.view(b, n, self.heads, -1).transpose(1, 2) for t in self.to_qkv(x).chunk(3, dim=-1))
        dots = torch.einsum("bhid,bhjd->bhij", q, k) * self.scale
        out = torch.einsum("bhij,bhjd->bhid", dots.softmax(dim=-1), v)
        return self.to_out(out.transpose(1, 2).reshape(b, n, d))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        return self.net(x)


class BranchEncoder(nn.Module):
    def __init__(self, patch, dim, heads, transposed=False):
        super().__init__()
        num_patches = (IMAGE_SIZE // patch) ** 2
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.to_patch = PatchToTokens(patch, dim, transposed)
        self.pos_cls = nn.Parameter(torch.randn(1, 1, dim))
        self.pos_patch = nn.Parameter(torch.randn(1, num_patches, dim))
        self.layers = nn.ModuleList(
            [
                nn.ModuleList([PreNorm(dim, SelfAttention(dim, heads)), PreNorm(dim, FeedForward(dim, dim * FF_MULT))])
                for _ in range(DEPTH)
            ]
        )

    def forward(self, img):
        tokens = self.to_patch(img) + self.pos_patch
        cls = self.cls_token.expand(img.shape[0], -1, -1) + self.pos_cls
        x = torch.cat((cls, tokens), dim=1)
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return x


class CrossAttention(nn.Module):
    """The first token is the only query; keys / values: the whole context."""

    def __init__(self, dim, heads, scale_by_dim=False):
        super().__init__()
        self.heads = heads
        self.scale = dim**-0.5 if scale_by_dim else (dim // heads) ** -0.5
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q = self.to_q(x[:, :1]).view(b, 1, self.heads, -1).transpose(1, 2)
        k = self.to_k(x).view(b, n, self.heads, -1).transpose(1, 2)
        v = self.to_v(x).view(b, n, self.heads, -1).transpose(1, 2)
        attn = (q @ k.transpose(-1, -2) * self.scale).softmax(dim=-1)
        return self.to_out((attn @ v).transpose(1, 2).reshape(b, 1, d))


class CLSBridge(nn.Module):
    """This branch's CLS token visits the other branch and comes back."""

    def __init__(self, dim_self, dim_other, heads_other, scale_by_dim=False):
        super().__init__()
        self.proj_in_norm = nn.LayerNorm(dim_self, eps=LN_EPS)
        self.proj_in = nn.Linear(dim_self, dim_other)
        self.attn_norm = nn.LayerNorm(dim_other, eps=LN_EPS)
        self.attn = CrossAttention(dim_other, heads_other, scale_by_dim)
        self.proj_out_norm = nn.LayerNorm(dim_other, eps=LN_EPS)
        self.proj_out = nn.Linear(dim_other, dim_self)

    def forward(self, cls, other_tokens):
        c = self.proj_in(F.gelu(self.proj_in_norm(cls)))
        ctx = torch.cat((c, other_tokens[:, 1:]), dim=1)
        c = c + self.attn(self.attn_norm(ctx))
        return self.proj_out(F.gelu(self.proj_out_norm(c)))


class CrossFusion(nn.Module):
    def __init__(self, scale_by_dim=False):
        super().__init__()
        self.small_cls = CLSBridge(SM_DIM, LG_DIM, LG_HEADS, scale_by_dim)
        self.large_cls = CLSBridge(LG_DIM, SM_DIM, SM_HEADS, scale_by_dim)

    def forward(self, large, small):
        lg_cls = self.large_cls(large[:, :1], small)
        sm_cls = self.small_cls(small[:, :1], large)
        return torch.cat((lg_cls, large[:, 1:]), dim=1), torch.cat((sm_cls, small[:, 1:]), dim=1)


class CrossViTClassifier(nn.Module):
    def __init__(self, transposed=False, scale_by_dim=False):
        super().__init__()
        self.small = BranchEncoder(SM_PATCH, SM_DIM, SM_HEADS, transposed)
        self.large = BranchEncoder(LG_PATCH, LG_DIM, LG_HEADS, transposed)
        self.cross = CrossFusion(scale_by_dim)
        self.small_head = nn.Sequential(nn.LayerNorm(SM_DIM, eps=LN_EPS), nn.Linear(SM_DIM, NUM_CLASSES))
        self.large_head = nn.Sequential(nn.LayerNorm(LG_DIM, eps=LN_EPS), nn.Linear(LG_DIM, NUM_CLASSES))

    def forward(self, img):
        lg = self.large(img)
        sm = self.small(img)
        lg, sm = self.cross(lg, sm)
        return (self.large_head(lg[:, 0]) + self.small_head(sm[:, 0])) / 2


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_crossvit torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = CrossViTClassifier(transposed=bug == "torch_patch_transposed", scale_by_dim=bug == "torch_cross_scale_dim")
    return m.eval()


def _image():
    rng = np.random.default_rng(27)
    return rng.standard_normal((BATCH, CHANNELS, IMAGE_SIZE, IMAGE_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
