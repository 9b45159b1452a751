"""Hand-written port, paddle side: a tiny NAFNet image-restoration U-Net (written by "person A").

Input: one positional image batch [2, 3, 16, 16] (NCHW, numpy rng seed 31, uniform in [0, 1]).
Output: the restored image [2, 3, 16, 16] (ending conv + the input image, a global residual).

Architecture (width 8, one block per stage):
  intro 3x3 conv (3 -> 8)
  encoder: 1 NAFBlock(8); skip <- its output; down = 2x2 conv stride 2 (8 -> 16)
  middle:  1 NAFBlock(16)
  up = 1x1 conv (16 -> 32, no bias) + PixelShuffle(2) -> 8 channels; + skip
  decoder: 1 NAFBlock(8)
  ending 3x3 conv (8 -> 3); + input image
NAFBlock(c) (DW_Expand 2, FFN_Expand 2):
  x = norm1(inp); conv1 1x1 (c -> 2c); conv2 depthwise 3x3 (2c); SimpleGate (split the channels
  in half, multiply) -> c; x = x * sca(x) with sca = global average pool + 1x1 conv (c -> c);
  conv3 1x1 (c -> c); y = inp + x * beta
  x = norm2(y); conv4 1x1 (c -> 2c); SimpleGate; conv5 1x1 (c -> c); out = y + x * gamma
  LayerNorm2d = LayerNorm over the channel axis of NCHW, eps 1e-6, affine.

Paddle idioms on this side (official NAFNet layout):
- root `NAFNet`: `intro`, `ending`, then LayerLists `encoders` (of nn.Sequential of blocks),
  `decoders` (same), `middle_blks` (nn.Sequential), `ups` (of nn.Sequential(Conv2D 1x1 no bias,
  nn.PixelShuffle(2))), `downs` (of Conv2D(c, 2c, 2, 2)); skips collected in a python list.
- `LayerNorm2d` SUBCLASSES nn.LayerNorm (mmcv style): transpose NCHW -> NHWC, super().forward,
  transpose back. One module, own `weight` / `bias` [c].
- `NAFBlock` registers conv1, conv2, conv3, `sca` = nn.Sequential(AdaptiveAvgPool2D(1),
  Conv2D 1x1), `sg` = SimpleGate (a module, called twice per block), conv4, conv5, norm1, norm2,
  then `beta`, `gamma` parameters [1, c, 1, 1]. The FFN 1x1 convs are Conv2D (NCHW).
- model() gives the norms, biases and beta / gamma trained-looking values (seeded, rng 41), so
  nothing is an identity (NAFNet initialises beta / gamma to zero), and scales the intro conv
  weights by 0.35 and the ending conv weights by 0.3 (a gentle intro, a small residual).

The torch side (port_nafnet_torch.py) was written independently: flat named stages, a manual
mean / var LayerNorm2d, the FFN as two nn.Linear on a channels-last view, the channel attention as
its own module (mean + 1x1 conv), SimpleGate inline, and a hand-written pixel shuffle.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_ln_default_eps      -> LayerNorm2d is built with nn.LayerNorm's default epsilon 1e-5
                                instead of NAFNet's 1e-6 (precision-level), in every norm
  paddle_beta_gamma_swapped  -> NAFBlock.forward scales the attention branch by gamma and the
                                FFN branch by beta, in every block
"""
import os

import numpy as np
import paddle
from paddle import nn

