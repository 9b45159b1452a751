"""Hand-written port, paddle side: a tiny VQ-VAE autoencoder (written by "person A").

Input: images [2, 1, 16, 16] (smooth random blobs in [0, 1], numpy rng seed 3). Output: the
reconstruction [2, 1, 16, 16] (a single tensor; this side does not return the VQ loss).

The model:
- encoder: Conv2D(1, 16, 4, stride 2, pad 1) -> GroupNorm(4, 16) -> ReLU -> Conv2D(16, 32, 4,
  stride 2, pad 1) -> GroupNorm(4, 32) -> ReLU -> 1x1 Conv2D(32, 8): latents z [2, 8, 4, 4];
- vector quantiser: a codebook of 16 codes of dim 8; every latent vector (channels last, 32
  vectors) takes its nearest code by argmin of the squared L2 distance; straight-through output
  z + (q - z).detach() (its forward value is q);
- decoder: Conv2D(8, 32, 3, pad 1) -> GroupNorm(4, 32) -> ReLU -> Conv2DTranspose(32, 16, 4,
  stride 2, pad 1) -> GroupNorm(4, 16) -> ReLU -> Conv2DTranspose(16, 1, 4, stride 2, pad 1).
GroupNorm epsilon 1e-5 everywhere.

Paddle idioms on this side:
- root `VQVAE` registers `encoder`, `decoder`, THEN `quantizer` (called encoder, quantizer,
  decoder).
- `Encoder`: `conv1`, `conv2`, then `gn1`, `gn2` (registered after both convs), `to_latent`;
  ReLU via F.relu inline.
- `VectorQuantizer`: `codebook` [16, 8] via create_parameter (Uniform(-1/16, 1/16), the classic
  VQ-VAE init); distances by the matmul expansion |z|^2 - 2 z E^T + |E|^2
  (paddle.matmul(..., transpose_y=True)); paddle.argmin;
  the codes are gathered with F.embedding(idx, codebook) (no module). Channels moved last with
  transpose([0, 2, 3, 1]) and back.
- `Decoder`: `conv_in`, `norm_in`, `up1` (nn.Conv2DTranspose, weight [in, out, kh, kw]),
  `norm_up`, `up2`.
- every conv weight is initialised Normal(0, 0.04) (weight_attr), convolution / norm biases
  non-zero (Normal(0, 0.05)), norm weights Normal(1, 0.1).

The torch side (port_vqvae_torch.py) was written independently, taming-transformers style:
nn.Sequential encoder / decoder, a root `quant_conv`, a `Codebook` module with an nn.Embedding
and torch.cdist distances, returning (reconstruction, vq_loss).

PADIFF_BUG=paddle_dist_no_code_norm plants this side's bug: the |E|^2 term of the distance
expansion is dropped (as if it were constant per row like |z|^2), so the argmin favours codes
with a large norm and several latents pick a different code. The torch side's bug names are
accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, C1, C2, LATENT, N_CODES, GROUPS = 1, 16, 32, 8, 16, 4
EPS = 1e-5
BATCH, SIZE = 2, 16
OWN_BUGS = {"paddle_dist_no_code_norm"}
OTHER_BUGS = {"torch_no_channel_permute", "torch_gn_eps"}

_BIAS = nn.initializer.Normal(0.0, 0.05)
_W = nn.initializer.Normal(0.0, 0.04)


def _group_norm(ch):
    return nn.GroupNorm(
        GROUPS, ch, epsilon=EPS, weight_attr=nn.initializer.Normal(1.0, 0.1), bias_attr=_BIAS
    )


class Encoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(IN_CH, C1, 4, stride=2, padding=1, weight_attr=_W, bias_attr=_BIAS)
        self.conv2 = nn.Conv2D(C1, C2, 4, stride=2, padding=1, weight_attr=_W, bias_attr=_BIAS)
        self.gn1 = _group_norm(C1)
        self.gn2 = _group_norm(C2)
        self.to_latent = nn.Conv2D(C2, LATENT, 1, weight_attr=_W, bias_attr=_BIAS)

    def forward(self, x):
        h = F.relu(self.gn1(self.conv1(x)))
        h = F.relu(self.gn2(self.conv2(h)))
        return self.to_latent(h)


class VectorQuantizer(nn.Layer):
    def __init__(self, drop_code_norm=False):
        super().__init__()
        self.drop_code_norm = drop_code_norm
        self.codebook = self.create_parameter(
            [N_CODES, LATENT], default_initializer=nn.initializer.Uniform(-1.0 / N_CODES, 1.0 / N_CODES)
        )

    def forward(self, z):
        b, c, h, w = z.shape
        z_last = z.transpose([0, 2, 3, 1])  # [b, h, w, c]
        flat = z_last.reshape([-1, c])
        dist = (flat * flat).sum(axis=1, keepdim=True) - 2.0 * paddle.matmul(flat, self.codebook, transpose_y=True)
        if not self.drop_code_norm:
            dist = dist + (self.codebook * self.codebook).sum(axis=1).unsqueeze(0)
        idx = paddle.argmin(dist, axis=1)
        q = F.embedding(idx, self.codebook).reshape([b, h, w, c])
        q = z_last + (q - z_last).detach()  # straight-through
        return q.transpose([0, 3, 1, 2])


class Decoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2D(LATENT, C2, 3, padding=1, weight_attr=_W, bias_attr=_BIAS)
        self.norm_in = _group_norm(C2)
        self.up1 = nn.Conv2DTranspose(C2, C1, 4, stride=2, padding=1, weight_attr=_W, bias_attr=_BIAS)
        self.norm_up = _group_norm(C1)
        self.up2 = nn.Conv2DTranspose(C1, IN_CH, 4, stride=2, padding=1, weight_attr=_W, bias_attr=_BIAS)

    def forward(self, q):
        h = F.relu(self.norm_in(self.conv_in(q)))
        h = F.relu(self.norm_up(self.up1(h)))
        return self.up2(h)


class VQVAE(nn.Layer):
    def __init__(self, drop_code_norm=False):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()
        self.quantizer = VectorQuantizer(drop_code_norm)

    def forward(self, images):
        z = self.encoder(images)
        q = self.quantizer(z)
        return self.decoder(q)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_vqvae paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = VQVAE(drop_code_norm=bug == "paddle_dist_no_code_norm")
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(3)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype("float64")
    imgs = np.zeros((BATCH, IN_CH, SIZE, SIZE))
    for b in range(BATCH):
        for _ in range(3):
            cy, cx = rng.uniform(2, SIZE - 2, 2)
            s = rng.uniform(1.5, 4.0)
            imgs[b, 0] += rng.uniform(0.4, 1.0) * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * s * s))
    imgs += 0.05 * rng.standard_normal(imgs.shape)
    return np.clip(imgs, 0.0, 1.0).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # reconstruction [2, 1, 16, 16]
    return (output**2).mean()
