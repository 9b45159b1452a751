"""Hand-written port, paddle side: a tiny CoAtNet-style conv + transformer hybrid (written by "person A").

Input: one image batch [2, 3, 16, 16] (positional, NCHW, numpy rng seed 34, standard normal).
Output: class logits [2, 10].

  stem       conv 3x3 stride 2 (3 -> 16, no bias) -> BN (eps 1e-3) -> GELU           [2, 16, 8, 8]
  MBConv     x + BN(proj1x1(SE(GELU(BN(dw3x3(GELU(BN(expand1x1(x))))))))), expand 4 (16 -> 64),
             SE: mean over H, W -> reduce (64 -> 4) -> SiLU -> expand (4 -> 64) -> sigmoid -> gate
  downsample max-pool 2x2 stride 2 -> 1x1 conv (16 -> 32, bias)                        [2, 32, 4, 4]
  tokens     flattened row-major to [2, 16, 32]
  2 transformer blocks (pre-norm, LayerNorm eps 1e-5):
             x = x + attn(LN(x)); x = x + MLP(LN(x)), MLP 32 -> 64 -> GELU -> 32
             attn: 2 heads of 16, softmax(q k^T / 4 + B), B[h, i, j] = table[index[i, j], h] with
             the Swin 2-D relative position table [(2*4-1)*(2*4-1) = 49, 2] and
             index[i, j] = (yi - yj + 3) * 7 + (xi - xj + 3)
  head       LayerNorm -> mean over tokens -> Linear(32, 10)

Paddle idioms on this side:
- root `CoAtNetTiny` registers `stem_conv`, `stem_bn`, `mbconv` (MBConvBlock), `proj` (Conv2D
  1x1, the downsample projection; the max-pool is inline F.max_pool2d), `blocks` (LayerList of
  `TransformerBlock`, iterated), `norm`, `head`. The stem GELU is inline F.gelu.
- `MBConvBlock` registers `expand_conv`, `expand_bn`, `dw_conv`, `dw_bn`, `se_reduce`,
  `se_expand` (the squeeze-excitation as two 1x1 Conv2D with bias, F.silu / F.sigmoid inline),
  `project_conv`, `project_bn`; GELUs inline.
- `TransformerBlock`: `norm1`, `attn`, `norm2`, `mlp` (`Mlp`: `fc1`, `fc2`, F.gelu inline).
- `RelPosAttention`: SEPARATE `q`, `k`, `v` Linears and `proj`; the table parameter
  `relative_position_bias_table` [49, 2] (table row, head) is created with create_parameter; the
  index is a REGISTERED int64 buffer `relative_position_index` [16, 16] built once in __init__.
- model() gives every BN trained-looking affine weights / running statistics (variances
  U(0.1, 1.5)), every LayerNorm non-identity weights / biases, every bias non-zero values, the
  relative tables N(0, 1) values, and doubles the MLP weights (trained MLPs outgrow the init),
  all seeded, so that nothing is an identity.

The torch side (port_coatnet_torch.py) was written independently (timm style): nn.Sequential
stem / MBConv parts, a Linear-based SqueezeExcite module, a fused qkv Linear, the table stored
[heads, 49] and the relative index computed on the fly in every forward.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_relidx_stride -> the relative index buffer multiplies the (shifted) row offset by W
                          (4) instead of 2W-1 (7), so the pairs pick wrong table rows
  paddle_dw_bn_eps     -> the depthwise BN is built with paddle's default epsilon 1e-5 instead of
                          the checkpoint's 1e-3 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, STEM_CH, EXPAND, SE_CH = 3, 16, 4, 4
DIM, HEADS, MLP_DIM, DEPTH, GRID = 32, 2, 64, 2, 4
NUM_CLASSES, BN_EPS = 10, 1e-3
BATCH, IMG = 2, 16
OWN_BUGS = {"paddle_relidx_stride", "paddle_dw_bn_eps"}
OTHER_BUGS = {"torch_relpos_sign", "torch_mlp_gelu_tanh"}


def _relative_index(grid, row_stride):
    ys, xs = np.meshgrid(np.arange(grid), np.arange(grid), indexing="ij")
    coords = np.stack([ys.reshape(-1), xs.reshape(-1)])  # [2, N]
    rel = coords[:, :, None] - coords[:, None, :]  # [2, N, N], i - j
    rel_y = rel[0] + grid - 1
    rel_x = rel[1] + grid - 1
    return (rel_y * row_stride + rel_x).astype("int64")


class MBConvBlock(nn.Layer):
    def __init__(self, ch, dw_eps=BN_EPS):
        super().__init__()
        hid = ch * EXPAND
        self.expand_conv = nn.Conv2D(ch, hid, 1, bias_attr=False)
        self.expand_bn = nn.BatchNorm2D(hid, epsilon=BN_EPS)
        self.dw_conv = nn.Conv2D(hid, hid, 3, padding=1, groups=hid, bias_attr=False)
        self.dw_bn = nn.BatchNorm2D(hid, epsilon=dw_eps)
        self.se_reduce = nn.Conv2D(hid, SE_CH, 1)
        self.se_expand = nn.Conv2D(SE_CH, hid, 1)
        self.project_conv = nn.Conv2D(hid, ch, 1, bias_attr=False)
        self.project_bn = nn.BatchNorm2D(ch, epsilon=BN_EPS)

    def forward(self, x):
        shortcut = x
        h = F.gelu(self.expand_bn(self.expand_conv(x)))
        h = F.gelu(self.dw_bn(self.dw_conv(h)))
        s = paddle.mean(h, axis=[2, 3], keepdim=True)
        s = F.sigmoid(self.se_expand(F.silu(self.se_reduce(s))))
        h = h * s
        h = self.project_bn(self.project_conv(h))
        return shortcut + h


class RelPosAttention(nn.Layer):
    def __init__(self, dim, heads, grid, row_stride):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim**-0.5
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.relative_position_bias_table = self.create_parameter(
            [(2 * grid - 1) * (2 * grid - 1), heads], default_initializer=nn.initializer.Normal(0.0, 0.02))
        self.register_buffer("relative_position_index",
                             paddle.to_tensor(_relative_index(grid, row_stride)))

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape([b, n, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self._split(self.q(x)), self._split(self.k(x)), self._split(self.v(x))
        attn = paddle.matmul(q, k, transpose_y=True) * self.scale  # [B, H, N, N]
        bias = paddle.gather(self.relative_position_bias_table, self.relative_position_index.reshape([-1]))
        bias = bias.reshape([n, n, self.heads]).transpose([2, 0, 1])
        attn = F.softmax(attn + bias.unsqueeze(0), axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.proj(out)


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class TransformerBlock(nn.Layer):
    def __init__(self, row_stride):
        super().__init__()
        self.norm1 = nn.LayerNorm(DIM)
        self.attn = RelPosAttention(DIM, HEADS, GRID, row_stride)
        self.norm2 = nn.LayerNorm(DIM)
        self.mlp = Mlp(DIM, MLP_DIM)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class CoAtNetTiny(nn.Layer):
    def __init__(self, row_stride=2 * GRID - 1, dw_eps=BN_EPS):
        super().__init__()
        self.stem_conv = nn.Conv2D(IN_CH, STEM_CH, 3, stride=2, padding=1, bias_attr=False)
        self.stem_bn = nn.BatchNorm2D(STEM_CH, epsilon=BN_EPS)
        self.mbconv = MBConvBlock(STEM_CH, dw_eps)
        self.proj = nn.Conv2D(STEM_CH, DIM, 1)
        self.blocks = nn.LayerList([TransformerBlock(row_stride) for _ in range(DEPTH)])
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, NUM_CLASSES)

    def forward(self, x):
        x = F.gelu(self.stem_bn(self.stem_conv(x)))
        x = self.mbconv(x)
        x = self.proj(F.max_pool2d(x, kernel_size=2, stride=2))  # [B, 32, 4, 4]
        b, c, h, w = x.shape
        x = x.reshape([b, c, h * w]).transpose([0, 2, 1])  # [B, 16, 32]
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x).mean(axis=1)
        return self.head(x)


def _trained_look(m):
    rng = np.random.default_rng(134)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.1, 1.5, n).astype("float32"))
        elif isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
        elif isinstance(layer, (nn.Linear, nn.Conv2D)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
            if _name.endswith(("mlp.fc1", "mlp.fc2")):
                layer.weight.set_value(layer.weight.numpy() * 2.0)  # trained MLP weights outgrow the init
        elif isinstance(layer, RelPosAttention):
            t = layer.relative_position_bias_table
            t.set_value(rng.normal(0.0, 1.0, t.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_coatnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = CoAtNetTiny(row_stride=GRID if bug == "paddle_relidx_stride" else 2 * GRID - 1,
                    dw_eps=1e-5 if bug == "paddle_dw_bn_eps" else BN_EPS)
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(34)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
