"""Hand-written port, torch side: a CondConv / dynamic-convolution classifier (written by "person B").

The same math as port_condconv_paddle.py, re-implemented by hand: input `images` [2, 3, 16, 16]
(positional), a conv / BN / ReLU stem (3 -> 8), a conditional 3x3 conv 8 -> 16 stride 2 with 4
sigmoid-routed experts -> BN -> ReLU, a dynamic 3x3 conv 16 -> 16 with 4 softmax(z / 3)-routed
experts -> BN -> ReLU plus a residual, then avg-pool -> Linear(16, 10): logits [2, 10].

Torch idioms on this side:
- root `DynamicConvClassifier`: `stem` = nn.Sequential(Conv2d, BatchNorm2d, nn.ReLU); then
  `dyn1`, `norm1`, `dyn2`, `norm2` registered flat on the root (relu and residual inline in the
  root forward); `fc` nn.Linear(16, 10); pool inline (x.mean((2, 3))).
- `DynamicConv2d`: registers `weight` [K, out, in, kh, kw] and `bias` [K, out] (nn.Parameter)
  FIRST, then `gate` nn.Linear(C_in, K). Routing is inline: pool -> gate -> sigmoid or
  softmax(z / T, dim=1). Per-sample convolution by patches: F.unfold(x) [B, in*kh*kw, L],
  per-sample kernels einsum("bk,koihw->boihw"), then einsum("bop,bpl->bol") + bias, folded back
  to [B, out, H', W'].

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_bn_eps_positional -> `norm1 = nn.BatchNorm2d(16, 0.01)`, meant as momentum=0.01 (the
                             TF 0.99), but torch's second positional argument is eps
                             (precision-level)
  torch_patch_order_hwc   -> DynamicConv2d flattens the per-sample kernels as (kh, kw, in)
                             (a channels-last habit) while F.unfold's patches are (in, kh, kw)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANNELS, STEM_WIDTH, CHANNELS, K, NUM_CLASSES = 3, 8, 16, 4, 10
TAU = 3.0
BATCH, RES = 2, 16
OWN_BUGS = {"torch_bn_eps_positional", "torch_patch_order_hwc"}
OTHER_BUGS = {"paddle_route_softmax_batch", "paddle_kernel_no_transpose"}


class DynamicConv2d(nn.Module):
    def __init__(self, cin, cout, kernel_size, stride, padding, num_experts, routing, tau=1.0, hwc=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.routing, self.tau, self.hwc = routing, tau, hwc
        self.weight = nn.Parameter(torch.randn(num_experts, cout, cin, kernel_size, kernel_size) * 0.1)
        self.bias = nn.Parameter(torch.zeros(num_experts, cout))
        self.gate = nn.Linear(cin, num_experts)

    def forward(self, x):
        b, _, h, w = x.shape
        logits = self.gate(x.mean(dim=(2, 3)))
        if self.routing == "sigmoid":
            r = torch.sigmoid(logits)
        else:
            r = torch.softmax(logits / self.tau, dim=1)
        kernels = torch.einsum("bk,koihw->boihw", r, self.weight)
        if self.hwc:
            kernels = kernels.permute(0, 1, 3, 4, 2)
        kernels = kernels.reshape(b, kernels.shape[1], -1)  # [B, out, in*kh*kw]
        patches = F.unfold(x, self.kernel_size, padding=self.padding, stride=self.stride)  # [B, in*kh*kw, L]
        out = torch.einsum("bop,bpl->bol", kernels, patches) + (r @ self.bias).unsqueeze(-1)
        ho = (h + 2 * self.padding - self.kernel_size) // self.stride + 1
        wo = (w + 2 * self.padding - self.kernel_size) // self.stride + 1
        return out.reshape(b, -1, ho, wo)


class DynamicConvClassifier(nn.Module):
    def __init__(self, bn_eps_positional=False, hwc=False):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(IN_CHANNELS, STEM_WIDTH, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(STEM_WIDTH), nn.ReLU())
        self.dyn1 = DynamicConv2d(STEM_WIDTH, CHANNELS, 3, 2, 1, K, "sigmoid", hwc=hwc)
        self.norm1 = nn.BatchNorm2d(CHANNELS, 0.01) if bn_eps_positional else nn.BatchNorm2d(CHANNELS, momentum=0.01)
        self.dyn2 = DynamicConv2d(CHANNELS, CHANNELS, 3, 1, 1, K, "softmax", tau=TAU, hwc=hwc)
        self.norm2 = nn.BatchNorm2d(CHANNELS, momentum=0.01)
        self.fc = nn.Linear(CHANNELS, NUM_CLASSES)

    def forward(self, images):
        x = self.stem(images)
        x = F.relu(self.norm1(self.dyn1(x)))
        x = x + F.relu(self.norm2(self.dyn2(x)))
        return self.fc(x.mean((2, 3)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_condconv torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DynamicConvClassifier(bn_eps_positional=bug == "torch_bn_eps_positional",
                              hwc=bug == "torch_patch_order_hwc")
    return m.eval()


def _images():
    rng = np.random.default_rng(383)
    return rng.standard_normal((BATCH, IN_CHANNELS, RES, RES)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
