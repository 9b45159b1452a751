"""Hand-written port, paddle side: a tiny NeRF radiance-field MLP (written by "person A").

A port of nerf-pytorch's `NeRF` network with its positional `Embedder`, both written by hand.
Inputs: `pts` [64, 3] sample points in [-1, 1]^3 and `viewdirs` [64, 3] unit view directions.
Output: [64, 4] = (rgb [64, 3] in (0, 1), sigma [64, 1] >= 0).

- `Embedder` (nn.Layer, no parameters): include_input plus L frequency bands 2^0 .. 2^(L-1)
  (not multiplied by pi, as in nerf-pytorch's code), ordered PER FREQUENCY:
  [x, sin(2^0 x), cos(2^0 x), sin(2^1 x), cos(2^1 x), ...], each a 3-vector, so the width is
  3 + 6 L: 39 for the points (L = 6, `pts_embedder`) and 27 for the directions (L = 4,
  `view_embedder`). Both embeddings are computed first, at the top of the root forward.
- `mlp` (`SkipMLP`): a LayerList `linears` of 4 Linears of width 32 (39 -> 32, 32 -> 32,
  71 -> 32, 32 -> 32), F.relu after each; after layer index 1 (skips = (1,)) the encoded input
  is concatenated IN FRONT of the activation output, so layer 2 sees [enc (39), h (32)].
- `density` (`DensityHead`): `alpha_linear` Linear(32, 1) then F.relu inline.
- `feature_linear` Linear(32, 32), no activation (nerf-pytorch's bottleneck).
- `rgb_branch` (`ViewBranch`): `views_linear` Linear(32 + 27, 16) on [feature, dir-encoding],
  F.relu, `rgb_linear` Linear(16, 3), F.sigmoid.
- The root registers `rgb_branch`, `feature_linear` and `density` before `mlp`, and the
  embedders last. Linear biases are drawn from U(-0.1, 0.1) (paddle's default would be zero).

The torch side (port_nerf_torch.py) was written independently: its encoding is ordered
[x, sin of all bands, cos of all bands] (dim-major inside each block), so the input rows of
the first layer, of the skip layer and of the colour layer are permuted (port_nerf_hook.py).

PADIFF_BUG names of this side:
  paddle_freq_pi        -> the Embedder's bands are 2^k * pi (the paper's formula) instead of the
                           reference code's 2^k, in both embedders
  paddle_skip_pre_relu  -> in SkipMLP the encoded input is concatenated to layer 1's output
                           BEFORE the ReLU, so the ReLU also clips the encoded input
                           (x, sin, cos) that layer 2 receives
The torch side's bug names are accepted and ignored; any other name raises ValueError.
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

N, W, W_VIEW, L_PTS, L_DIRS = 64, 32, 16, 6, 4
OWN_BUGS = {"paddle_freq_pi", "paddle_skip_pre_relu"}
OTHER_BUGS = {"torch_density_no_activation"}


def _linear(n_in, n_out):
    return nn.Linear(n_in, n_out, bias_attr=paddle.ParamAttr(initializer=nn.initializer.Uniform(-0.1, 0.1)))


class Embedder(nn.Layer):
    def __init__(self, num_freqs, times_pi=False):
        super().__init__()
        self.num_freqs = num_freqs
        self.times_pi = times_pi
        self.out_dim = 3 + 3 * 2 * num_freqs

    def forward(self, x):
        freq_bands = 2.0 ** paddle.arange(self.num_freqs, dtype="float32")
        if self.times_pi:
            freq_bands = freq_bands * math.pi
        outs = [x]
        for k in range(self.num_freqs):
            outs.append(paddle.sin(x * freq_bands[k]))
            outs.append(paddle.cos(x * freq_bands[k]))
        return paddle.concat(outs, axis=-1)


class SkipMLP(nn.Layer):
    def __init__(self, in_ch, depth=4, width=W, skips=(1,), pre_relu_skip=False):
        super().__init__()
        self.skips = skips
        self.pre_relu_skip = pre_relu_skip
        dims = [in_ch] + [width + in_ch if i - 1 in skips else width for i in range(1, depth)]
        self.linears = nn.LayerList([_linear(d, width) for d in dims])

    def forward(self, enc):
        h = enc
        for i, layer in enumerate(self.linears):
            h = layer(h)
            if self.pre_relu_skip:  # the bug: concatenate, then activate
                if i in self.skips:
                    h = paddle.concat([enc, h], axis=-1)
                h = F.relu(h)
            else:
                h = F.relu(h)
                if i in self.skips:
                    h = paddle.concat([enc, h], axis=-1)
        return h


class DensityHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.alpha_linear = _linear(W, 1)

    def forward(self, h):
        return F.relu(self.alpha_linear(h))


class ViewBranch(nn.Layer):
    def __init__(self, in_ch):
        super().__init__()
        self.views_linear = _linear(W + in_ch, W_VIEW)
        self.rgb_linear = _linear(W_VIEW, 3)

    def forward(self, feature, dir_enc):
        h = F.relu(self.views_linear(paddle.concat([feature, dir_enc], axis=-1)))
        return F.sigmoid(self.rgb_linear(h))


class NeRF(nn.Layer):
    def __init__(self, freq_pi=False, skip_pre_relu=False):
        super().__init__()
        pts_ch, dir_ch = 3 + 6 * L_PTS, 3 + 6 * L_DIRS
        self.rgb_branch = ViewBranch(dir_ch)
        self.feature_linear = _linear(W, W)
        self.density = DensityHead()
        self.mlp = SkipMLP(pts_ch, pre_relu_skip=skip_pre_relu)
        self.pts_embedder = Embedder(L_PTS, times_pi=freq_pi)
        self.view_embedder = Embedder(L_DIRS, times_pi=freq_pi)

    def forward(self, pts, viewdirs):
        pts_enc = self.pts_embedder(pts)
        dir_enc = self.view_embedder(viewdirs)
        h = self.mlp(pts_enc)
        sigma = self.density(h)
        feature = self.feature_linear(h)
        rgb = self.rgb_branch(feature, dir_enc)
        return paddle.concat([rgb, sigma], axis=-1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nerf paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = NeRF(freq_pi=bug == "paddle_freq_pi", skip_pre_relu=bug == "paddle_skip_pre_relu")
    m.eval()
    return m


def _data():
    rng = np.random.default_rng(23)
    pts = rng.uniform(-1.0, 1.0, (N, 3)).astype("float32")
    d = rng.standard_normal((N, 3)).astype("float32")
    d = (d / np.linalg.norm(d, axis=-1, keepdims=True)).astype("float32")
    return pts, d


def inputs():
    pts, d = _data()
    return (paddle.to_tensor(pts), paddle.to_tensor(d)), {}


def loss(output):
    # [64, 4]: rgb | sigma
    return (output**2).mean()
