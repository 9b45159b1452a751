"""Hand-written port, paddle side: a tiny autoregressive WaveNet over mu-law tokens (written by "person A").

Sizes: 32 mu-law levels (the input tokens and the output classes), 16 residual channels, 24 skip
channels, kernel 2, 4 gated residual blocks with dilations 1, 2, 4, 8 (receptive field 16),
batch 2, 32 time steps. The input is a synthetic waveform (two sines plus noise, numpy seed 5),
mu-law companded and quantized to 32 levels in `inputs()`: int64 tokens [2, 32]. Output: logits
[2, 32, 32] (batch, time, class), channels-last. `loss` is the next-step cross entropy.

Everything on this side is CHANNELS-LAST [B, T, C]:
- root `TinyWaveNet`: `embed` (nn.Embedding(32, 16): the token -> residual-channel lookup),
  `blocks` (LayerList of `GatedResBlock`), then the output stack `post_fc1` (Linear 24 -> 24)
  and `post_fc2` (Linear 24 -> 32) with F.relu inline before each.
- `GatedResBlock` registers `gate_conv` BEFORE `filter_conv` (filter is called first) and
  `skip_fc` before `res_fc`. filter / gate are TWO separate nn.Conv1D(16, 16, 2, dilation=d,
  data_format="NLC") built with padding=d, i.e. padded on BOTH sides (output length T + d);
  the causal output is the first T steps (the tail, which saw the future, is cropped).
  z = tanh(filter) * sigmoid(gate); the 1x1 convs are nn.Linear layers over the channels-last
  z: residual x + res_fc(z), skip skip_fc(z) (16 -> 24). The last block's residual output is
  computed and discarded (only the skips feed the output stack).

The torch side (port_wavenet_torch.py) was written independently: channels-first, a one-hot
input and a 1x1 start conv, one packed dilated conv with 2C output channels split into
filter | gate, causal padding with F.pad on the left, and 1x1 nn.Conv1d everywhere else.

PADIFF_BUG=paddle_crop_head plants this side's bug: the both-sides-padded conv outputs are
cropped as [:, d:] instead of [:, :T] (the HEAD is dropped instead of the tail), in every
block, so output t sees steps t and t + d: the stack is no longer causal. The torch side's bug
names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

LEVELS, RES_CH, SKIP_CH, KERNEL = 32, 16, 24, 2
DILATIONS = (1, 2, 4, 8)
BATCH, TIME = 2, 32
OWN_BUGS = {"paddle_crop_head"}
OTHER_BUGS = {"torch_gate_swapped", "torch_dilation_cycle"}


class GatedResBlock(nn.Layer):
    def __init__(self, dilation, crop_head=False):
        super().__init__()
        self.pad = (KERNEL - 1) * dilation
        self.crop_head = crop_head
        self.gate_conv = nn.Conv1D(RES_CH, RES_CH, KERNEL, padding=self.pad, dilation=dilation, data_format="NLC")
        self.filter_conv = nn.Conv1D(RES_CH, RES_CH, KERNEL, padding=self.pad, dilation=dilation, data_format="NLC")
        self.skip_fc = nn.Linear(RES_CH, SKIP_CH)
        self.res_fc = nn.Linear(RES_CH, RES_CH)

    def forward(self, x):  # x [B, T, C]
        steps = x.shape[1]
        f = self.filter_conv(x)  # [B, T + pad, C]
        g = self.gate_conv(x)
        if self.crop_head:
            f, g = f[:, self.pad:], g[:, self.pad:]
        else:
            f, g = f[:, :steps], g[:, :steps]
        z = paddle.tanh(f) * F.sigmoid(g)
        return x + self.res_fc(z), self.skip_fc(z)


class TinyWaveNet(nn.Layer):
    def __init__(self, crop_head=False):
        super().__init__()
        self.embed = nn.Embedding(LEVELS, RES_CH)
        self.blocks = nn.LayerList([GatedResBlock(d, crop_head) for d in DILATIONS])
        self.post_fc1 = nn.Linear(SKIP_CH, SKIP_CH)
        self.post_fc2 = nn.Linear(SKIP_CH, LEVELS)

    def forward(self, tokens):
        x = self.embed(tokens)  # [B, T, C]
        skips = None
        for block in self.blocks:
            x, s = block(x)
            skips = s if skips is None else skips + s
        h = self.post_fc1(F.relu(skips))
        return self.post_fc2(F.relu(h))  # [B, T, LEVELS]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_wavenet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = TinyWaveNet(crop_head=bug == "paddle_crop_head")
    m.eval()
    return m


def _tokens():
    rng = np.random.default_rng(5)
    t = np.arange(TIME + 1)[None, :] + rng.integers(0, 50, (BATCH, 1))
    wav = 0.6 * np.sin(2 * np.pi * t / 11.0) + 0.3 * np.sin(2 * np.pi * t / 4.3) + 0.05 * rng.standard_normal(t.shape)
    wav = np.clip(wav, -1.0, 1.0)
    mu = LEVELS - 1
    companded = np.sign(wav) * np.log1p(mu * np.abs(wav)) / np.log1p(mu)
    return np.clip(((companded + 1) / 2 * mu + 0.5).astype("int64"), 0, mu)  # [B, T + 1]


def inputs():
    return (paddle.to_tensor(_tokens()[:, :TIME]),), {}


def loss(output):
    # logits [2, 32, 32]: predict token t + 1 from the tokens up to t
    target = paddle.to_tensor(_tokens()[:, 1:])
    return F.cross_entropy(output.reshape([-1, LEVELS]), target.reshape([-1, 1]))
