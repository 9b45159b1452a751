"""Hand-written port, torch side: a tiny NeRF radiance-field MLP (written by "person B").

The same network as port_nerf_paddle.py, re-implemented in a nerfstudio-like style. Inputs
`pts` [64, 3], `viewdirs` [64, 3]; output [64, 4] = (rgb, sigma).

- `PositionalEncoding` (nn.Module): the bands 2^0 .. 2^(L-1) are a non-persistent buffer
  `freq_bands` (torch.linspace(0, L - 1, L) exponents); scaled = x[..., None] * freq_bands is
  [N, 3, L] and flattened DIM-MAJOR (x0 f0, x0 f1, ..., x1 f0, ...); the encoding is
  [x (3), sin(scaled) (3 L), cos(scaled) (3 L)]. Instances: `xyz_encoding` (L = 6, width 39)
  and `dir_encoding` (L = 4, width 27). The paddle side orders its encoding per frequency
  [x, sin f0, cos f0, sin f1, ...], so the rows of every Linear that reads an encoding are
  permuted (port_nerf_hook.py).
- `backbone` (`SkipTrunk`): `pre` = nn.Sequential(Linear(39, 32), ReLU, Linear(32, 32), ReLU),
  then torch.cat([encoding, h]) inline, `post` = nn.Sequential(Linear(71, 32), ReLU,
  Linear(32, 32), ReLU).
- `color_head` = nn.Sequential(Linear(32 + 27, 16), ReLU, Linear(16, 3), Sigmoid) on
  torch.cat([feature, dir encoding]) (concatenated inline in the root forward).
- `feature` Linear(32, 32), no activation.
- `density_head` = nn.Sequential(Linear(32, 1), ReLU), registered LAST (after color_head).
- The direction encoding is computed right before the colour head, after the density head.

PADIFF_BUG name of this side:
  torch_density_no_activation -> density_head is nn.Sequential(nn.Linear(32, 1)) without the
                                 ReLU (as in nerf-pytorch, where the network returns the raw
                                 sigma and the activation lives in the renderer), so negative
                                 densities come out
The paddle side's bug names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import torch
from torch import nn

N, W, W_VIEW, L_PTS, L_DIRS = 64, 32, 16, 6, 4
OWN_BUGS = {"torch_density_no_activation"}
OTHER_BUGS = {"paddle_freq_pi", "paddle_skip_pre_relu"}


class PositionalEncoding(nn.Module):
    def __init__(self, num_frequencies, in_dim=3):
        super().__init__()
        self.in_dim = in_dim
        self.register_buffer("freq_bands", 2.0 ** torch.linspace(0, num_frequencies - 1, num_frequencies),
                             persistent=False)

    def get_out_dim(self):
        return self.in_dim * (1 + 2 * self.freq_bands.numel())

    def forward(self, x):
        scaled = (x[..., None] * self.freq_bands).flatten(-2)  # [N, 3 * L], dim-major
        return torch.cat([x, torch.sin(scaled), torch.cos(scaled)], dim=-1)


class SkipTrunk(nn.Module):
    def __init__(self, in_dim, width=W):
        super().__init__()
        self.pre = nn.Sequential(nn.Linear(in_dim, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.post = nn.Sequential(nn.Linear(width + in_dim, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())

    def forward(self, encoding):
        h = self.pre(encoding)
        return self.post(torch.cat([encoding, h], dim=-1))


class TinyNeRF(nn.Module):
    def __init__(self, density_activation=True):
        super().__init__()
        self.xyz_encoding = PositionalEncoding(L_PTS)
        self.dir_encoding = PositionalEncoding(L_DIRS)
        self.backbone = SkipTrunk(self.xyz_encoding.get_out_dim())
        self.feature = nn.Linear(W, W)
        self.color_head = nn.Sequential(
            nn.Linear(W + self.dir_encoding.get_out_dim(), W_VIEW), nn.ReLU(), nn.Linear(W_VIEW, 3), nn.Sigmoid())
        if density_activation:
            self.density_head = nn.Sequential(nn.Linear(W, 1), nn.ReLU())
        else:
            self.density_head = nn.Sequential(nn.Linear(W, 1))

    def forward(self, pts, viewdirs):
        h = self.backbone(self.xyz_encoding(pts))
        sigma = self.density_head(h)
        feat = self.feature(h)
        rgb = self.color_head(torch.cat([feat, self.dir_encoding(viewdirs)], dim=-1))
        return torch.cat([rgb, sigma], dim=-1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nerf torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = TinyNeRF(density_activation=bug != "torch_density_no_activation")
    return m.eval()


def _data():
    rng = np.random.default_rng(23)
    pts = rng.uniform(-1.0, 1.0, (N, 3)).astype("float32")
    d = rng.standard_normal((N, 3)).astype("float32")
    d = (d / np.linalg.norm(d, axis=-1, keepdims=True)).astype("float32")
    return pts, d


def inputs():
    pts, d = _data()
    return (torch.from_numpy(pts), torch.from_numpy(d)), {}


def loss(output):
    # [64, 4]: rgb | sigma
    return (output**2).mean()
