"""Hand-written port, paddle side: an SNGAN projection discriminator (written by "person A").

Inputs: positional `x` [2, 3, 16, 16] float32 (numpy rng seed 41, standard normal) and `y`
[2] int64 class labels (1 and 3, 5 classes). Output: the logits [2, 1].

Model (shared with the torch side), Miyato & Koyama's ResNet discriminator, tiny:
- block1 (the "optimized" first block, no pre-activation):
      h = avgpool2(conv3x3(relu(conv3x3(x)))),  sc = conv1x1(avgpool2(x)),  out = h + sc
  3 -> 16 channels, 16x16 -> 8x8.
- block2 (pre-activation down-sampling block):
      h = avgpool2(conv3x3(relu(conv3x3(relu(x))))),  sc = avgpool2(conv1x1(x)),  out = h + sc
  16 -> 32 channels, 8x8 -> 4x4.
- h = sum over H, W of relu(h) -> [B, 32];  out = l5(h) + sum(embed(y) * h, axis=1)
  (the projection term).
- spectral normalisation on EVERY conv, the linear and the class embedding: W / sigma with
  sigma = u^T W_mat v, W_mat = the weight with its output axis first, flattened to 2-D. In eval
  no power iteration is done: u and v are the stored state.

Paddle idioms on this side:
- spectral normalisation by `paddle.nn.utils.spectral_norm` (a forward pre-hook; the layer gets
  `weight_orig` (parameter), `weight_u`, `weight_v` (buffers)). For the Linear, whose paddle
  weight is [in, out], the hook uses dim=1, so u has 1 element (out) and v 32 (in).
- root `SNGANDiscriminator`: `block1` (OptimizedDisBlock), `block2` (DisBlock), `activation`
  (nn.ReLU module, before the sum pooling), `l5` (Linear(32, 1)), `l_y` (Embedding(5, 32)).
- blocks: `c1`, `c2`, `c_sc` (Conv2D); the ReLUs are F.relu inline, the pooling F.avg_pool2d
  inline.
- model() gives every bias trained-looking seeded values, then runs 9 power iterations (9
  forwards in train mode under no_grad, on a fixed warm-up batch) so that the stored u / v are a
  partly converged, trained-looking state (not the random init); then eval.

The torch side (port_sngan_disc_torch.py) was written independently in BigGAN-PyTorch style, with
its own hand-written SN layers (buffers `sn_u`, `sn_v`).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_first_block_preact -> OptimizedDisBlock applies relu to its input before c1 (as the
                               later blocks do), so the negative values of the RGB input are
                               cut on the main path
  paddle_leaky_relu_mid     -> DisBlock's activation between c1 and c2 is F.leaky_relu(0.2)
                               instead of relu
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn
from paddle.nn.utils import spectral_norm

IMG, IN_CH, CH1, CH2, N_CLASSES = 16, 3, 16, 32, 5
BATCH = 2
WARMUP_ITERS = 9
OWN_BUGS = {"paddle_first_block_preact", "paddle_leaky_relu_mid"}
OTHER_BUGS = {"torch_preact_inplace_relu", "torch_sn_power_iter_in_eval"}


def sn_conv(cin, cout, k, pad):
    return spectral_norm(nn.Conv2D(cin, cout, k, padding=pad))


class OptimizedDisBlock(nn.Layer):
    def __init__(self, cin, cout, preact=False):
        super().__init__()
        self.preact = preact
        self.c1 = sn_conv(cin, cout, 3, 1)
        self.c2 = sn_conv(cout, cout, 3, 1)
        self.c_sc = sn_conv(cin, cout, 1, 0)

    def forward(self, x):
        h = F.relu(x) if self.preact else x
        h = self.c2(F.relu(self.c1(h)))
        h = F.avg_pool2d(h, 2)
        return h + self.c_sc(F.avg_pool2d(x, 2))


class DisBlock(nn.Layer):
    def __init__(self, cin, cout, leaky=False):
        super().__init__()
        self.leaky = leaky
        self.c1 = sn_conv(cin, cout, 3, 1)
        self.c2 = sn_conv(cout, cout, 3, 1)
        self.c_sc = sn_conv(cin, cout, 1, 0)

    def forward(self, x):
        h = self.c1(F.relu(x))
        h = F.leaky_relu(h, 0.2) if self.leaky else F.relu(h)
        h = F.avg_pool2d(self.c2(h), 2)
        return h + F.avg_pool2d(self.c_sc(x), 2)


class SNGANDiscriminator(nn.Layer):
    def __init__(self, preact_first=False, leaky=False):
        super().__init__()
        self.block1 = OptimizedDisBlock(IN_CH, CH1, preact=preact_first)
        self.block2 = DisBlock(CH1, CH2, leaky=leaky)
        self.activation = nn.ReLU()
        self.l5 = spectral_norm(nn.Linear(CH2, 1))
        self.l_y = spectral_norm(nn.Embedding(N_CLASSES, CH2))

    def forward(self, x, y):
        h = self.block2(self.block1(x))
        h = paddle.sum(self.activation(h), axis=[2, 3])
        out = self.l5(h)
        return out + paddle.sum(self.l_y(y) * h, axis=1, keepdim=True)


def _trained_look(m):
    rng = np.random.default_rng(29)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, (nn.Conv2D, nn.Linear)):
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
    # power-iteration warm-up: the stored u / v of a trained discriminator track the top singular
    # pair of each weight; 9 iterations from the random init give such a (partly converged) state
    wrng = np.random.default_rng(3)
    wx = paddle.to_tensor(wrng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32"))
    wy = paddle.to_tensor(np.array([0, 4], dtype="int64"))
    m.train()
    with paddle.no_grad():
        for _ in range(WARMUP_ITERS):
            m(wx, wy)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_sngan_disc paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = SNGANDiscriminator(preact_first=bug == "paddle_first_block_preact", leaky=bug == "paddle_leaky_relu_mid")
    _trained_look(m)
    m.eval()
    return m


def _batch():
    rng = np.random.default_rng(41)
    x = rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")
    y = np.array([1, 3], dtype="int64")
    return x, y


def inputs():
    x, y = _batch()
    return (paddle.to_tensor(x), paddle.to_tensor(y)), {}


def loss(output):
    # discriminator logits [2, 1]
    return (output**2).mean()
