"""Hand-written port, paddle side: a tiny HiFi-GAN generator (written by "person A").

Input: positional mel spectrogram `mel` [2, 8, 16] (NCL, numpy rng seed 41, standard normal).
Output: waveform [2, 1, 128] (tanh).

Sizes: 8 mel bins -> conv_pre (k 7) to 32 channels; two upsampling stages, rates 4 / 2 with
transposed-conv kernels 8 / 4 (padding (k - u) / 2), channels 32 -> 16 -> 8; after each
upsampling a multi-receptive-field fusion (MRF) of two ResBlock1s (kernels 3 and 5, dilations
1 and 3), whose outputs are summed and divided by 2; then leaky ReLU, conv_post (k 7, 8 -> 1),
tanh. Every leaky ReLU has slope 0.1.

ResBlock1 unit, for each dilation d: xt = conv2(lrelu(conv1_d(lrelu(x)))); x = x + xt, with
conv1_d of dilation d (padding d * (k - 1) / 2) and conv2 of dilation 1.

Every conv is weight-normalized: w = g * v / ||v||, the norm over all axes but axis 0 (the
output channel of a Conv1D [out, in, k], the INPUT channel of a Conv1DTranspose [in, out, k]).

Paddle idioms on this side (the original jik876 layout, with an MRF layer):
- root `HiFiGANGenerator`: `conv_pre`, `ups` (LayerList of Conv1DTranspose), `mrfs` (LayerList
  of MRF), `conv_post`; the leaky ReLUs and the tanh are inline F calls in the root forward.
- `MRF`: `blocks` (LayerList of ResBlock1); the sum and the division by the number of blocks are
  inline in its forward.
- `ResBlock1`: `convs1` (dilated) and `convs2` LayerLists, zipped; F.leaky_relu inline.
- weight norm through the utility paddle.nn.utils.weight_norm(layer, dim=0): each conv has
  parameters `weight_g` [C] and `weight_v`, and a `weight` buffer recomputed by a forward pre-hook.
- model() gives every `weight_g` trained-looking values (||v|| times U(0.5, 1.5)) and every bias
  N(0, 0.05), seeded.

The torch side (port_hifigan_torch.py) was written independently: hand-written weight-norm conv
modules holding `g` / `v`, stage modules holding the upsampling and the MRF, dilated-unit
modules, nn.LeakyReLU / nn.Tanh modules.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_mid_lrelu_slope -> ResBlock1's second activation of each unit is F.leaky_relu(xt) with
                            paddle's default slope 0.01 (the 0.1 forgotten), in every block
  paddle_mrf_no_average  -> MRF returns the SUM of its blocks' outputs, without the division by
                            the number of blocks
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn
from paddle.nn.utils import weight_norm

LRELU_SLOPE = 0.1
N_MELS, UPSAMPLE_INITIAL_CHANNEL = 8, 32
UPSAMPLE_RATES, UPSAMPLE_KERNEL_SIZES = (4, 2), (8, 4)
RESBLOCK_KERNEL_SIZES, RESBLOCK_DILATION_SIZES = (3, 5), ((1, 3), (1, 3))
BATCH, FRAMES = 2, 16
OWN_BUGS = {"paddle_mid_lrelu_slope", "paddle_mrf_no_average"}
OTHER_BUGS = {"torch_wn_eps", "torch_unit_residual_after_act"}


def get_padding(kernel_size, dilation=1):
    return int((kernel_size * dilation - dilation) / 2)


class ResBlock1(nn.Layer):
    def __init__(self, channels, kernel_size, dilation, mid_default_slope=False):
        super().__init__()
        self.mid_default_slope = mid_default_slope
        self.convs1 = nn.LayerList([
            weight_norm(nn.Conv1D(channels, channels, kernel_size, 1, dilation=d, padding=get_padding(kernel_size, d)))
            for d in dilation
        ])
        self.convs2 = nn.LayerList([
            weight_norm(nn.Conv1D(channels, channels, kernel_size, 1, dilation=1, padding=get_padding(kernel_size, 1)))
            for _ in dilation
        ])

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = F.leaky_relu(x, LRELU_SLOPE)
            xt = c1(xt)
            xt = F.leaky_relu(xt) if self.mid_default_slope else F.leaky_relu(xt, LRELU_SLOPE)
            xt = c2(xt)
            x = xt + x
        return x


class MRF(nn.Layer):
    def __init__(self, channels, no_average=False, **kw):
        super().__init__()
        self.no_average = no_average
        self.blocks = nn.LayerList([
            ResBlock1(channels, k, d, **kw) for k, d in zip(RESBLOCK_KERNEL_SIZES, RESBLOCK_DILATION_SIZES)
        ])

    def forward(self, x):
        xs = None
        for block in self.blocks:
            xs = block(x) if xs is None else xs + block(x)
        if self.no_average:
            return xs
        return xs / len(self.blocks)


class HiFiGANGenerator(nn.Layer):
    def __init__(self, no_average=False, mid_default_slope=False):
        super().__init__()
        self.num_upsamples = len(UPSAMPLE_RATES)
        self.conv_pre = weight_norm(nn.Conv1D(N_MELS, UPSAMPLE_INITIAL_CHANNEL, 7, 1, padding=3))
        self.ups = nn.LayerList()
        for i, (u, k) in enumerate(zip(UPSAMPLE_RATES, UPSAMPLE_KERNEL_SIZES)):
            self.ups.append(weight_norm(nn.Conv1DTranspose(UPSAMPLE_INITIAL_CHANNEL // (2**i),
                                                           UPSAMPLE_INITIAL_CHANNEL // (2 ** (i + 1)),
                                                           k, u, padding=(k - u) // 2)))
        self.mrfs = nn.LayerList()
        for i in range(len(self.ups)):
            ch = UPSAMPLE_INITIAL_CHANNEL // (2 ** (i + 1))
            self.mrfs.append(MRF(ch, no_average=no_average, mid_default_slope=mid_default_slope))
        self.conv_post = weight_norm(nn.Conv1D(ch, 1, 7, 1, padding=3))

    def forward(self, x):
        x = self.conv_pre(x)
        for i in range(self.num_upsamples):
            x = F.leaky_relu(x, LRELU_SLOPE)
            x = self.ups[i](x)
            x = self.mrfs[i](x)
        x = F.leaky_relu(x, LRELU_SLOPE)
        x = self.conv_post(x)
        return paddle.tanh(x)


def _trained_look(m):
    rng = np.random.default_rng(43)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, (nn.Conv1D, nn.Conv1DTranspose)):
            v = layer.weight_v.numpy()
            norm = np.sqrt((v.astype("float64") ** 2).reshape(v.shape[0], -1).sum(axis=1))
            layer.weight_g.set_value((norm * rng.uniform(0.5, 1.5, v.shape[0])).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hifigan paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = HiFiGANGenerator(no_average=bug == "paddle_mrf_no_average",
                         mid_default_slope=bug == "paddle_mid_lrelu_slope")
    _trained_look(m)
    m.eval()
    return m


def _mel():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, N_MELS, FRAMES)).astype("float32")


def inputs():
    return (paddle.to_tensor(_mel()),), {}


def loss(output):
    # waveform [2, 1, 128]
    return (output**2).mean()
