"""Hand-written port, paddle side: a tiny HorNet (Rao et al. 2022) with recursive gated convolutions (written by "person A").

Input: positional `images` [2, 3, 32, 32] (NCHW, numpy rng seed 41, standard normal). Output:
logits [2, 10].

Network:
  stem        conv 4x4 stride 4 (3 -> 32), LayerNorm over channels (eps 1e-6)   -> [2, 32, 8, 8]
  stage 1     one HorNet block, dim 32, gnConv order 3 (dims 8, 16, 32)
  downsample  LayerNorm over channels, conv 2x2 stride 2 (32 -> 64)              -> [2, 64, 4, 4]
  stage 2     one HorNet block, dim 64, gnConv order 4 (dims 8, 16, 32, 64)
  head        global average pool, LayerNorm(64), Linear(64, 10)
HorNet block:  x = x + gamma1 * gnConv(LN(x));  x = x + gamma2 * MLP(LN(x))
  (MLP: 1x1 4*dim -> GELU (exact, erf) -> 1x1 dim; LayerScale gamma per channel; LN eps 1e-6)
gnConv(x), order n, dims d_0 < ... < d_{n-1} = dim (d_i = dim / 2^(n-1-i)):
  p_0 = 1x1 conv (dim -> d_0);  abc = 1x1 conv (dim -> d_0 + ... + d_{n-1})
  q_0 .. q_{n-1} = split of depthwise 7x7 conv (with bias) of abc, times s = 1/3
  y = p_0 * q_0;  y = pw_i(y) * q_{i+1} (pw_i: 1x1 d_i -> d_{i+1});  out = 1x1 conv (dim -> dim) of y

Paddle idioms on this side:
- Every LayerNorm is the framework's nn.LayerNorm over the LAST axis (epsilon=1e-6); the
  channels-first feature maps are transposed to NHWC and back INLINE around each norm call.
- root `HorNet`: `stem_conv`, `stem_norm`, `stage1` (nn.Sequential of `HorBlock`),
  `down_norm`, `down_conv`, `stage2` (nn.Sequential), `norm`, `head`.
- `HorBlock` registers `ls1`, `ls2` (`LayerScale` modules, one `gamma` [C] each) first, then
  `mlp` (nn.Sequential of 1x1 Conv2D, nn.GELU, 1x1 Conv2D: the MLP stays channels-first), then
  `gnconv`, then `norm2`, then `norm1`.
- `GnConv` does the channel split with TWO input projections: `proj_gate` (dim -> d_0) and
  `proj_abc` (dim -> sum d_i) instead of one fused projection + split; the depthwise output is
  split with paddle.split(num_or_sections=dims). Registration: `dwconv`, `proj_gate`,
  `proj_abc`, `pws` (LayerList), `proj_out`.
- model() gives the LayerNorms, conv / linear biases and LayerScale gammas trained-looking
  values, and the gnConv depthwise / pointwise weights a trained-looking scale (gate splits
  O(1), so the recursive product stays O(1)), all seeded.

The torch side (port_hornet_torch.py) was written independently, in the style of the official
HorNet code: a hand-written channels-first LayerNorm, one fused `proj_in` + torch.split, the MLP
as nn.Linear layers in channels-last with permutes, gamma1 / gamma2 as plain parameters.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_gelu_tanh         -> the MLP's activation is nn.GELU(approximate=True) (tanh
                              approximation) instead of the exact erf GELU, in every block
  paddle_norm1_back_perm   -> HorBlock.forward transposes norm1's NHWC output back with
                              perm [0, 3, 2, 1] instead of [0, 3, 1, 2] (H and W swapped; the
                              maps are square, so it runs)
"""
import os

import numpy as np
import paddle
from paddle import nn

IN_CH, IMG, NUM_CLASSES = 3, 32, 10
DIMS, ORDERS = (32, 64), (3, 4)
LN_EPS, GN_SCALE, MLP_RATIO = 1e-6, 1.0 / 3.0, 4
BATCH = 2
OWN_BUGS = {"paddle_gelu_tanh", "paddle_norm1_back_perm"}
OTHER_BUGS = {"torch_cf_norm_unbiased_var", "torch_gamma1_for_mlp"}

TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


def ln_nchw(norm, x, back=TO_NCHW):
    return norm(x.transpose(TO_NHWC)).transpose(back)


class LayerScale(nn.Layer):
    def __init__(self, dim, init_value=1e-6):
        super().__init__()
        self.gamma = self.create_parameter([dim], default_initializer=nn.initializer.Constant(init_value))

    def forward(self, x):  # NCHW
        return x * self.gamma.reshape([1, -1, 1, 1])


