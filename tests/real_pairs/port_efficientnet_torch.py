"""Hand-written port, torch side: a tiny EfficientNet-style CNN (written by "person B").

The same math as port_efficientnet_paddle.py, re-implemented by hand in torchvision / timm
style. Sizes: 32x32 RGB, batch 2, stem 8 channels (stride 2 -> 16x16), three MBConv blocks
(8->8 3x3 s1 residual, 8->16 3x3 s2, 16->16 5x5 s1 residual; expand ratio 4; SE ratio 0.25 of
the block input), head 1x1 conv to 64, global pool, 10 classes. Eval mode, fp32.

Torch idioms on this side:
- `stem` = nn.Sequential(Conv2d, BatchNorm2d, SiLU); `blocks` = nn.Sequential of `MBConv`;
  `head` = nn.Sequential(Conv2d, BatchNorm2d, SiLU); `pool` nn.AdaptiveAvgPool2d(1);
  `classifier` = nn.Sequential(Dropout(0.2), Linear(64, 10)).
- every BatchNorm is nn.BatchNorm2d(momentum=0.1, eps=1e-3): the paddle side's
  BatchNorm2D(momentum=0.9, epsilon=1e-3) written the torch way (the same update rule).
- `MBConv` registers `expand`, `dw`, `se`, `project` (the convs), THEN `bns` = ModuleList of the
  three BNs (after expand, after dw, after project), then ONE shared `act` nn.SiLU called twice.
- `SqueezeExcitation` (`se`): x.mean((2, 3)) inline, `fc1` nn.Linear(C, S) -> `act` nn.SiLU ->
  `fc2` nn.Linear(S, C), torch.sigmoid inline, x * gate[:, :, None, None]. The Linear weights
  [out, in] are the paddle 1x1 conv weights [out, in, 1, 1] reshaped ("none" in the truth).

Planted bugs (PADIFF_BUG), see port_efficientnet_truth.json; the paddle side's bug name is
accepted and ignored, any other name raises:
  residual_skipped -> the MBConv residual (x + input) is never added (the porter's skip
                      condition reads a flag that is never set)
  torch_bn_eps     -> every BatchNorm uses torch's default eps 1e-5 instead of 1e-3
"""
import os

import numpy as np
import torch
from torch import nn

BATCH, IN_CHANS, IMG, CLASSES = 2, 3, 32, 10
STEM, HEAD = 8, 64
BLOCKS = ((8, 8, 3, 1, 4), (8, 16, 3, 2, 4), (16, 16, 5, 1, 4))
SE_RATIO = 0.25
OWN_BUGS = {"residual_skipped", "torch_bn_eps"}
OTHER_BUGS = {"paddle_se_hardsigmoid"}


class SqueezeExcitation(nn.Module):
    def __init__(self, channels, squeezed):
        super().__init__()
        self.fc1 = nn.Linear(channels, squeezed)
        self.act = nn.SiLU()
        self.fc2 = nn.Linear(squeezed, channels)

    def forward(self, x):
        s = x.mean((2, 3))
        gate = torch.sigmoid(self.fc2(self.act(self.fc1(s))))
        return x * gate[:, :, None, None]


class MBConv(nn.Module):
    def __init__(self, cin, cout, kernel, stride, expand, bn_eps=1e-3, skip_residual=False):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout and not skip_residual
        self.expand = nn.Conv2d(cin, hidden, 1, bias=False)
        self.dw = nn.Conv2d(hidden, hidden, kernel, stride, kernel // 2, groups=hidden, bias=False)
        self.se = SqueezeExcitation(hidden, max(1, int(cin * SE_RATIO)))
        self.project = nn.Conv2d(hidden, cout, 1, bias=False)
        self.bns = nn.ModuleList([nn.BatchNorm2d(hidden, eps=bn_eps, momentum=0.1),
                                  nn.BatchNorm2d(hidden, eps=bn_eps, momentum=0.1),
                                  nn.BatchNorm2d(cout, eps=bn_eps, momentum=0.1)])
        self.act = nn.SiLU()

    def forward(self, x):
        out = self.act(self.bns[0](self.expand(x)))
        out = self.act(self.bns[1](self.dw(out)))
        out = self.se(out)
        out = self.bns[2](self.project(out))
        if self.use_res:
            out = out + x
        return out


class TinyEfficientNet(nn.Module):
    def __init__(self, bn_eps=1e-3, skip_residual=False):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(IN_CHANS, STEM, 3, 2, 1, bias=False),
                                  nn.BatchNorm2d(STEM, eps=bn_eps, momentum=0.1), nn.SiLU())
        self.blocks = nn.Sequential(*[MBConv(*cfg, bn_eps=bn_eps, skip_residual=skip_residual) for cfg in BLOCKS])
        self.head = nn.Sequential(nn.Conv2d(BLOCKS[-1][1], HEAD, 1, bias=False),
                                  nn.BatchNorm2d(HEAD, eps=bn_eps, momentum=0.1), nn.SiLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(HEAD, CLASSES))

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = self.pool(self.head(x)).flatten(1)
        return self.classifier(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_efficientnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = TinyEfficientNet(bn_eps=1e-5 if bug == "torch_bn_eps" else 1e-3,
                         skip_residual=bug == "residual_skipped")
    with torch.no_grad():  # this side's own random BN statistics (verify_truth copies paddle's)
        g = torch.Generator().manual_seed(1)
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                c = mod.num_features
                mod.weight.copy_(torch.rand(c, generator=g) + 0.5)
                mod.bias.copy_(0.1 * torch.randn(c, generator=g))
                mod.running_mean.copy_(0.2 * torch.randn(c, generator=g))
                mod.running_var.copy_(0.4 * torch.rand(c, generator=g) + 0.1)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(7)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [B, 10]
    return (output**2).mean()
