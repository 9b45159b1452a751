"""Hand-written port, torch side: a tiny capsule network with dynamic routing (written by "person B").

The same math as port_capsnet_paddle.py, re-implemented by hand: inputs [2, 1, 12, 12]; a
Conv2d(1, 16, 3) + ReLU; primary capsules Conv2d(16, 32, 3, stride 2) read as 8 types x 4 dims
-> 128 capsules of 4 dims (index = type, row, column), squashed; 5 digit capsules of 8 dims with
3 routing-by-agreement iterations; output = capsule lengths [2, 5].

Torch idioms on this side:
- root `CapsuleNet` registers `features` = nn.Sequential(Conv2d, ReLU), then `digit`, then
  `primary` (call order: features, primary, digit); the lengths are `v.norm(dim=-1)` inline.
- `PrimaryCapsules`: `caps_conv` nn.Conv2d(16, 32, 3, stride=2); view [B, 8, 4, 4, 4] -> permute
  (0, 1, 3, 4, 2) -> view [B, 128, 4], then `squash` (a plain function).
- `CapsLayer`: `weight` [out_caps 5, in_caps 128, in_dim 4, out_dim 8] (nn.Parameter);
  u_hat = einsum("bid,jide->bije") [B, 128, 5, 8]; the routing is a separate parameter-free
  module `routing` (AgreementRouting, 3 iterations) called on u_hat: logits b = 0, c =
  softmax(b, dim=2) over the output capsules, s = einsum("bij,bije->bje"), v = squash(s),
  b += einsum("bije,bje->bij") except after the last iteration.
- squash(s) = n^2 / (1 + n^2) * s / (n + 1e-8) with n = ||s|| (the epsilon added to the NORM,
  not under the square root: equal in fp32 for the norms here, >= 0.5 before the squash).

Planted bugs (PADIFF_BUG), see port_capsnet_truth.json; the paddle side's bug names are accepted
and ignored, any other name raises ValueError:
  torch_softmax_in_caps -> the coupling coefficients are softmax(b, dim=1), over the 128 INPUT
                           capsules, instead of over the 5 output capsules
  torch_squash_dim      -> the primary capsules are squashed with dim=1 (the norm taken over the
                           128 capsules of each dimension) instead of over the 4 capsule dims
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

BATCH, IMG = 2, 12
CONV_CH, PRIM_TYPES, PRIM_DIM, IN_CAPS = 16, 8, 4, 128
N_CLASSES, OUT_DIM, ROUTING_ITERS = 5, 8, 3
OWN_BUGS = {"torch_softmax_in_caps", "torch_squash_dim"}
OTHER_BUGS = {"paddle_two_iters"}


def squash(s, dim=-1, eps=1e-8):
    n = s.norm(dim=dim, keepdim=True)
    return (n**2 / (1 + n**2)) * (s / (n + eps))


class PrimaryCapsules(nn.Module):
    def __init__(self, squash_dim=-1):
        super().__init__()
        self.squash_dim = squash_dim
        self.caps_conv = nn.Conv2d(CONV_CH, PRIM_TYPES * PRIM_DIM, kernel_size=3, stride=2)

    def forward(self, x):
        u = self.caps_conv(x)
        B, _, H, W = u.shape
        u = u.view(B, PRIM_TYPES, PRIM_DIM, H, W).permute(0, 1, 3, 4, 2).contiguous()
        return squash(u.view(B, PRIM_TYPES * H * W, PRIM_DIM), dim=self.squash_dim)


class AgreementRouting(nn.Module):
    def __init__(self, n_iterations, softmax_dim=2):
        super().__init__()
        self.n_iterations = n_iterations
        self.softmax_dim = softmax_dim

    def forward(self, u_hat):
        """u_hat [B, in_caps, out_caps, out_dim] -> v [B, out_caps, out_dim]."""
        logits = torch.zeros(u_hat.shape[:3], dtype=u_hat.dtype, device=u_hat.device)
        for i in range(self.n_iterations):
            c = F.softmax(logits, dim=self.softmax_dim)
            v = squash(torch.einsum("bij,bije->bje", c, u_hat))
            if i + 1 < self.n_iterations:
                logits = logits + torch.einsum("bije,bje->bij", u_hat, v)
        return v


class CapsLayer(nn.Module):
    def __init__(self, softmax_dim=2):
        super().__init__()
        self.weight = nn.Parameter(0.3 * torch.randn(N_CLASSES, IN_CAPS, PRIM_DIM, OUT_DIM))
        self.routing = AgreementRouting(ROUTING_ITERS, softmax_dim)

    def forward(self, u):
        u_hat = torch.einsum("bid,jide->bije", u, self.weight)
        return self.routing(u_hat)


class CapsuleNet(nn.Module):
    def __init__(self, softmax_dim=2, squash_dim=-1):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, CONV_CH, kernel_size=3), nn.ReLU())
        self.digit = CapsLayer(softmax_dim)
        self.primary = PrimaryCapsules(squash_dim)

    def forward(self, x):
        v = self.digit(self.primary(self.features(x)))
        return v.norm(dim=-1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_capsnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = CapsuleNet(
        softmax_dim=1 if bug == "torch_softmax_in_caps" else 2,
        squash_dim=1 if bug == "torch_squash_dim" else -1,
    )
    return m.eval()


def _images():
    rng = np.random.default_rng(3)
    return rng.uniform(0.0, 1.0, (BATCH, 1, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # capsule lengths [2, 5]
    return (output**2).mean()
