"""Hand-written port, paddle side: a tiny CSWin-Transformer classifier (written by "person A").

Input: one positional image [2, 3, 32, 32] (NCHW, numpy rng seed 54, standard normal). Output:
logits [2, 10].

Shared math (the CSWin paper / microsoft CSWin-Transformer code):
  conv embed  Conv(3 -> 16, 7x7, stride 4, pad 2) -> tokens [B, 64, 16] -> LayerNorm
  stage 1     2 CSWin blocks, dim 16, 4 heads (2 per branch, head dim 4), stripe width 2, 8x8
  merge       Conv(16 -> 32, 3x3, stride 2, pad 1) -> tokens [B, 16, 32] -> LayerNorm
  stage 2     1 CSWin block, dim 32, 4 heads (2 per branch, head dim 8), stripe width 2, 4x4
  head        LayerNorm -> mean over tokens -> Linear(32 -> 10)
CSWin block (pre-norm): x = x + proj(cross-shaped attention(norm1(x))); x = x + mlp(norm2(x)),
mlp = Linear(C -> 2C), exact GELU, Linear(2C -> C). Cross-shaped attention: q, k, v = one
projection of the normed tokens; half of the channels (half of the heads) attend inside VERTICAL
stripes (full height H x stripe width 2), the other half inside HORIZONTAL stripes (2 x full
width W); in every stripe, softmax(q k^T / sqrt(head dim)) v + LePE(v), where LePE is a 3x3
depthwise conv (with bias) run on the stripe's own v map (zero padding at the stripe's border);
the two halves are concatenated back and projected.

Paddle idioms on this side (close to the original code):
- root `CSWinTransformer`: `stage1_conv_embed` (ConvEmbed: `proj` Conv2D, `norm` LayerNorm),
  `stage1` (LayerList of 2 CSWinBlock), `merge1` (MergeBlock: `conv`, `norm`), `stage2`
  (LayerList of 1 CSWinBlock), `norm`, `head`. Tokens are kept as [B, L, C] everywhere; the
  LayerLists are iterated, never called.
- `CSWinBlock` registers `norm1`, ONE fused `qkv` Linear(C, 3C) (output columns q | k | v, each
  laid out [vertical-branch heads | horizontal-branch heads]), `proj`, `attns` (LayerList of two
  LePEAttention: attns.0 = vertical stripes on channels 0:C/2, attns.1 = horizontal stripes on
  channels C/2:C), `norm2`, `mlp`. The qkv reshape / split into branches, the concat of the
  two branch outputs and the residuals are inline in the block.
- `LePEAttention` (one branch) registers only `get_v` (depthwise Conv2D); it is called with the
  stacked [3, B, L, C/2] branch slice and partitions with the original img2windows /
  windows2img permutations ([B, C, H/Hs, Hs, W/Ws, Ws] -> perm 0,2,4,3,5,1).
- `Mlp`: `fc1`, `act` (nn.GELU module), `fc2`.
- model() gives every LayerNorm, Linear bias and conv bias trained-looking values (seeded).

The torch side (port_cswin_torch.py) was written independently: channels-last [B, H, W, C]
tokens, separate to_q / to_k / to_v Linears, the HORIZONTAL branch on the first half of the
channels, the merge conv inside stage 2, and F.scaled_dot_product_attention.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_lepe_full_image -> LePEAttention.get_lepe runs get_v on the whole [B, C, H, W] v map
                            and cuts the result into stripes afterwards, so the conv sees the
                            neighbouring stripes' v instead of zero padding at stripe borders
  paddle_gelu_tanh       -> Mlp builds nn.GELU(approximate=True) (tanh approximation) instead
                            of the exact erf GELU
"""

