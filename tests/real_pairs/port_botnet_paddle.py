"""Hand-written port, paddle side: a tiny Bottleneck Transformer (BoTNet) classifier (written by "person A").

Input: one image batch `pixel_values` [2, 3, 32, 24] (positional, NCHW, non-square, numpy rng
seed 11, standard normal). Output: class logits [2, 10].

Shared architecture (both sides):
- stem: conv 3x3 stride 2 pad 1 (3 -> 8, no bias) -> BN -> ReLU -> max-pool 3x3 stride 2 pad 1
  ([2, 8, 8, 6]);
- stage 1: one ResNet bottleneck 8 -> 4 -> 16 (1x1 -> 3x3 -> 1x1, BN + ReLU after the first two,
  BN after the last), projection shortcut 1x1 conv + BN, ReLU after the residual sum;
- stage 2 (BoT): two bottlenecks whose 3x3 conv is replaced by 2-D multi-head self-attention
  (2 heads of 4, no qkv bias) with relative position logits:
      logits[i, j] = q_i . k_j + q_i . Rh[row(j) - row(i)] + q_i . Rw[col(j) - col(i)],
  where q is already scaled by dim_head ** -0.5 (as in the BoTNet reference), Rh is a
  [2H - 1, 4] and Rw a [2W - 1, 4] table (shared by the heads), indexed by offset + (n - 1).
  Block 1: 16 -> 8 -> 32 on the 8 x 6 map, then a 2x2 average pool after the attention (stride
  2, shortcut 1x1 conv stride 2 + BN); block 2: 32 -> 8 -> 32 on the 4 x 3 map, identity
  shortcut;
- head: global average pool, Linear(32, 10).
- All BN layers use epsilon 1e-3 (the spec's value).

Paddle idioms on this side:
- root `BoTNet`: `conv1`, `bn1` (stem, with ReLU and F.max_pool2d inline), `stage1`, `stage2`
  (nn.Sequential), `classifier` (Linear); the global average pool is an inline mean.
- ONE block class `BottleneckBlock` for both stages: `conv_reduce`, `bn_reduce`, `mixer` (a
  Conv2D 3x3 or an `MHSA2D`), `bn_mid`, `conv_expand`, `bn_expand`, `shortcut` (Sequential of
  Conv2D + BN, or None). ReLUs and the average pool are inline F calls.
- `MHSA2D` works on flattened pixels [B, H*W, C]: THREE Linears `q_proj`, `k_proj`, `v_proj`
  (bias_attr=False), and the tables `rel_h`, `rel_w` (create_parameter). The relative logits
  GATHER the tables with an index matrix idx[i, j] = j - i + n - 1 (helper `_rel_index`), then
  contract with q by einsum; the sum over the height and width terms is a broadcast add.
- model() gives the BN layers trained-looking affine weights / running statistics (seeded).

The torch side (port_botnet_torch.py) was written independently in the style of lucidrains'
bottleneck-transformer-pytorch: one 1x1 conv packing q|k|v, a `RelPosEmb` module with the
pad / reshape `rel_to_abs` trick, torchvision-style ResNet blocks, nn.Sequential pipelines.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rel_offset_sign -> `_rel_index` builds idx[i, j] = i - j + n - 1 (query minus key),
                            so each relative logit reads the table at the mirrored offset
  paddle_relu_before_add -> BottleneckBlock applies the final ReLU to the residual branch BEFORE
                            adding the shortcut (relu(branch) + shortcut)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG_H, IMG_W, NUM_CLASSES = 2, 32, 24, 10
HEADS, DIM_HEAD = 2, 4
BN_EPS = 1e-3
OWN_BUGS = {"paddle_rel_offset_sign", "paddle_relu_before_add"}
OTHER_BUGS = {"torch_relh_no_transpose_back", "torch_stem_bn_eps"}


def _rel_index(n, flip=False):
    pos = np.arange(n)
    if flip:
        idx = pos[:, None] - pos[None, :] + n - 1
    else:
        idx = pos[None, :] - pos[:, None] + n - 1
    return paddle.to_tensor(idx.reshape(-1).astype("int64"))


class MHSA2D(nn.Layer):
    def __init__(self, channels, fmap_hw, heads=HEADS, dim_head=DIM_HEAD, flip=False):
        super().__init__()
        self.heads, self.dim_head = heads, dim_head
        self.fmap_h, self.fmap_w = fmap_hw
        self.flip = flip
        inner = heads * dim_head
        self.q_proj = nn.Linear(channels, inner, bias_attr=False)
        self.k_proj = nn.Linear(channels, inner, bias_attr=False)
        self.v_proj = nn.Linear(channels, inner, bias_attr=False)
        normal = nn.initializer.Normal(0.0, dim_head**-0.5)
        self.rel_h = self.create_parameter([2 * self.fmap_h - 1, dim_head], default_initializer=normal)
        self.rel_w = self.create_parameter([2 * self.fmap_w - 1, dim_head], default_initializer=normal)

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape([b, n, self.heads, self.dim_head]).transpose([0, 2, 1, 3])  # [B, h, N, d]

    def forward(self, x):
        b, _, hh, ww = x.shape
        tokens = x.flatten(2).transpose([0, 2, 1])  # [B, H*W, C], row-major pixels
        q = self._split(self.q_proj(tokens)) * (self.dim_head**-0.5)
        k = self._split(self.k_proj(tokens))
        v = self._split(self.v_proj(tokens))
        content = paddle.matmul(q, k, transpose_y=True)  # [B, h, N, N]
        # relative logits: gather the tables, then contract with q
        tab_h = paddle.gather(self.rel_h, _rel_index(hh, self.flip)).reshape([hh, hh, self.dim_head])
        tab_w = paddle.gather(self.rel_w, _rel_index(ww, self.flip)).reshape([ww, ww, self.dim_head])
        q5 = q.reshape([b, self.heads, hh, ww, self.dim_head])
        lh = paddle.einsum("bnxyd,xkd->bnxyk", q5, tab_h)  # [B, h, H, W, H(key row)]
        lw = paddle.einsum("bnxyd,ykd->bnxyk", q5, tab_w)  # [B, h, H, W, W(key col)]
        rel = lh.unsqueeze(-1) + lw.unsqueeze(-2)  # [B, h, H, W, H, W]
        logits = content + rel.reshape([b, self.heads, hh * ww, hh * ww])
        attn = F.softmax(logits, axis=-1)
        out = paddle.matmul(attn, v)  # [B, h, N, d]
        out = out.transpose([0, 2, 1, 3]).reshape([b, hh * ww, self.heads * self.dim_head])
        return out.transpose([0, 2, 1]).reshape([b, self.heads * self.dim_head, hh, ww])


class BottleneckBlock(nn.Layer):
    def __init__(self, in_ch, mid_ch, out_ch, stride=1, fmap_hw=None, flip=False, relu_before_add=False):
        super().__init__()
        self.use_attn = fmap_hw is not None
        self.stride = stride
        self.relu_before_add = relu_before_add
        self.conv_reduce = nn.Conv2D(in_ch, mid_ch, 1, bias_attr=False)
        self.bn_reduce = nn.BatchNorm2D(mid_ch, epsilon=BN_EPS)
        if self.use_attn:
            self.mixer = MHSA2D(mid_ch, fmap_hw, flip=flip)
        else:
            self.mixer = nn.Conv2D(mid_ch, mid_ch, 3, stride=stride, padding=1, bias_attr=False)
        self.bn_mid = nn.BatchNorm2D(mid_ch, epsilon=BN_EPS)
        self.conv_expand = nn.Conv2D(mid_ch, out_ch, 1, bias_attr=False)
        self.bn_expand = nn.BatchNorm2D(out_ch, epsilon=BN_EPS)
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(
                nn.Conv2D(in_ch, out_ch, 1, stride=stride, bias_attr=False),
                nn.BatchNorm2D(out_ch, epsilon=BN_EPS),
            )
        else:
            self.shortcut = None

    def forward(self, x):
        identity = x if self.shortcut is None else self.shortcut(x)
        y = F.relu(self.bn_reduce(self.conv_reduce(x)))
        y = self.mixer(y)
        if self.use_attn and self.stride == 2:
            y = F.avg_pool2d(y, kernel_size=2, stride=2)
        y = F.relu(self.bn_mid(y))
        y = self.bn_expand(self.conv_expand(y))
        if self.relu_before_add:
            return F.relu(y) + identity
        return F.relu(y + identity)


class BoTNet(nn.Layer):
    def __init__(self, flip=False, relu_before_add=False):
        super().__init__()
        kw = dict(flip=flip, relu_before_add=relu_before_add)
        self.conv1 = nn.Conv2D(3, 8, 3, stride=2, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(8, epsilon=BN_EPS)
        self.stage1 = nn.Sequential(BottleneckBlock(8, 4, 16, **kw))
        self.stage2 = nn.Sequential(
            BottleneckBlock(16, 8, 32, stride=2, fmap_hw=(8, 6), **kw),
            BottleneckBlock(32, 8, 32, stride=1, fmap_hw=(4, 3), **kw),
        )
        self.classifier = nn.Linear(32, NUM_CLASSES)

    def forward(self, pixel_values):
        x = F.relu(self.bn1(self.conv1(pixel_values)))
        x = F.max_pool2d(x, kernel_size=3, stride=2, padding=1)
        x = self.stage2(self.stage1(x))
        return self.classifier(x.mean(axis=[2, 3]))


def _trained_look(m):
    rng = np.random.default_rng(23)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
    m.classifier.bias.set_value(rng.normal(0.0, 0.2, NUM_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_botnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = BoTNet(flip=bug == "paddle_rel_offset_sign", relu_before_add=bug == "paddle_relu_before_add")
    _trained_look(m)
    m.eval()
    return m


def _image():
    return np.random.default_rng(11).standard_normal((BATCH, 3, IMG_H, IMG_W)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
