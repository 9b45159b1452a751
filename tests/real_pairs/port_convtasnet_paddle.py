"""Hand-written port, paddle side: a tiny Conv-TasNet speech separator (written by "person A", Asteroid style).

Input: one positional mixture waveform [2, 128] (float32: two sines plus a small noise floor,
amplitude ~0.3, numpy rng seed 29). Output: the two estimated sources [2, 2, 128].

Sizes: encoder N = 16 filters of length L = 8, stride L / 2 = 4 (K = 31 frames); bottleneck
B = 8; conv blocks with hidden H = 16, kernel P = 3; X = 2 blocks per repeat, dilation 2 ** x;
R = 2 repeats; 2 sources; the skip channels equal B.

  tf_rep = relu(encoder(x[:, None, :]))                 [M, N, K]
  masker: y = bottleneck(tf_rep)  (gLN(N) -> 1x1 conv N -> B)
          per block: z = conv1x1(y) -> PReLU -> gLN(H) -> depthwise conv (dilation d, padding d)
                         -> PReLU -> gLN(H)
                     y = y + res_conv(z); skip_sum += skip_conv(z)
          mask = sigmoid(conv1x1(PReLU(skip_sum)))     [M, 2, N, K]
  sources = decoder(tf_rep[:, None] * mask)            transposed conv N -> 1, kernel 8, stride 4

gLN (global layer norm): mean and variance over channels AND time per utterance, eps 1e-8,
then a per-channel gain / bias.

Paddle idioms on this side:
- root `ConvTasNet`: `encoder` nn.Conv1D(1, 16, 8, stride=4, bias_attr=False) with F.relu inline,
  `masker` (TDConvNet), `decoder` nn.Conv1DTranspose(16, 1, 8, stride=4, bias_attr=False). The
  masking (tf_rep * mask) and the [M * 2, N, K] reshape are inline in the root forward.
- `TDConvNet` registers `bottleneck` = nn.Sequential(GlobLN(16), Conv1D(16, 8, 1)), then `TCN`, a
  FLAT LayerList of the 4 Conv1DBlocks (repeat-major), then `mask_net` = nn.Sequential(nn.PReLU(),
  Conv1D(8, 32, 1)); the sigmoid is F.sigmoid inline, the mask reshape [M, 2, 16, K] inline.
- `Conv1DBlock`: `shared_block` = nn.Sequential(Conv1D(8, 16, 1), nn.PReLU(), GlobLN(16),
  depthwise Conv1D(16, 16, 3, padding=d, dilation=d, groups=16), nn.PReLU(), GlobLN(16)), then
  SEPARATE `res_conv` and `skip_conv` (Conv1D(16, 8, 1) each); returns (residual, skip).
- `GlobLN`: hand-written, gamma / beta created as [1, C, 1] parameters; the variance is the
  biased estimator, mean((x - mean)^2) over axes [1, 2].
- model() gives every gLN gain / bias, PReLU slope and conv bias trained-looking values (seeded).

The torch side (port_convtasnet_torch.py) was written independently (kaituoxu style): an Encoder
module, nn.GroupNorm(1, C) for gLN, ModuleList of ModuleLists of TemporalBlocks with a nested
depthwise module, ONE fused residual+skip conv, an nn.Sigmoid module, and a Linear basis +
overlap-add (F.fold) decoder that also does the masking.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_gln_unbiased_var  -> GlobLN computes the variance with paddle.var(...), whose default is
                              the UNBIASED estimator (divides by C*K - 1), in every gLN
  paddle_dilation_by_repeat -> the block dilation is built as 2 ** r (repeat index) instead of
                              2 ** x (block index in the repeat): dilations 1, 1, 2, 2
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

N_FILTERS, KERNEL, BN_CHAN, HID_CHAN, CONV_K = 16, 8, 8, 16, 3
N_BLOCKS, N_REPEATS, N_SRC = 2, 2, 2
EPS = 1e-8
BATCH, SAMPLES = 2, 128
OWN_BUGS = {"paddle_gln_unbiased_var", "paddle_dilation_by_repeat"}
OTHER_BUGS = {"torch_res_skip_swapped", "torch_mask_softmax"}


class GlobLN(nn.Layer):
    """Global layer norm: statistics over channels and time."""

    def __init__(self, channels, unbiased=False):
        super().__init__()
        self.unbiased = unbiased
        self.gamma = self.create_parameter([1, channels, 1], default_initializer=nn.initializer.Constant(1.0))
        self.beta = self.create_parameter([1, channels, 1], is_bias=True)

    def forward(self, x):
        mean = x.mean(axis=[1, 2], keepdim=True)
        if self.unbiased:
            var = paddle.var(x, axis=[1, 2], keepdim=True)
        else:
            var = ((x - mean) ** 2).mean(axis=[1, 2], keepdim=True)
        return self.gamma * (x - mean) / paddle.sqrt(var + EPS) + self.beta


class Conv1DBlock(nn.Layer):
    def __init__(self, in_chan, hid_chan, skip_chan, kernel_size, dilation, unbiased=False):
        super().__init__()
        padding = (kernel_size - 1) * dilation // 2
        self.shared_block = nn.Sequential(
            nn.Conv1D(in_chan, hid_chan, 1),
            nn.PReLU(),
            GlobLN(hid_chan, unbiased),
            nn.Conv1D(hid_chan, hid_chan, kernel_size, padding=padding, dilation=dilation, groups=hid_chan),
            nn.PReLU(),
            GlobLN(hid_chan, unbiased),
        )
        self.res_conv = nn.Conv1D(hid_chan, in_chan, 1)
        self.skip_conv = nn.Conv1D(hid_chan, skip_chan, 1)

    def forward(self, x):
        shared_out = self.shared_block(x)
        return self.res_conv(shared_out), self.skip_conv(shared_out)


class TDConvNet(nn.Layer):
    def __init__(self, dilation_by_repeat=False, unbiased=False):
        super().__init__()
        self.bottleneck = nn.Sequential(GlobLN(N_FILTERS, unbiased), nn.Conv1D(N_FILTERS, BN_CHAN, 1))
        blocks = []
        for r in range(N_REPEATS):
            for x in range(N_BLOCKS):
                dilation = 2**r if dilation_by_repeat else 2**x
                blocks.append(Conv1DBlock(BN_CHAN, HID_CHAN, BN_CHAN, CONV_K, dilation, unbiased))
        self.TCN = nn.LayerList(blocks)
        self.mask_net = nn.Sequential(nn.PReLU(), nn.Conv1D(BN_CHAN, N_SRC * N_FILTERS, 1))

    def forward(self, mixture_w):
        batch, _, n_frames = mixture_w.shape
        output = self.bottleneck(mixture_w)
        skip_connection = paddle.zeros([1], dtype=output.dtype)
        for block in self.TCN:
            residual, skip = block(output)
            output = output + residual
            skip_connection = skip_connection + skip
        score = self.mask_net(skip_connection)
        score = score.reshape([batch, N_SRC, N_FILTERS, n_frames])
        return F.sigmoid(score)


class ConvTasNet(nn.Layer):
    def __init__(self, dilation_by_repeat=False, unbiased=False):
        super().__init__()
        self.encoder = nn.Conv1D(1, N_FILTERS, KERNEL, stride=KERNEL // 2, bias_attr=False)
        self.masker = TDConvNet(dilation_by_repeat, unbiased)
        self.decoder = nn.Conv1DTranspose(N_FILTERS, 1, KERNEL, stride=KERNEL // 2, bias_attr=False)

    def forward(self, wav):
        batch = wav.shape[0]
        tf_rep = F.relu(self.encoder(wav.unsqueeze(1)))  # [M, N, K]
        est_masks = self.masker(tf_rep)  # [M, 2, N, K]
        masked = tf_rep.unsqueeze(1) * est_masks
        n_frames = masked.shape[-1]
        out = self.decoder(masked.reshape([batch * N_SRC, N_FILTERS, n_frames]))  # [M * 2, 1, T]
        return out.reshape([batch, N_SRC, -1])


def _trained_look(m):
    rng = np.random.default_rng(290)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, GlobLN):
            c = layer.gamma.shape[1]
            layer.gamma.set_value(rng.uniform(0.6, 1.4, (1, c, 1)).astype("float32"))
            layer.beta.set_value(rng.normal(0.0, 0.2, (1, c, 1)).astype("float32"))
        elif isinstance(layer, nn.PReLU):
            layer._weight.set_value(rng.uniform(0.05, 0.4, layer._weight.shape).astype("float32"))
        elif isinstance(layer, (nn.Conv1D, nn.Conv1DTranspose)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_convtasnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ConvTasNet(dilation_by_repeat=bug == "paddle_dilation_by_repeat", unbiased=bug == "paddle_gln_unbiased_var")
    _trained_look(m)
    m.eval()
    return m


def _mixture():
    rng = np.random.default_rng(29)
    t = np.arange(SAMPLES) / 8000.0
    rows = []
    for _ in range(BATCH):
        f1, f2 = rng.uniform(300, 900), rng.uniform(1200, 2500)
        s1 = 0.25 * np.sin(2 * np.pi * f1 * t + rng.uniform(0, 6.28))
        s2 = 0.15 * np.sin(2 * np.pi * f2 * t + rng.uniform(0, 6.28))
        rows.append(s1 + s2 + 0.03 * rng.standard_normal(SAMPLES))
    return np.stack(rows).astype("float32")


def inputs():
    return (paddle.to_tensor(_mixture()),), {}


def loss(output):
    # separated sources [2, 2, 128]
    return (output**2).mean()