import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, IN_CHANS, NUM_CLASSES = 32, 3, 10
EMBED_DIM = 16
DEPTH = (2, 1)
HEADS = (4, 4)
SPLIT_SIZE = (2, 2)
MLP_RATIO = 2
BATCH = 2
OWN_BUGS = {"paddle_lepe_full_image", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_merge_reshape", "torch_branch_concat_swapped"}


def img2windows(img, h_sp, w_sp):
    b, c, h, w = img.shape
    x = img.reshape([b, c, h // h_sp, h_sp, w // w_sp, w_sp])
    return x.transpose([0, 2, 4, 3, 5, 1]).reshape([-1, h_sp * w_sp, c])


def windows2img(win, h_sp, w_sp, h, w):
    b = win.shape[0] // (h * w // h_sp // w_sp)
    x = win.reshape([b, h // h_sp, w // w_sp, h_sp, w_sp, -1])
    return x.transpose([0, 1, 3, 2, 4, 5]).reshape([b, h, w, -1])


class LePEAttention(nn.Layer):
    def __init__(self, dim, resolution, idx, split_size, num_heads, lepe_full=False):
        super().__init__()
        self.dim, self.resolution, self.num_heads = dim, resolution, num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.lepe_full = lepe_full
        if idx == 0:
            self.h_sp, self.w_sp = resolution, split_size
        else:
            self.h_sp, self.w_sp = split_size, resolution
        self.get_v = nn.Conv2D(dim, dim, kernel_size=3, stride=1, padding=1, groups=dim)

    def im2cswin(self, x):
        b, _n, c = x.shape
        h = w = self.resolution
        x = x.transpose([0, 2, 1]).reshape([b, c, h, w])
        x = img2windows(x, self.h_sp, self.w_sp)
        x = x.reshape([-1, self.h_sp * self.w_sp, self.num_heads, c // self.num_heads])
        return x.transpose([0, 2, 1, 3])

    def _stripes(self, x):
        b, c, h, w = x.shape
        x = x.reshape([b, c, h // self.h_sp, self.h_sp, w // self.w_sp, self.w_sp])
        return x.transpose([0, 2, 4, 1, 3, 5]).reshape([-1, c, self.h_sp, self.w_sp])

    def get_lepe(self, x):
        b, _n, c = x.shape
        h = w = self.resolution
        x = x.transpose([0, 2, 1]).reshape([b, c, h, w])
        if self.lepe_full:
            lepe = self._stripes(self.get_v(x))
            x = self._stripes(x)
        else:
            x = self._stripes(x)
            lepe = self.get_v(x)
        hd = c // self.num_heads
        lepe = lepe.reshape([-1, self.num_heads, hd, self.h_sp * self.w_sp]).transpose([0, 1, 3, 2])
        x = x.reshape([-1, self.num_heads, hd, self.h_sp * self.w_sp]).transpose([0, 1, 3, 2])
        return x, lepe

    def forward(self, qkv):
        q, k, v = qkv[0], qkv[1], qkv[2]
        b, _n, c = q.shape
        q = self.im2cswin(q)
        k = self.im2cswin(k)
        v, lepe = self.get_lepe(v)
        q = q * self.scale
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True), axis=-1)
        x = paddle.matmul(attn, v) + lepe
        x = x.transpose([0, 2, 1, 3]).reshape([-1, self.h_sp * self.w_sp, c])
        x = windows2img(x, self.h_sp, self.w_sp, self.resolution, self.resolution)
        return x.reshape([b, -1, c])


class Mlp(nn.Layer):
    def __init__(self, dim, hidden, tanh_gelu=False):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU(approximate=tanh_gelu)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class CSWinBlock(nn.Layer):
    def __init__(self, dim, reso, num_heads, split_size, bug=""):
        super().__init__()
        self.dim = dim
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.attns = nn.LayerList(
            [LePEAttention(dim // 2, reso, i, split_size, num_heads // 2, lepe_full=bug == "paddle_lepe_full_image") for i in range(2)]
        )
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, dim * MLP_RATIO, tanh_gelu=bug == "paddle_gelu_tanh")

    def forward(self, x):
        b, _n, c = x.shape
        img = self.norm1(x)
        qkv = self.qkv(img).reshape([b, -1, 3, c]).transpose([2, 0, 1, 3])
        x1 = self.attns[0](qkv[:, :, :, : c // 2])
        x2 = self.attns[1](qkv[:, :, :, c // 2 :])
        attened = paddle.concat([x1, x2], axis=2)
        x = x + self.proj(attened)
        x = x + self.mlp(self.norm2(x))
        return x


class ConvEmbed(nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2D(IN_CHANS, EMBED_DIM, 7, stride=4, padding=2)
        self.norm = nn.LayerNorm(EMBED_DIM)

    def forward(self, x):
        x = self.proj(x)
        return self.norm(x.flatten(2).transpose([0, 2, 1]))


class MergeBlock(nn.Layer):
    def __init__(self, dim, dim_out):
        super().__init__()
        self.conv = nn.Conv2D(dim, dim_out, 3, stride=2, padding=1)
        self.norm = nn.LayerNorm(dim_out)

    def forward(self, x):
        b, n, c = x.shape
        h = w = int(np.sqrt(n))
        x = x.transpose([0, 2, 1]).reshape([b, c, h, w])
        x = self.conv(x)
        b, c = x.shape[:2]
        x = x.reshape([b, c, -1]).transpose([0, 2, 1])
        return self.norm(x)


class CSWinTransformer(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        d1, d2 = EMBED_DIM, EMBED_DIM * 2
        r1 = IMG // 4
        self.stage1_conv_embed = ConvEmbed()
        self.stage1 = nn.LayerList([CSWinBlock(d1, r1, HEADS[0], SPLIT_SIZE[0], bug) for _ in range(DEPTH[0])])
        self.merge1 = MergeBlock(d1, d2)
        self.stage2 = nn.LayerList([CSWinBlock(d2, r1 // 2, HEADS[1], SPLIT_SIZE[1], bug) for _ in range(DEPTH[1])])
        self.norm = nn.LayerNorm(d2)
        self.head = nn.Linear(d2, NUM_CLASSES)

    def forward(self, x):
        x = self.stage1_conv_embed(x)
        for blk in self.stage1:
            x = blk(x)
        x = self.merge1(x)
        for blk in self.stage2:
            x = blk(x)
        x = self.norm(x)
        return self.head(paddle.mean(x, axis=1))


def _trained_look(m):
    rng = np.random.default_rng(154)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
        elif isinstance(layer, (nn.Linear, nn.Conv2D)):
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cswin paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = CSWinTransformer(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(54)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
