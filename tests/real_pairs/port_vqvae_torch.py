"""Hand-written port, torch side: a tiny VQ-VAE autoencoder (written by "person B").

The same network as port_vqvae_paddle.py, re-implemented by hand in the style of
taming-transformers. Input images [2, 1, 16, 16]; the forward returns a TUPLE
(reconstruction [2, 1, 16, 16], vq_loss scalar); the paddle side returns only the
reconstruction. vq_loss = beta * mean((sg[q] - z)^2) + mean((q - sg[z])^2), beta 0.25.

Torch idioms on this side:
- root `VQAutoencoder`: `enc` = nn.Sequential(Conv2d(1, 16, 4, 2, 1), GroupNorm, ReLU,
  Conv2d(16, 32, 4, 2, 1), GroupNorm, ReLU) -> `quant_conv` 1x1 Conv2d(32, 8) at the ROOT ->
  `vq` -> `dec` = nn.Sequential(Conv2d(8, 32, 3, pad 1), GroupNorm, ReLU,
  ConvTranspose2d(32, 16, 4, 2, 1), GroupNorm, ReLU, ConvTranspose2d(16, 1, 4, 2, 1)).
  Registration order: `enc`, `dec`, `vq`, `quant_conv` (call order enc, quant_conv, vq, dec).
- every GroupNorm comes from one helper `Normalize(ch)` = nn.GroupNorm(4, ch, eps=1e-5, affine).
- `Codebook`: `embed` = nn.Embedding(16, 8); channels last with permute(0, 2, 3, 1); distances
  with torch.cdist (Euclidean, not squared: the same argmin); the codes are looked up by CALLING
  `embed` (a module call with no paddle twin); straight-through z + (q - z).detach(); returns
  (z_q, loss, indices).
- nn.ConvTranspose2d weights are [in, out, kh, kw], the same layout as paddle's
  Conv2DTranspose, so they copy as-is.

Planted bugs (PADIFF_BUG), see port_vqvae_truth.json; the paddle side's bug name is accepted
and ignored, any other name raises ValueError:
  torch_no_channel_permute -> the Codebook flattens z [b, 8, 4, 4] with reshape(-1, 8) WITHOUT
                              moving the channels last (and views the codes back to z's shape),
                              so it quantises runs of 8 consecutive pixels of a channel plane
  torch_gn_eps             -> Normalize() uses eps=1e-6 (taming-transformers' value) instead of
                              the paddle model's 1e-5, in all four GroupNorms (precision-level)
"""
import os

import numpy as np
import torch
from torch import nn

IN_CH, C1, C2, LATENT, N_CODES, GROUPS = 1, 16, 32, 8, 16, 4
EPS = 1e-5
BETA = 0.25
BATCH, SIZE = 2, 16
OWN_BUGS = {"torch_no_channel_permute", "torch_gn_eps"}
OTHER_BUGS = {"paddle_dist_no_code_norm"}


def Normalize(ch, eps=EPS):
    return nn.GroupNorm(num_groups=GROUPS, num_channels=ch, eps=eps, affine=True)


class Codebook(nn.Module):
    def __init__(self, n_codes, dim, beta=BETA, no_permute=False):
        super().__init__()
        self.dim = dim
        self.beta = beta
        self.no_permute = no_permute
        self.embed = nn.Embedding(n_codes, dim)
        self.embed.weight.data.uniform_(-1.0 / n_codes, 1.0 / n_codes)

    def forward(self, z):
        zc = z if self.no_permute else z.permute(0, 2, 3, 1).contiguous()
        flat = zc.reshape(-1, self.dim)
        d = torch.cdist(flat, self.embed.weight)
        indices = torch.argmin(d, dim=1)
        zq = self.embed(indices).view(zc.shape)
        loss = self.beta * torch.mean((zq.detach() - zc) ** 2) + torch.mean((zq - zc.detach()) ** 2)
        zq = zc + (zq - zc).detach()
        if not self.no_permute:
            zq = zq.permute(0, 3, 1, 2).contiguous()
        return zq, loss, indices


class VQAutoencoder(nn.Module):
    def __init__(self, gn_eps=EPS, no_permute=False):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(IN_CH, C1, 4, stride=2, padding=1),
            Normalize(C1, gn_eps),
            nn.ReLU(),
            nn.Conv2d(C1, C2, 4, stride=2, padding=1),
            Normalize(C2, gn_eps),
            nn.ReLU(),
        )
        self.dec = nn.Sequential(
            nn.Conv2d(LATENT, C2, 3, padding=1),
            Normalize(C2, gn_eps),
            nn.ReLU(),
            nn.ConvTranspose2d(C2, C1, 4, stride=2, padding=1),
            Normalize(C1, gn_eps),
            nn.ReLU(),
            nn.ConvTranspose2d(C1, IN_CH, 4, stride=2, padding=1),
        )
        self.vq = Codebook(N_CODES, LATENT, no_permute=no_permute)
        self.quant_conv = nn.Conv2d(C2, LATENT, 1)

    def forward(self, x):
        h = self.quant_conv(self.enc(x))
        zq, vq_loss, _ = self.vq(h)
        return self.dec(zq), vq_loss


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_vqvae torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = VQAutoencoder(gn_eps=1e-6 if bug == "torch_gn_eps" else EPS, no_permute=bug == "torch_no_channel_permute")
    return m.eval()


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
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # (reconstruction [2, 1, 16, 16], vq_loss): the same loss as the paddle side, on the reconstruction
    return (output[0] ** 2).mean()
