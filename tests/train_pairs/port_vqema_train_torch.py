"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_vqema_train_paddle.py) the rosinality/vq-vae-2-pytorch way.

    VQVAE: registers enc, quantize_conv, dec, quantize (the quantizer last)
      enc = Sequential(Conv2d 3 -> 16 k 4 s 2 p 1, ReLU, ResBlock(16, 8, dropout 0.1), ReLU)
          (.0 .1 .2 .3); ResBlock: conv1 (Conv2d 16 -> 8, k 3, p 1), conv2 (Conv2d 8 -> 16, k 1);
          x + conv2(F.dropout(relu(conv1(relu(x))), p, training)) - the dropout INLINE (no module)
      quantize_conv: Conv2d 16 -> 4, k 1
      dec = Sequential(Conv2d 4 -> 16 k 3 p 1, ResBlock(16, 8, dropout 0.1), ReLU,
          ConvTranspose2d 16 -> 3 k 4 s 2 p 1) (.0 .1 .2 .3)
      quantize (Quantize): embed, a NON-TRAINABLE nn.Parameter [dim 4, n_embed 16] (requires_grad
          False; transposed against paddle's [16, 4]); buffers cluster_size [16], embed_avg [4, 16];
          takes and returns channels-last [B, H, W, 4] (the permutes are inline in VQVAE.forward)
    forward(x) -> (dec [8, 3, 8, 8], diff)

Quantize: distances written out as the expanded square ((z - e) ** 2).sum(-1) over a broadcast
[N, 1, 4] - [1, 16, 4]; argmin; quantize = F.embedding(ind, embed.T) (the codebook before the
update); diff = (quantize.detach() - input).pow(2).mean() (the commitment weight 0.25 is applied in
loss()); straight-through quantize = input + (quantize - input).detach().
EMA (train mode only, under no_grad, IN PLACE, as rosinality's code):
    cluster_size.mul_(0.99).add_(onehot.sum(0), alpha=0.01)
    embed_avg.mul_(0.99).add_(flatten.T @ onehot, alpha=0.01)
    n = cluster_size.sum(); cs = (cluster_size + 1e-5) / (n + 16e-5) * n   (Laplace smoothing)
    embed.copy_(embed_avg / cs)
Data: the same 24-image training set (default_rng(13900), the same recipe); data_variance =
np.var(train set); inputs(step) = images [8 step : 8 step + 8].
Loss: F.mse_loss(dec, img) / data_variance + 0.25 * diff.
Optimizer: torch.optim.Adam(model.parameters(), lr 1e-3) (the codebook parameter has no gradient:
Adam skips it).

PADIFF_BUG (this side only):
  torch_avg_div_inplace -> embed_normalized = self.embed_avg.div_(cs) (an in-place div_ where
              rosinality divides out of place): the EMA embedding SUMS are overwritten by the
              normalised codebook
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_avg_div_inplace"} | {"paddle_dec_dropout_unset", "paddle_batch_variance"}  # the paddle side's, ignored here
IMG, CHANNELS, BATCH, N_TRAIN = 8, 3, 8, 24
CHANNEL, N_RES_CHANNEL, EMBED_DIM, N_EMBED = 16, 8, 4, 16
DROPOUT = 0.1
LATENT_LOSS_WEIGHT, DECAY, EPS = 0.25, 0.99, 1e-5
LR = 1e-3

_DATA = {}


def make_dataset(seed=13900, n=N_TRAIN):
    rng = np.random.default_rng(seed)
    yy, xx = np.meshgrid(np.arange(IMG), np.arange(IMG), indexing="ij")
    images = np.empty((n, CHANNELS, IMG, IMG))
    for i in range(n):
        for c in range(CHANNELS):
            freqs = rng.normal(0.0, 0.8, (3, 2))
            phases = rng.uniform(0.0, 2 * np.pi, 3)
            amps = rng.normal(0.0, 1.0, 3)
            field = np.zeros((IMG, IMG))
            for a, (fy, fx), p in zip(amps, freqs, phases):
                field = field + a * np.cos(fy * yy + fx * xx + p)
            images[i, c] = 1.0 / (1.0 + np.exp(-(field + rng.normal(0.0, 0.5))))
    return images.astype(np.float32)


train_images = make_dataset()
data_variance = float(np.var(train_images))


class ResBlock(nn.Module):
    def __init__(self, in_channel, channel, dropout=0.0):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channel, channel, 3, padding=1)
        self.conv2 = nn.Conv2d(channel, in_channel, 1)
        self.dropout = dropout

    def forward(self, input):
        out = F.relu(self.conv1(F.relu(input)))
        out = F.dropout(out, self.dropout, self.training)
        return input + self.conv2(out)


class Quantize(nn.Module):
    def __init__(self, dim, n_embed, decay=0.99, eps=1e-5):
        super().__init__()
        self.dim = dim
        self.n_embed = n_embed
        self.decay = decay
        self.eps = eps
        embed = torch.randn(dim, n_embed)
        self.embed = nn.Parameter(embed, requires_grad=False)
        self.register_buffer("cluster_size", torch.zeros(n_embed))
        self.register_buffer("embed_avg", embed.clone())

    def forward(self, input):
        flatten = input.reshape(-1, self.dim)
        dist = ((flatten.unsqueeze(1) - self.embed.t().unsqueeze(0)) ** 2).sum(-1)
        embed_ind = dist.argmin(1)
        embed_onehot = F.one_hot(embed_ind, self.n_embed).type(flatten.dtype)
        embed_ind = embed_ind.view(*input.shape[:-1])
        quantize = F.embedding(embed_ind, self.embed.transpose(0, 1))

        if self.training:
            with torch.no_grad():
                embed_onehot_sum = embed_onehot.sum(0)
                embed_sum = flatten.transpose(0, 1) @ embed_onehot
                self.cluster_size.mul_(self.decay).add_(embed_onehot_sum, alpha=1 - self.decay)
                self.embed_avg.mul_(self.decay).add_(embed_sum, alpha=1 - self.decay)
                n = self.cluster_size.sum()
                cluster_size = (self.cluster_size + self.eps) / (n + self.n_embed * self.eps) * n
                if bug(BUGS) == "torch_avg_div_inplace":
                    embed_normalized = self.embed_avg.div_(cluster_size.unsqueeze(0))
                else:
                    embed_normalized = self.embed_avg / cluster_size.unsqueeze(0)
                self.embed.copy_(embed_normalized)

        diff = (quantize.detach() - input).pow(2).mean()
        quantize = input + (quantize - input).detach()
        return quantize, diff, embed_ind


class VQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(CHANNELS, CHANNEL, 4, stride=2, padding=1),
            nn.ReLU(inplace=True),
            ResBlock(CHANNEL, N_RES_CHANNEL, DROPOUT),
            nn.ReLU(inplace=True),
        )
        self.quantize_conv = nn.Conv2d(CHANNEL, EMBED_DIM, 1)
        self.dec = nn.Sequential(
            nn.Conv2d(EMBED_DIM, CHANNEL, 3, padding=1),
            ResBlock(CHANNEL, N_RES_CHANNEL, DROPOUT),
            nn.ReLU(inplace=True),
            nn.ConvTranspose2d(CHANNEL, CHANNELS, 4, stride=2, padding=1),
        )
        self.quantize = Quantize(EMBED_DIM, N_EMBED, DECAY, EPS)

    def forward(self, input):
        quant = self.quantize_conv(self.enc(input)).permute(0, 2, 3, 1)
        quant, diff, _ = self.quantize(quant)
        quant = quant.permute(0, 3, 1, 2)
        dec = self.dec(quant)
        return dec, diff


def model():
    bug(BUGS)
    torch.manual_seed(139)
    m = VQVAE()
    m.train()
    return m


def inputs(step=0):
    img = train_images[BATCH * step:BATCH * (step + 1)]
    _DATA["img"] = torch.from_numpy(img)
    return (torch.from_numpy(img.copy()),), {}


def loss(output):
    dec, latent_loss = output
    img = _DATA["img"].to(dec.dtype)
    recon_loss = F.mse_loss(dec, img) / data_variance
    return recon_loss + LATENT_LOSS_WEIGHT * latent_loss.mean()


def optimizer(model):
    return torch.optim.Adam(model.parameters(), lr=LR)
