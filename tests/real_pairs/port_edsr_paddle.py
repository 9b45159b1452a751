"""Hand-written port, paddle side: a tiny EDSR x2 super-resolution net (written by "person A").

Input: one positional image batch [2, 3, 12, 12] (NCHW, numpy rng seed 41, uniform [0, 1),
rgb_range 1). Output: [2, 3, 24, 24].
  x = sub_mean(x)                                 subtract the DIV2K RGB mean (0.4488, 0.4371, 0.4040)
  x = head(x)                                     conv3x3 3 -> 16
  res = body(x) + x                               3 residual blocks (conv-ReLU-conv, times 0.1, + input),
                                                  then conv3x3 16 -> 16, then the global skip
  x = tail(res)                                   conv3x3 16 -> 64, PixelShuffle(2), conv3x3 16 -> 3
  x = add_mean(x)                                 add the mean back
All convs are 3x3, padding 1 (zero), with bias.

Paddle idioms on this side (the original EDSR code layout):
- root `EDSR` registers `sub_mean`, `add_mean` FIRST, then `head` (Sequential: one conv),
  `body` (Sequential: 3 `ResBlock` + the 16 -> 16 conv as body.3), `tail` (Sequential:
  `Upsampler` as tail.0, the 16 -> 3 conv as tail.1).
- `MeanShift` IS a 1x1 nn.Conv2D(3, 3) whose weight (eye / std, std 1) and bias
  (sign * rgb_range * mean / std) are fixed, stop_gradient parameters.
- `ResBlock`: `body` = Sequential(conv, ReLU, conv); the residual scaling is INLINE:
  res = body(x) * res_scale; res += x (res_scale 0.1, no module).
- `Upsampler` is an nn.Sequential subclass: [Conv2D(16, 64, 3), nn.PixelShuffle(2)]. PixelShuffle
  takes conv channel c * 4 + i * 2 + j to output channel c, sub-pixel (i, j).
- model() gives every conv bias a trained-looking value Normal(0, 0.05) (seeded); paddle inits
  conv biases to zero.

The torch side (port_edsr_torch.py) was written independently (BasicSR style): an inline
subtraction of a `mean` buffer, a residual-scale MODULE, and a hand-written depth-to-space
(TF order: channel (i * 2 + j) * 16 + c) after the up-conv, whose output channels are permuted
accordingly (see port_edsr_hook.py).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_leaky_relu      -> the residual blocks' activation is built as nn.LeakyReLU() (paddle's
                            default negative_slope 0.01) instead of nn.ReLU() (precision-level:
                            the leak passes through conv2 and the 0.1 residual scale)
  paddle_res_scale_on_sum -> ResBlock scales the SUM: (body(x) + x) * res_scale instead of
                            body(x) * res_scale + x
"""
import os

import numpy as np
import paddle
from paddle import nn

N_COLORS, N_FEATS, N_RESBLOCKS, SCALE, RES_SCALE, RGB_RANGE = 3, 16, 3, 2, 0.1, 1.0
RGB_MEAN = (0.4488, 0.4371, 0.4040)
RGB_STD = (1.0, 1.0, 1.0)
BATCH, SIZE = 2, 12
OWN_BUGS = {"paddle_leaky_relu", "paddle_res_scale_on_sum"}
OTHER_BUGS = {"torch_d2s_ij_swapped", "torch_conv_last_replicate"}


def default_conv(in_channels, out_channels, kernel_size):
    return nn.Conv2D(in_channels, out_channels, kernel_size, padding=kernel_size // 2)


class MeanShift(nn.Conv2D):
    def __init__(self, rgb_range, rgb_mean, rgb_std, sign=-1):
        super().__init__(3, 3, kernel_size=1)
        std = np.array(rgb_std, dtype="float32")
        self.weight.set_value((np.eye(3, dtype="float32") / std[:, None]).reshape([3, 3, 1, 1]))
        self.bias.set_value((sign * rgb_range * np.array(rgb_mean, dtype="float32") / std).astype("float32"))
        self.weight.stop_gradient = True
        self.bias.stop_gradient = True


class ResBlock(nn.Layer):
    def __init__(self, conv, n_feats, kernel_size, act, res_scale=1.0, scale_on_sum=False):
        super().__init__()
        self.body = nn.Sequential(conv(n_feats, n_feats, kernel_size), act(), conv(n_feats, n_feats, kernel_size))
        self.res_scale = res_scale
        self.scale_on_sum = scale_on_sum

    def forward(self, x):
        if self.scale_on_sum:
            return (self.body(x) + x) * self.res_scale
        res = self.body(x) * self.res_scale
        res += x
        return res


class Upsampler(nn.Sequential):
    def __init__(self, conv, scale, n_feats):
        super().__init__(conv(n_feats, scale * scale * n_feats, 3), nn.PixelShuffle(scale))


class EDSR(nn.Layer):
    def __init__(self, act=nn.ReLU, scale_on_sum=False):
        super().__init__()
        conv = default_conv
        self.sub_mean = MeanShift(RGB_RANGE, RGB_MEAN, RGB_STD, sign=-1)
        self.add_mean = MeanShift(RGB_RANGE, RGB_MEAN, RGB_STD, sign=1)
        self.head = nn.Sequential(conv(N_COLORS, N_FEATS, 3))
        body = [ResBlock(conv, N_FEATS, 3, act, res_scale=RES_SCALE, scale_on_sum=scale_on_sum)
                for _ in range(N_RESBLOCKS)]
        body.append(conv(N_FEATS, N_FEATS, 3))
        self.body = nn.Sequential(*body)
        self.tail = nn.Sequential(Upsampler(conv, SCALE, N_FEATS), conv(N_FEATS, N_COLORS, 3))

    def forward(self, x):
        x = self.sub_mean(x)
        x = self.head(x)
        res = self.body(x)
        res += x
        x = self.tail(res)
        return self.add_mean(x)


def _trained_look(m):
    rng = np.random.default_rng(43)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.Conv2D) and not isinstance(layer, MeanShift):
            layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_edsr paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = EDSR(act=nn.LeakyReLU if bug == "paddle_leaky_relu" else nn.ReLU, scale_on_sum=bug == "paddle_res_scale_on_sum")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(41)
    return rng.uniform(0.0, 1.0, (BATCH, N_COLORS, SIZE, SIZE)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # super-resolved image [2, 3, 24, 24]
    return (output**2).mean()
