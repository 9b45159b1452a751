"""Hand-written port, torch side: a tiny Swin Transformer (written by "person B").

The same math as port_swin_paddle.py, re-implemented by hand without any conv. Sizes: 32x32 RGB,
4x4 patches (8x8 tokens), width 16, 2 stages of 2 blocks (heads 2 then 4, head dim 8), windows
of 4x4, MLP ratio 2, patch merging 8x8x16 -> 4x4x32, 10 classes, LayerNorm eps 1e-5, exact GELU.

Torch idioms on this side:
- `patch_embed` (`PatchEmbedding`): F.unfold(kernel 4, stride 4) cuts the image into patches
  flattened in (c, kh, kw) order and ONE `proj` nn.Linear(48, 16) projects them (its weight is the
  paddle conv weight reshaped), then `norm`; the tokens are kept as [B, H, W, C] grids everywhere
  (timm's newer layout), never as sequences.
- `stages` = ModuleList of `SwinStage` (`downsample` FIRST, then `blocks` ModuleList): the
  merging lives at the START of stage 1 (nn.Identity in stage 0), not at the end of stage 0.
- `SwinBlock`: `ln1`, `attn`, `ln2`, `ffn` = nn.Sequential(Linear, GELU, Linear). The shifted
  windows roll by -2 / +2 with torch.roll; the shifted-window mask is built ON THE FLY in the
  block's forward (no buffer), -inf between regions, and added to the relative position bias.
- `WindowMSA`: SEPARATE `q`, `k`, `v` Linears and `out`; the relative position bias table is
  `rel_bias` [heads, 49] (heads first, the transpose of the paddle table) with a persistent
  buffer `rel_index` [16, 16] built as (dh + 3) * 7 + (dw + 3); the bias (plus mask) goes to
  F.scaled_dot_product_attention as a float attn_mask.
- `PatchMerging`: the 2x2 neighbours gathered with view + permute, einops-style
  "b (h p1) (w p2) c -> b h w (p1 p2 c)", i.e. in raster order (0,0), (0,1), (1,0), (1,1) of
  (row offset, column offset); paddle concatenates (0,0), (1,0), (0,1), (1,1). So chunks 1 and 2
  of the 4C features are swapped: `norm` LayerNorm(64) and `reduction` Linear(64, 32, no bias)
  hold the paddle tensors with their 16-wide chunks permuted (port_swin_hook.py).
- `norm` LayerNorm(32), mean over the grid inline, `head` Linear(32, 10).

Planted bugs (PADIFF_BUG), see port_swin_truth.json; the paddle side's bug names are accepted
and ignored, any other name raises:
  shift_sign -> the shifted blocks roll by +2 before the attention and -2 after (the sign of the
                cyclic shift flipped) while the mask is built for the -2 shift
  gelu_tanh  -> the FFN activation of every block is nn.GELU(approximate="tanh")
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMG, PATCH, IN_CHANS, EMBED_DIM, DEPTHS, HEADS, WINDOW, MLP_RATIO, CLASSES = 32, 4, 3, 16, (2, 2), (2, 4), 4, 2, 10
BATCH = 2
OWN_BUGS = {"shift_sign", "gelu_tanh"}
OTHER_BUGS = {"paddle_rel_index_transposed"}


def partition(x, ws):
    """[B, H, W, C] -> [B * nW, ws * ws, C]"""
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, ws * ws, c)


def unpartition(windows, ws, h, w):
    """[B * nW, ws * ws, C] -> [B, H, W, C]"""
    c = windows.shape[-1]
    x = windows.view(-1, h // ws, w // ws, ws, ws, c).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, h, w, c)


class WindowMSA(nn.Module):
    def __init__(self, dim, heads, ws):
        super().__init__()
        self.heads, self.ws, self.head_dim = heads, ws, dim // heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)
        self.rel_bias = nn.Parameter(torch.zeros(heads, (2 * ws - 1) ** 2))
        nn.init.trunc_normal_(self.rel_bias, std=0.02)
        pos = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij")).flatten(1)  # [2, N]
        rel = pos[:, :, None] - pos[:, None, :] + (ws - 1)  # [2, N, N]
        self.register_buffer("rel_index", rel[0] * (2 * ws - 1) + rel[1])

    def forward(self, x, mask=None):
        bw, n, c = x.shape
        q = self.q(x).view(bw, n, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(bw, n, self.heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(bw, n, self.heads, self.head_dim).transpose(1, 2)
        bias = self.rel_bias[:, self.rel_index.view(-1)].view(1, self.heads, n, n)
        if mask is not None:  # [nW, N, N] -> windows are batch-major: window index = i % nW
            nw = mask.shape[0]
            bias = (bias.unsqueeze(0) + mask[None, :, None]).expand(bw // nw, nw, self.heads, n, n)
            bias = bias.reshape(bw, self.heads, n, n)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return self.out(y.transpose(1, 2).reshape(bw, n, c))


class SwinBlock(nn.Module):
    def __init__(self, dim, heads, res, shifted, shift_sign_bug=False, gelu_tanh=False):
        super().__init__()
        self.ws = min(WINDOW, res)
        self.shift = WINDOW // 2 if shifted and res > WINDOW else 0
        self.sign = -1 if shift_sign_bug else 1
        self.ln1 = nn.LayerNorm(dim)
        self.attn = WindowMSA(dim, heads, self.ws)
        self.ln2 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, MLP_RATIO * dim),
                                 nn.GELU(approximate="tanh" if gelu_tanh else "none"),
                                 nn.Linear(MLP_RATIO * dim, dim))

    def _shift_mask(self, h, w, device):
        s, ws = self.shift, self.ws
        region = torch.zeros(1, h, w, 1, device=device)
        bounds = (0, h - ws, h - s, h)  # square grids: the same bounds for the columns
        for i in range(3):
            for j in range(3):
                region[:, bounds[i]:bounds[i + 1], bounds[j]:bounds[j + 1]] = 3 * i + j
        r = partition(region, ws).squeeze(-1)  # [nW, N]
        same = r[:, :, None] == r[:, None, :]
        return torch.zeros(same.shape, device=device).masked_fill(~same, float("-inf"))

    def forward(self, x):
        _b, h, w, _c = x.shape
        y = self.ln1(x)
        mask = None
        if self.shift:
            y = torch.roll(y, shifts=(-self.sign * self.shift, -self.sign * self.shift), dims=(1, 2))
            mask = self._shift_mask(h, w, x.device)
        y = unpartition(self.attn(partition(y, self.ws), mask), self.ws, h, w)
        if self.shift:
            y = torch.roll(y, shifts=(self.sign * self.shift, self.sign * self.shift), dims=(1, 2))
        x = x + y
        return x + self.ffn(self.ln2(x))


class PatchMerging(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(4 * dim)
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x):
        b, h, w, c = x.shape
        x = x.view(b, h // 2, 2, w // 2, 2, c).permute(0, 1, 3, 2, 4, 5).reshape(b, h // 2, w // 2, 4 * c)
        return self.reduction(self.norm(x))


class SwinStage(nn.Module):
    def __init__(self, dim, heads, depth, res, downsample, **bugs):
        super().__init__()
        if downsample:  # the merging at the start of the stage, from dim / 2
            self.downsample = PatchMerging(dim // 2)
        else:
            self.downsample = nn.Identity()
        self.blocks = nn.ModuleList(SwinBlock(dim, heads, res, shifted=i % 2 == 1, **bugs) for i in range(depth))

    def forward(self, x):
        x = self.downsample(x)
        for blk in self.blocks:
            x = blk(x)
        return x


class PatchEmbedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(IN_CHANS * PATCH * PATCH, EMBED_DIM)
        self.norm = nn.LayerNorm(EMBED_DIM)

    def forward(self, img):
        b = img.shape[0]
        g = IMG // PATCH
        patches = F.unfold(img, kernel_size=PATCH, stride=PATCH).transpose(1, 2)  # [B, L, C*p*p]
        return self.norm(self.proj(patches)).view(b, g, g, EMBED_DIM)


class Swin(nn.Module):
    def __init__(self, **bugs):
        super().__init__()
        self.patch_embed = PatchEmbedding()
        g = IMG // PATCH
        self.stages = nn.ModuleList(
            SwinStage(EMBED_DIM * 2**i, HEADS[i], DEPTHS[i], g // 2**i, downsample=i > 0, **bugs)
            for i in range(len(DEPTHS)))
        feat = EMBED_DIM * 2 ** (len(DEPTHS) - 1)
        self.norm = nn.LayerNorm(feat)
        self.head = nn.Linear(feat, CLASSES)

    def forward(self, img):
        x = self.patch_embed(img)
        for stage in self.stages:
            x = stage(x)
        return self.head(self.norm(x).mean(dim=(1, 2)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_swin torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Swin(shift_sign_bug=bug == "shift_sign", gelu_tanh=bug == "gelu_tanh")
    return m.eval()


def _image():
    rng = np.random.default_rng(5)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [B, 10] through the head
    return (output**2).mean()
