"""Hand-written port, torch side: a tiny GoogLeNet / Inception-v1-style image classifier (written by "person B").

The same math as port_inception_paddle.py, re-implemented by hand in a torchvision-like style:
input images [2, 3, 32, 32] (positional), logits [2, 10].

  stem conv3x3(3 -> 16) + BN + ReLU, max-pool 3x3/2 (padding 1)
  inception3a (in 16; 1x1 8 | 1x1 8 -> 3x3 12 | 1x1 4 -> 5x5 6 | pool -> 1x1 6) -> 32 channels
  max-pool 3x3/2 (padding 1)
  inception3b (in 32; 1x1 12 | 1x1 12 -> 3x3 16 | 1x1 6 -> 3x3 8 -> 3x3 8 | pool -> 1x1 8) -> 44
  global average pool, dropout 0.4, fc 44 -> 10
The branch outputs are concatenated on channels in the order [1x1, 3x3, 5x5, pool].

Torch idioms on this side:
- `ConvBNReLU` is an nn.Sequential subclass: 0 = nn.Conv2d(bias=False), 1 = nn.BatchNorm2d,
  2 = nn.ReLU(inplace=True) (three separate modules, the ReLU applied in place on the BN output).
- root `InceptionNet` registers `stem`, `maxpool1`, `inception3a`, `maxpool2`, `inception3b`,
  `dropout`, `fc`; the global average pool is inline (torch.flatten(F.adaptive_avg_pool2d)).
- `InceptionBlock` registers the POOL branch FIRST: `branch_pool` = nn.Sequential(
  nn.MaxPool2d(3, 1, 1, ceil_mode=True), ConvBNReLU 1x1); then `reduce`, ONE ConvBNReLU 1x1 that
  FUSES the three 1x1 convs reading the block input (out channels = 1x1 | 3x3-reduce |
  5x5-reduce), split with torch.split; then `branch5x5` (an nn.Sequential of one 5x5
  ConvBNReLU, or of two 3x3 ConvBNReLU in the factorised block) and `branch3x3`. It calls them in
  the order reduce, branch3x3, branch5x5, branch_pool and concatenates [1x1, 3x3, 5x5, pool].

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_concat_order -> InceptionBlock concatenates [1x1, 5x5, 3x3, pool] (3x3 and 5x5 branch
                        outputs swapped), in both blocks
  torch_bn_eps_tv    -> ConvBNReLU builds its BatchNorm2d with eps=0.001 (the torchvision
                        BasicConv2d value) instead of the default 1e-5, in every conv block
                        (precision-level)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

NUM_CLASSES = 10
OWN_BUGS = {"torch_concat_order", "torch_bn_eps_tv"}
OTHER_BUGS = {"paddle_branch_avgpool", "paddle_dropout_downscale"}


class ConvBNReLU(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, bn_eps=1e-5):
        padding = (kernel_size - 1) // 2
        super().__init__(
            nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False),
            nn.BatchNorm2d(out_channels, eps=bn_eps),
            nn.ReLU(inplace=True),
        )


class InceptionBlock(nn.Module):
    def __init__(self, in_channels, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj,
                 factorize_5x5=False, bn_eps=1e-5, swap_concat=False):
        super().__init__()
        self.split_sizes = [ch1x1, ch3x3red, ch5x5red]
        self.swap_concat = swap_concat
        self.branch_pool = nn.Sequential(
            nn.MaxPool2d(kernel_size=3, stride=1, padding=1, ceil_mode=True),
            ConvBNReLU(in_channels, pool_proj, 1, bn_eps=bn_eps),
        )
        self.reduce = ConvBNReLU(in_channels, sum(self.split_sizes), 1, bn_eps=bn_eps)
        if factorize_5x5:
            self.branch5x5 = nn.Sequential(
                ConvBNReLU(ch5x5red, ch5x5, 3, bn_eps=bn_eps),
                ConvBNReLU(ch5x5, ch5x5, 3, bn_eps=bn_eps),
            )
        else:
            self.branch5x5 = nn.Sequential(ConvBNReLU(ch5x5red, ch5x5, 5, bn_eps=bn_eps))
        self.branch3x3 = ConvBNReLU(ch3x3red, ch3x3, 3, bn_eps=bn_eps)

    def forward(self, x):
        branch1, red3, red5 = torch.split(self.reduce(x), self.split_sizes, dim=1)
        branch3 = self.branch3x3(red3)
        branch5 = self.branch5x5(red5)
        branch4 = self.branch_pool(x)
        if self.swap_concat:
            outputs = [branch1, branch5, branch3, branch4]
        else:
            outputs = [branch1, branch3, branch5, branch4]
        return torch.cat(outputs, 1)


class InceptionNet(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES, bn_eps=1e-5, swap_concat=False):
        super().__init__()
        self.stem = ConvBNReLU(3, 16, 3, bn_eps=bn_eps)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, padding=1)
        self.inception3a = InceptionBlock(16, 8, 8, 12, 4, 6, 6, bn_eps=bn_eps, swap_concat=swap_concat)
        self.maxpool2 = nn.MaxPool2d(3, stride=2, padding=1)
        self.inception3b = InceptionBlock(32, 12, 12, 16, 6, 8, 8, factorize_5x5=True, bn_eps=bn_eps,
                                          swap_concat=swap_concat)
        self.dropout = nn.Dropout(p=0.4)
        self.fc = nn.Linear(44, num_classes)

    def forward(self, x):
        x = self.maxpool1(self.stem(x))
        x = self.inception3a(x)
        x = self.maxpool2(x)
        x = self.inception3b(x)
        x = torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1)
        x = self.dropout(x)
        return self.fc(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_inception torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = InceptionNet(bn_eps=1e-3 if bug == "torch_bn_eps_tv" else 1e-5,
                     swap_concat=bug == "torch_concat_order")
    return m.eval()


def _images():
    rng = np.random.default_rng(34)
    return rng.standard_normal((2, 3, 32, 32)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
