"""Hand-written port, torch side: a tiny DCGAN generator + discriminator (written by "person B").

The same math as port_dcgan_paddle.py, re-implemented by hand in the style of the PyTorch DCGAN
example. Eval mode, batch 4, latent [4, 16] -> image [4, 3, 16, 16] -> logit [4, 1]; forward(z)
returns (image, logit). BatchNorm eps 1e-5 (torch momentum 0.1, unused in eval mode).

Torch idioms on this side:
- root `GAN`: `netG`, `netD`, both nn.Sequential (modules known by index).
- `netG`: 0 ConvTranspose2d(16, 32, 4, 1, 0, bias=False) on the latent viewed as [B, 16, 1, 1]
  (the projection is a transposed conv from a 1x1 map, not a Linear), 1 BatchNorm2d(32),
  2 ReLU(inplace), 3 ConvTranspose2d(32, 16, 5, 2, padding=2, output_padding=1, bias=False),
  4 BatchNorm2d(16), 5 ReLU(inplace), 6 ConvTranspose2d(16, 3, 5, 2, padding=2, output_padding=1),
  7 Tanh.
- `netD`: 0 Conv2d(3, 16, 5, 2, 2), 1 LeakyReLU(0.2, inplace), 2 Conv2d(16, 32, 5, 2, 2, bias=False),
  3 BatchNorm2d(32), 4 LeakyReLU(0.2, inplace), 5 Conv2d(32, 1, 4) (a 4x4 conv to 1x1 instead of a
  dense layer); its [B, 1, 1, 1] output is viewed as [B, 1].

PADIFF_BUG names planted on this side (see port_dcgan_truth.json):
  torch_bn_eps -> netG.4 (the BatchNorm after the first stride-2 transposed conv) built with
                  eps=1e-3 (the Keras default, copied from the TF reference) instead of 1e-5
                  (precision-level)
The paddle side's bug names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import torch
from torch import nn

BATCH, NZ, NGF, NC, NDF = 4, 16, 16, 3, 16
OWN_BUGS = {"torch_bn_eps"}
OTHER_BUGS = {"paddle_deconv_same_padding", "paddle_nhwc_reshape"}


class GAN(nn.Module):
    def __init__(self, bn_eps_bug=False):
        super().__init__()
        self.netG = nn.Sequential(
            nn.ConvTranspose2d(NZ, NGF * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(NGF * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 2, NGF, 5, 2, padding=2, output_padding=1, bias=False),
            nn.BatchNorm2d(NGF, eps=1e-3 if bn_eps_bug else 1e-5),
            nn.ReLU(True),
            nn.ConvTranspose2d(NGF, NC, 5, 2, padding=2, output_padding=1),
            nn.Tanh(),
        )
        self.netD = nn.Sequential(
            nn.Conv2d(NC, NDF, 5, 2, 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF, NDF * 2, 5, 2, 2, bias=False),
            nn.BatchNorm2d(NDF * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF * 2, 1, 4, 1, 0),
        )

    def forward(self, z):
        img = self.netG(z.view(-1, NZ, 1, 1))
        return img, self.netD(img).view(-1, 1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dcgan torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    return GAN(bn_eps_bug=bug == "torch_bn_eps").eval()


def _latent():
    return np.random.default_rng(5).standard_normal((BATCH, NZ)).astype("float32")


def inputs():
    return (torch.from_numpy(_latent()),), {}


def loss(output):
    img, logit = output
    return (img**2).mean() + (logit**2).mean()
