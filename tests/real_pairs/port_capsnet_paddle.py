"""Hand-written port, paddle side: a tiny capsule network with dynamic routing (written by "person A").

After Sabour et al. 2017, shrunk: inputs [2, 1, 12, 12]; `conv1` Conv2D(1, 16, 3) + ReLU (10x10);
primary capsules: Conv2D(16, 8 * 4, 3, stride 2) (4x4), its 32 channels read as 8 capsule types
x 4 dims, giving 8 * 4 * 4 = 128 input capsules of 4 dims (capsule index = type, row, column),
squashed; digit capsules: 5 classes x 8 dims, 3 iterations of routing-by-agreement; output = the
lengths of the 5 digit capsules [2, 5].

Paddle idioms on this side:
- root `CapsNet`: `conv1` (F.relu inline), `primary_caps`, `digit_caps`; the lengths are
  paddle.linalg.norm inline in the root forward.
- `PrimaryCaps`: `conv` nn.Conv2D(16, 32, 3, stride=2); reshape [B, 8, 4, 16] -> transpose
  [B, 8, 16, 4] -> reshape [B, 128, 4], then `squash` (a plain function).
- `DigitCaps`: the transformation matrices `W` [in_caps 128, out_caps 5, out_dim 8, in_dim 4]
  (create_parameter, Normal(0, 0.3)); u_hat = paddle.matmul(W[None], u[:, :, None, :, None]) ->
  [B, 128, 5, 8]; routing inline in forward: logits b = 0 [B, 128, 5]; per iteration
  c = softmax(b, axis=2) (over the OUTPUT capsules), s = sum_i c * u_hat, v = squash(s), and,
  except after the last iteration, b += <u_hat, v>.
- squash(s) = |s|^2 / (1 + |s|^2) * s / sqrt(|s|^2 + 1e-8) (the epsilon INSIDE the square root).

The torch side (port_capsnet_torch.py) was written independently: W stored as [out_caps, in_caps,
in_dim, out_dim] and used with einsum, the routing in its own module, squash with the epsilon
added to the norm.

PADIFF_BUG=paddle_two_iters plants this side's bug: the digit capsules are built with 2 routing
iterations instead of 3. The torch side's bug names are accepted and ignored; any other name
raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG = 2, 12
CONV_CH, PRIM_TYPES, PRIM_DIM, IN_CAPS = 16, 8, 4, 128
N_CLASSES, OUT_DIM, ROUTING_ITERS = 5, 8, 3
OWN_BUGS = {"paddle_two_iters"}
OTHER_BUGS = {"torch_softmax_in_caps", "torch_squash_dim"}


def squash(s, axis=-1, eps=1e-8):
    sq = (s * s).sum(axis=axis, keepdim=True)
    return sq / (1.0 + sq) * s / paddle.sqrt(sq + eps)


class PrimaryCaps(nn.Layer):
    def __init__(self, in_ch=CONV_CH, n_types=PRIM_TYPES, dim=PRIM_DIM):
        super().__init__()
        self.n_types, self.dim = n_types, dim
        self.conv = nn.Conv2D(in_ch, n_types * dim, 3, stride=2)

    def forward(self, x):
        out = self.conv(x)  # [B, types * dim, 4, 4]
        b, _, h, w = out.shape
        out = out.reshape([b, self.n_types, self.dim, h * w]).transpose([0, 1, 3, 2])
        return squash(out.reshape([b, -1, self.dim]))  # [B, 128, 4]


class DigitCaps(nn.Layer):
    def __init__(self, in_caps=IN_CAPS, in_dim=PRIM_DIM, out_caps=N_CLASSES, out_dim=OUT_DIM, iters=ROUTING_ITERS):
        super().__init__()
        self.iters = iters
        self.W = self.create_parameter(
            [in_caps, out_caps, out_dim, in_dim], default_initializer=nn.initializer.Normal(0.0, 0.3)
        )

    def forward(self, u):
        # u [B, in_caps, in_dim] -> u_hat [B, in_caps, out_caps, out_dim]
        # W gets an explicit batch axis: paddle 3.3's matmul backward fails when a 4-D W is
        # broadcast against the 5-D u ("Input dimension size should be equal to 3")
        u_hat = paddle.matmul(self.W.unsqueeze(0), u.unsqueeze(2).unsqueeze(-1)).squeeze(-1)
        b = paddle.zeros(u_hat.shape[:3], dtype=u_hat.dtype)
        for it in range(self.iters):
            c = F.softmax(b, axis=2)
            s = (c.unsqueeze(-1) * u_hat).sum(axis=1)  # [B, out_caps, out_dim]
            v = squash(s)
            if it < self.iters - 1:
                b = b + (u_hat * v.unsqueeze(1)).sum(axis=-1)
        return v


class CapsNet(nn.Layer):
    def __init__(self, iters=ROUTING_ITERS):
        super().__init__()
        self.conv1 = nn.Conv2D(1, CONV_CH, 3)
        self.primary_caps = PrimaryCaps()
        self.digit_caps = DigitCaps(iters=iters)

    def forward(self, images):
        x = F.relu(self.conv1(images))
        u = self.primary_caps(x)
        v = self.digit_caps(u)
        return paddle.linalg.norm(v, p=2, axis=-1)  # [B, n_classes]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_capsnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = CapsNet(iters=2 if bug == "paddle_two_iters" else ROUTING_ITERS)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(3)
    return rng.uniform(0.0, 1.0, (BATCH, 1, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # capsule lengths [2, 5]
    return (output**2).mean()