class GnConv(nn.Layer):
    def __init__(self, dim, order, scale=GN_SCALE):
        super().__init__()
        self.order, self.scale = order, scale
        self.dims = [dim // 2**i for i in range(order)][::-1]
        total = sum(self.dims)
        self.dwconv = nn.Conv2D(total, total, 7, padding=3, groups=total)
        self.proj_gate = nn.Conv2D(dim, self.dims[0], 1)
        self.proj_abc = nn.Conv2D(dim, total, 1)
        self.pws = nn.LayerList([nn.Conv2D(self.dims[i], self.dims[i + 1], 1) for i in range(order - 1)])
        self.proj_out = nn.Conv2D(dim, dim, 1)

    def forward(self, x):
        gate = self.proj_gate(x)
        abc = self.dwconv(self.proj_abc(x)) * self.scale
        parts = paddle.split(abc, num_or_sections=self.dims, axis=1)
        y = gate * parts[0]
        for i, pw in enumerate(self.pws):
            y = pw(y) * parts[i + 1]
        return self.proj_out(y)


class HorBlock(nn.Layer):
    def __init__(self, dim, order, gelu_tanh=False, back_perm=TO_NCHW):
        super().__init__()
        self.back_perm = back_perm
        self.ls1 = LayerScale(dim)
        self.ls2 = LayerScale(dim)
        self.mlp = nn.Sequential(
            nn.Conv2D(dim, MLP_RATIO * dim, 1),
            nn.GELU(approximate=gelu_tanh),
            nn.Conv2D(MLP_RATIO * dim, dim, 1),
        )
        self.gnconv = GnConv(dim, order)
        self.norm2 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)

    def forward(self, x):
        x = x + self.ls1(self.gnconv(ln_nchw(self.norm1, x, self.back_perm)))
        x = x + self.ls2(self.mlp(ln_nchw(self.norm2, x)))
        return x


class HorNet(nn.Layer):
    def __init__(self, gelu_tanh=False, back_perm=TO_NCHW):
        super().__init__()
        self.stem_conv = nn.Conv2D(IN_CH, DIMS[0], 4, stride=4)
        self.stem_norm = nn.LayerNorm(DIMS[0], epsilon=LN_EPS)
        self.stage1 = nn.Sequential(HorBlock(DIMS[0], ORDERS[0], gelu_tanh, back_perm))
        self.down_norm = nn.LayerNorm(DIMS[0], epsilon=LN_EPS)
        self.down_conv = nn.Conv2D(DIMS[0], DIMS[1], 2, stride=2)
        self.stage2 = nn.Sequential(HorBlock(DIMS[1], ORDERS[1], gelu_tanh, back_perm))
        self.norm = nn.LayerNorm(DIMS[1], epsilon=LN_EPS)
        self.head = nn.Linear(DIMS[1], NUM_CLASSES)

    def forward(self, images):
        x = ln_nchw(self.stem_norm, self.stem_conv(images))
        x = self.stage1(x)
        x = self.down_conv(ln_nchw(self.down_norm, x))
        x = self.stage2(x)
        x = self.norm(x.mean(axis=[2, 3]))
        return self.head(x)


def _trained_look(m):
    rng = np.random.default_rng(43)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.normal(1.0, 0.15, layer.weight.shape).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
        elif isinstance(layer, (nn.Conv2D, nn.Linear)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))
        elif isinstance(layer, LayerScale):
            layer.gamma.set_value(rng.uniform(0.3, 0.9, layer.gamma.shape).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, GnConv):
            # trained-looking gate scale: each split of the depthwise output (times 1/3) is O(1),
            # and every pointwise link keeps the magnitude, so the order-n product neither
            # vanishes nor explodes (with the framework's init the chain decays to ~1e-3)
            dw = layer.dwconv.weight
            dw.set_value(rng.normal(0.0, 0.35, dw.shape).astype("float32"))
            for pw in layer.pws:
                fan_in = pw.weight.shape[1]
                pw.weight.set_value(rng.normal(0.0, fan_in**-0.5, pw.weight.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hornet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = HorNet(
        gelu_tanh=bug == "paddle_gelu_tanh",
        back_perm=[0, 3, 2, 1] if bug == "paddle_norm1_back_perm" else TO_NCHW,
    )
    _trained_look(m)
    m.eval()
    return m


def _images():
    return np.random.default_rng(41).standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
