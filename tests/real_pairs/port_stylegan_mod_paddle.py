"""Hand-written port, paddle side: a tiny StyleGAN2 generator (mapping + modulated-conv synthesis) (written by "person A").

Sizes: z [2, 16]; w_dim 32; 3 mapping layers; 16 feature channels everywhere; synthesis at 4x4
then 8x8; output image [2, 3, 8, 8]. Written in the style of NVlabs stylegan2-ada-pytorch
(FullyConnectedLayer / SynthesisLayer / ToRGBLayer / SynthesisBlock), translated to paddle:

- root `Generator` registers `synthesis` BEFORE `mapping` (mapping is called first).
- `MappingNetwork`: the 2nd-moment (pixel) norm of z is INLINE (normalize_2nd_moment:
  z * rsqrt(mean(z^2, axis=1) + 1e-8)), then `fc0`, `fc1`, `fc2` (FullyConnectedLayer with
  lrelu). No truncation, no style mixing: one w per sample, used by every layer.
- `FullyConnectedLayer`: equalised learning rate; weight created with create_parameter as
  [in, out] (paddle's Linear layout) unit-variance Normal(0, 1), multiplied by 1/sqrt(in) in
  forward; bias [out]; activation "lrelu" = leaky_relu(x, 0.2) * sqrt(2) inline.
- `SynthesisNetwork`: `b4`, `b8` (SynthesisBlock). b4 holds the constant input `const`
  [16, 4, 4] (create_parameter) and `conv1`, `torgb`; b8 holds `conv0` (up=2), `conv1`, `torgb`.
  The RGB skip is upsampled (bilinear, align_corners=False) and added INLINE in the block.
- `SynthesisLayer`: `affine` FullyConnectedLayer(32, in, bias_init=1), `weight` [out, in, 3, 3]
  Normal(0, 1), buffer `noise_const` [res, res] (FIXED noise, numpy rng, non-persistable),
  `noise_strength` [1], `bias` [out]. Forward: styles = affine(w); nearest x2 upsample inline
  (up=2); modulated_conv2d as ONE GROUPED conv over the batch (weights [B * out, in, 3, 3],
  groups=B) with demodulation rsqrt(sum_{in,kh,kw} w^2 + 1e-8); + noise_const * noise_strength;
  leaky_relu(x + bias, 0.2) * sqrt(2). As in stylegan2-ada, the 1/sqrt(fan_in) weight gain is NOT
  applied to the demodulated convs (demodulation cancels it; only the 1e-8 eps sees it).
- `ToRGBLayer`: `affine` (bias init 1), `weight` [3, 16, 1, 1], `bias` [3]; styles =
  affine(w) * 1/sqrt(16) (the equalised-lr gain moved onto the styles), modulated_conv2d WITHOUT
  demodulation, + bias, no activation.

Init (seeded, copied to torch by verify_truth): every weight Normal(0, 1); mapping biases and
synthesis biases Normal(0, 0.1); affine biases 1 + Normal(0, 0.1); noise strengths Normal(0, 0.3)
(not zeros, so the noise matters).

PADIFF_BUG names planted on this side:
  paddle_pixelnorm_l2      -> the mapping's input normalisation is F.normalize(z, axis=1) (unit
                              L2 norm, z / ||z||) instead of z / sqrt(mean(z^2) + 1e-8): off by
                              sqrt(16) = 4
  paddle_demod_wrong_axis  -> the demodulation coefficients are summed over axes [1, 3, 4]
                              (out, kh, kw) instead of [2, 3, 4] (in, kh, kw); shapes still fit
                              because in == out == 16
The torch side's bug names are accepted and ignored; any other name raises ValueError.
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

Z_DIM, W_DIM, CH, IMG_CH = 16, 32, 16, 3
BATCH = 2
OWN_BUGS = {"paddle_pixelnorm_l2", "paddle_demod_wrong_axis"}
OTHER_BUGS = {"torch_lrelu_no_gain", "torch_torgb_no_eqlr"}


def normalize_2nd_moment(x, axis=1, eps=1e-8):
    return x * paddle.rsqrt(x.square().mean(axis=axis, keepdim=True) + eps)


def modulated_conv2d(x, weight, styles, demodulate=True, padding=0, wrong_axis=False):
    """x [B, I, H, W], weight [O, I, k, k], styles [B, I] -> [B, O, H, W], one grouped conv."""
    batch, in_ch, height, width = x.shape
    out_ch, _, kh, kw = weight.shape
    w = weight.unsqueeze(0) * styles.reshape([batch, 1, -1, 1, 1])  # [B, O, I, k, k]
    if demodulate:
        axes = [1, 3, 4] if wrong_axis else [2, 3, 4]
        dcoefs = paddle.rsqrt(w.square().sum(axis=axes) + 1e-8)  # [B, O]
        w = w * dcoefs.reshape([batch, -1, 1, 1, 1])
    x = x.reshape([1, batch * in_ch, height, width])
    w = w.reshape([batch * out_ch, in_ch, kh, kw])
    x = F.conv2d(x, w, padding=padding, groups=batch)
    return x.reshape([batch, out_ch, x.shape[2], x.shape[3]])


class FullyConnectedLayer(nn.Layer):
    def __init__(self, in_features, out_features, activation="linear", bias_init=0.0):
        super().__init__()
        self.activation = activation
        self.weight = self.create_parameter([in_features, out_features], default_initializer=nn.initializer.Normal(0.0, 1.0))
        self.bias = self.create_parameter(
            [out_features], is_bias=True, default_initializer=nn.initializer.Normal(bias_init, 0.1)
        )
        self.weight_gain = 1.0 / math.sqrt(in_features)

    def forward(self, x):
        x = paddle.matmul(x, self.weight * self.weight_gain) + self.bias
        if self.activation == "lrelu":
            x = F.leaky_relu(x, 0.2) * math.sqrt(2.0)
        return x


class MappingNetwork(nn.Layer):
    def __init__(self, pixelnorm_l2=False):
        super().__init__()
        self.pixelnorm_l2 = pixelnorm_l2
        self.fc0 = FullyConnectedLayer(Z_DIM, W_DIM, activation="lrelu")
        self.fc1 = FullyConnectedLayer(W_DIM, W_DIM, activation="lrelu")
        self.fc2 = FullyConnectedLayer(W_DIM, W_DIM, activation="lrelu")

    def forward(self, z):
        x = F.normalize(z, axis=1) if self.pixelnorm_l2 else normalize_2nd_moment(z)
        return self.fc2(self.fc1(self.fc0(x)))


def _fixed_noise(index, resolution):
    rng = np.random.default_rng(1000 + index)
    return rng.standard_normal((resolution, resolution)).astype("float32")


class SynthesisLayer(nn.Layer):
    def __init__(self, in_ch, out_ch, resolution, noise_index, up=1, wrong_axis=False):
        super().__init__()
        self.up = up
        self.wrong_axis = wrong_axis
        self.affine = FullyConnectedLayer(W_DIM, in_ch, bias_init=1.0)
        self.weight = self.create_parameter([out_ch, in_ch, 3, 3], default_initializer=nn.initializer.Normal(0.0, 1.0))
        self.register_buffer("noise_const", paddle.to_tensor(_fixed_noise(noise_index, resolution)), persistable=False)
        self.noise_strength = self.create_parameter([1], default_initializer=nn.initializer.Normal(0.0, 0.3))
        self.bias = self.create_parameter([out_ch], is_bias=True, default_initializer=nn.initializer.Normal(0.0, 0.1))

    def forward(self, x, w):
        styles = self.affine(w)
        if self.up > 1:
            x = F.interpolate(x, scale_factor=self.up, mode="nearest")
        x = modulated_conv2d(x, self.weight, styles, demodulate=True, padding=1, wrong_axis=self.wrong_axis)
        x = x + self.noise_const * self.noise_strength
        return F.leaky_relu(x + self.bias.reshape([1, -1, 1, 1]), 0.2) * math.sqrt(2.0)


class ToRGBLayer(nn.Layer):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.affine = FullyConnectedLayer(W_DIM, in_ch, bias_init=1.0)
        self.weight = self.create_parameter([out_ch, in_ch, 1, 1], default_initializer=nn.initializer.Normal(0.0, 1.0))
        self.bias = self.create_parameter([out_ch], is_bias=True, default_initializer=nn.initializer.Normal(0.0, 0.1))
        self.weight_gain = 1.0 / math.sqrt(in_ch)

    def forward(self, x, w):
        styles = self.affine(w) * self.weight_gain
        x = modulated_conv2d(x, self.weight, styles, demodulate=False)
        return x + self.bias.reshape([1, -1, 1, 1])


class SynthesisBlock(nn.Layer):
    def __init__(self, in_ch, out_ch, resolution, first_noise, wrong_axis=False):
        super().__init__()
        self.resolution = resolution
        if resolution == 4:
            self.const = self.create_parameter([out_ch, 4, 4], default_initializer=nn.initializer.Normal(0.0, 1.0))
        else:
            self.conv0 = SynthesisLayer(in_ch, out_ch, resolution, first_noise, up=2, wrong_axis=wrong_axis)
            first_noise += 1
        self.conv1 = SynthesisLayer(out_ch, out_ch, resolution, first_noise, wrong_axis=wrong_axis)
        self.torgb = ToRGBLayer(out_ch, IMG_CH)

    def forward(self, x, img, w):
        if self.resolution == 4:
            x = self.const.unsqueeze(0).tile([w.shape[0], 1, 1, 1])
        else:
            x = self.conv0(x, w)
        x = self.conv1(x, w)
        y = self.torgb(x, w)
        if img is not None:
            img = F.interpolate(img, scale_factor=2, mode="bilinear", align_corners=False)
            y = img + y
        return x, y


class SynthesisNetwork(nn.Layer):
    def __init__(self, wrong_axis=False):
        super().__init__()
        self.b4 = SynthesisBlock(CH, CH, 4, first_noise=0, wrong_axis=wrong_axis)
        self.b8 = SynthesisBlock(CH, CH, 8, first_noise=1, wrong_axis=wrong_axis)

    def forward(self, w):
        x, img = self.b4(None, None, w)
        x, img = self.b8(x, img, w)
        return img


class Generator(nn.Layer):
    def __init__(self, pixelnorm_l2=False, wrong_axis=False):
        super().__init__()
        self.synthesis = SynthesisNetwork(wrong_axis)
        self.mapping = MappingNetwork(pixelnorm_l2)

    def forward(self, z):
        w = self.mapping(z)
        return self.synthesis(w)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_stylegan_mod paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = Generator(pixelnorm_l2=bug == "paddle_pixelnorm_l2", wrong_axis=bug == "paddle_demod_wrong_axis")
    m.eval()
    return m


def _z():
    return np.random.default_rng(45).standard_normal((BATCH, Z_DIM)).astype("float32")


def inputs():
    return (paddle.to_tensor(_z()),), {}


def loss(output):
    # images [2, 3, 8, 8]
    return (output**2).mean()
