"""Hand-written port, torch side: an SNGAN / BigGAN-style projection discriminator (written by "person B").

The same math as port_sngan_disc_paddle.py, re-implemented by hand in the style of
BigGAN-PyTorch's discriminator: inputs `x` [2, 3, 16, 16] and `y` [2] (positional), two
down-sampling residual blocks (3 -> 16 -> 32 channels, 16x16 -> 8x8 -> 4x4), relu, sum pooling,
a linear output plus the projection term sum(embed(y) * h); output [2, 1].

Torch idioms on this side:
- spectral normalisation is hand-written (BigGAN-PyTorch's `SN` mixin): `SNConv2d`, `SNLinear`,
  `SNEmbedding` subclass the torch layers, keep the raw `weight` as their parameter and two
  buffers `sn_u` [out] / `sn_v` [in * k * k], and compute W / (u^T W_mat v) in their forward
  (`W_()`). The power iteration (v = normalize(W_mat^T u), u = normalize(W_mat v), stored back)
  runs only in training; in eval the stored u / v are used as they are.
- root `Discriminator`: `blocks` (ModuleList of two `DBlock`s, iterated), `linear`
  (SNLinear(32, 1)), `embed` (SNEmbedding(5, 32)), `activation` (nn.ReLU(inplace=True)) before
  torch.sum over [2, 3].
- `DBlock(in, out, preactivation)` registers `conv1`, `conv2`, `conv_sc`, `activation`
  (nn.ReLU(inplace=True), used between conv1 and conv2) and `downsample` (nn.AvgPool2d(2),
  called twice: main path and shortcut). The pre-activation of block 2 is an OUT-OF-PLACE
  F.relu(x), because the shortcut still needs x. Shortcut order: pre-activation block conv_sc
  then downsample, first block downsample then conv_sc.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_preact_inplace_relu    -> the pre-activation uses the block's in-place
                                  `self.activation` instead of F.relu, which overwrites x, so the
                                  shortcut conv_sc sees relu(x)
  torch_sn_power_iter_in_eval  -> SN.W_() always runs one power iteration (storing it back only in
                                  training), so in eval sigma comes from one more iteration than
                                  the stored u / v: precision-level
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

RESOLUTION, CHANNELS, N_CLASSES = 16, [3, 16, 32], 5
SN_EPS = 1e-12
OWN_BUGS = {"torch_preact_inplace_relu", "torch_sn_power_iter_in_eval"}
OTHER_BUGS = {"paddle_first_block_preact", "paddle_leaky_relu_mid"}


class SN:
    def __init__(self, num_outputs, num_inputs, eps=SN_EPS):
        self.eps = eps
        self.iter_in_eval = False  # set per layer by model() for the planted bug only
        self.register_buffer("sn_u", F.normalize(torch.randn(num_outputs), dim=0, eps=eps))
        self.register_buffer("sn_v", F.normalize(torch.randn(num_inputs), dim=0, eps=eps))

    def W_(self):
        W_mat = self.weight.view(self.weight.size(0), -1)
        u, v = self.sn_u, self.sn_v
        if self.training or self.iter_in_eval:
            with torch.no_grad():
                v_new = F.normalize(torch.mv(W_mat.t(), u), dim=0, eps=self.eps)
                u_new = F.normalize(torch.mv(W_mat, v_new), dim=0, eps=self.eps)
                if self.training:
                    self.sn_u.copy_(u_new)
                    self.sn_v.copy_(v_new)
                u, v = u_new, v_new
        sigma = torch.dot(u, torch.mv(W_mat, v))
        return self.weight / sigma


class SNConv2d(nn.Conv2d, SN):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0):
        nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, padding=padding)
        SN.__init__(self, out_channels, in_channels * kernel_size * kernel_size)

    def forward(self, x):
        return F.conv2d(x, self.W_(), self.bias, self.stride, self.padding, self.dilation, self.groups)


class SNLinear(nn.Linear, SN):
    def __init__(self, in_features, out_features):
        nn.Linear.__init__(self, in_features, out_features)
        SN.__init__(self, out_features, in_features)

    def forward(self, x):
        return F.linear(x, self.W_(), self.bias)


class SNEmbedding(nn.Embedding, SN):
    def __init__(self, num_embeddings, embedding_dim):
        nn.Embedding.__init__(self, num_embeddings, embedding_dim)
        SN.__init__(self, num_embeddings, embedding_dim)

    def forward(self, x):
        return F.embedding(x, self.W_())


class DBlock(nn.Module):
    def __init__(self, in_channels, out_channels, preactivation, inplace_preact=False):
        super().__init__()
        self.preactivation, self.inplace_preact = preactivation, inplace_preact
        self.conv1 = SNConv2d(in_channels, out_channels, 3, padding=1)
        self.conv2 = SNConv2d(out_channels, out_channels, 3, padding=1)
        self.conv_sc = SNConv2d(in_channels, out_channels, 1)
        self.activation = nn.ReLU(inplace=True)
        self.downsample = nn.AvgPool2d(2)

    def shortcut(self, x):
        if self.preactivation:
            return self.downsample(self.conv_sc(x))
        return self.conv_sc(self.downsample(x))

    def forward(self, x):
        if self.preactivation:
            # must be out of place: the shortcut below still needs x
            h = self.activation(x) if self.inplace_preact else F.relu(x)
        else:
            h = x
        h = self.conv1(h)
        h = self.conv2(self.activation(h))
        h = self.downsample(h)
        return h + self.shortcut(x)


class Discriminator(nn.Module):
    def __init__(self, inplace_preact=False):
        super().__init__()
        self.blocks = nn.ModuleList([
            DBlock(CHANNELS[i], CHANNELS[i + 1], preactivation=i > 0, inplace_preact=inplace_preact)
            for i in range(len(CHANNELS) - 1)
        ])
        self.linear = SNLinear(CHANNELS[-1], 1)
        self.embed = SNEmbedding(N_CLASSES, CHANNELS[-1])
        self.activation = nn.ReLU(inplace=True)

    def forward(self, x, y):
        h = x
        for block in self.blocks:
            h = block(h)
        h = torch.sum(self.activation(h), [2, 3])
        out = self.linear(h)
        return out + torch.sum(self.embed(y) * h, 1, keepdim=True)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_sngan_disc torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Discriminator(inplace_preact=bug == "torch_preact_inplace_relu")
    for mod in m.modules():
        if isinstance(mod, SN):
            mod.iter_in_eval = bug == "torch_sn_power_iter_in_eval"
    return m.eval()


def _batch():
    rng = np.random.default_rng(41)
    x = rng.standard_normal((2, 3, RESOLUTION, RESOLUTION)).astype("float32")
    y = np.array([1, 3], dtype="int64")
    return x, y


def inputs():
    x, y = _batch()
    return (torch.from_numpy(x), torch.from_numpy(y)), {}


def loss(output):
    # discriminator logits [2, 1]
    return (output**2).mean()