IMG_CH, WIDTH = 3, 8
BATCH, SIZE = 2, 16
OWN_BUGS = {"paddle_ln_default_eps", "paddle_beta_gamma_swapped"}
OTHER_BUGS = {"torch_sca_sigmoid", "torch_pixel_shuffle_dcr"}
_BUG = {"name": ""}


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channel axis of an NCHW map."""

    def __init__(self, channels):
        if _BUG["name"] == "paddle_ln_default_eps":
            super().__init__(channels)
        else:
            super().__init__(channels, epsilon=1e-6)

    def forward(self, x):
        x = x.transpose([0, 2, 3, 1])
        x = super().forward(x)
        return x.transpose([0, 3, 1, 2])


class SimpleGate(nn.Layer):
    def forward(self, x):
        x1, x2 = x.chunk(2, axis=1)
        return x1 * x2


class NAFBlock(nn.Layer):
    def __init__(self, c, dw_expand=2, ffn_expand=2):
        super().__init__()
        dw_channel = c * dw_expand
        self.conv1 = nn.Conv2D(c, dw_channel, 1)
        self.conv2 = nn.Conv2D(dw_channel, dw_channel, 3, padding=1, groups=dw_channel)
        self.conv3 = nn.Conv2D(dw_channel // 2, c, 1)
        self.sca = nn.Sequential(nn.AdaptiveAvgPool2D(1), nn.Conv2D(dw_channel // 2, dw_channel // 2, 1))
        self.sg = SimpleGate()
        ffn_channel = ffn_expand * c
        self.conv4 = nn.Conv2D(c, ffn_channel, 1)
        self.conv5 = nn.Conv2D(ffn_channel // 2, c, 1)
        self.norm1 = LayerNorm2d(c)
        self.norm2 = LayerNorm2d(c)
        zero = nn.initializer.Constant(0.0)
        self.beta = self.create_parameter([1, c, 1, 1], default_initializer=zero)
        self.gamma = self.create_parameter([1, c, 1, 1], default_initializer=zero)
        self.swapped = _BUG["name"] == "paddle_beta_gamma_swapped"

    def forward(self, inp):
        x = self.norm1(inp)
        x = self.conv1(x)
        x = self.conv2(x)
        x = self.sg(x)
        x = x * self.sca(x)
        x = self.conv3(x)
        s1, s2 = (self.gamma, self.beta) if self.swapped else (self.beta, self.gamma)
        y = inp + x * s1
        x = self.conv4(self.norm2(y))
        x = self.sg(x)
        x = self.conv5(x)
        return y + x * s2


class NAFNet(nn.Layer):
    def __init__(self, img_channel=IMG_CH, width=WIDTH, middle_blk_num=1, enc_blk_nums=(1,), dec_blk_nums=(1,)):
        super().__init__()
        self.intro = nn.Conv2D(img_channel, width, 3, padding=1)
        self.ending = nn.Conv2D(width, img_channel, 3, padding=1)
        self.encoders = nn.LayerList()
        self.decoders = nn.LayerList()
        self.ups = nn.LayerList()
        self.downs = nn.LayerList()
        chan = width
        for num in enc_blk_nums:
            self.encoders.append(nn.Sequential(*[NAFBlock(chan) for _ in range(num)]))
            self.downs.append(nn.Conv2D(chan, 2 * chan, 2, stride=2))
            chan = chan * 2
        self.middle_blks = nn.Sequential(*[NAFBlock(chan) for _ in range(middle_blk_num)])
        for num in dec_blk_nums:
            self.ups.append(nn.Sequential(nn.Conv2D(chan, chan * 2, 1, bias_attr=False), nn.PixelShuffle(2)))
            chan = chan // 2
            self.decoders.append(nn.Sequential(*[NAFBlock(chan) for _ in range(num)]))

    def forward(self, inp):
        x = self.intro(inp)
        encs = []
        for encoder, down in zip(self.encoders, self.downs):
            x = encoder(x)
            encs.append(x)
            x = down(x)
        x = self.middle_blks(x)
        for decoder, up, enc_skip in zip(self.decoders, self.ups, encs[::-1]):
            x = up(x)
            x = x + enc_skip
            x = decoder(x)
        x = self.ending(x)
        return x + inp


def _trained_look(m):
    rng = np.random.default_rng(41)
    # a trained restoration net: a gentle intro conv and a small residual from the ending conv
    m.intro.weight.set_value((m.intro.weight.numpy() * 0.35).astype("float32"))
    m.ending.weight.set_value((m.ending.weight.numpy() * 0.3).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, LayerNorm2d):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.normal(1.0, 0.15, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, n).astype("float32"))
        elif isinstance(layer, nn.Conv2D) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))
        if isinstance(layer, NAFBlock):
            layer.beta.set_value(rng.normal(0.25, 0.1, layer.beta.shape).astype("float32"))
            layer.gamma.set_value(rng.normal(0.2, 0.08, layer.gamma.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nafnet paddle: unknown PADIFF_BUG {bug!r}")
    _BUG["name"] = bug
    paddle.seed(0)
    try:
        m = NAFNet()
    finally:
        _BUG["name"] = ""
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(31)
    return rng.uniform(0.0, 1.0, (BATCH, IMG_CH, SIZE, SIZE)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # restored image [2, 3, 16, 16]
    return (output**2).mean()
