"""The last tensor standing, torch side (see standing_paddle.py): one-hot tokens through a
pointwise Conv1d, a ConvTranspose2d on a 1x1 input, a user layer's weight stored ``[Q, P, R]``,
the two score vectors packed target half first in one ``[H, 2D]``.

PADIFF_BUG (this side): torch_up_stride -> the transposed convolution's output is flipped
along its width (a porter reading the kernel the other way round)."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import bug
from torch import nn

V, C, FM, K, B, T = 12, 6, 4, 3, 2, 5
P, Q, R = 3, 4, 2
H, D = 2, 2


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(Q, P, R) * 0.5)

    def forward(self, x):
        x = x.view(x.shape[0], P, R)
        return torch.einsum("npr,qpr->nq", x, self.weight)


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.att = nn.Parameter(torch.randn(H, 2 * D))
        self.act = nn.LeakyReLU(0.2)

    def forward(self, x):
        h = x.view(x.shape[0], H, D)
        a_i, a_j = self.att[:, :D], self.att[:, D:]
        return self.act((h * a_i).sum(-1)) - (h * a_j).sum(-1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lookup = nn.Conv1d(V, C, 1, bias=False)
        self.up = nn.ConvTranspose2d(C, FM, K, bias=False)
        self.conv = nn.Conv2d(FM, P * R, K)
        self.mix = Mixer()
        self.scorer = Scorer()
        self.out = nn.Linear(H, 1)

    def forward(self, tokens):
        onehot = F.one_hot(tokens, V).float().transpose(1, 2)  # [B, V, T]
        h = self.lookup(onehot).transpose(1, 2).reshape(B * T, C, 1, 1)
        img = self.up(h)
        if bug() == "torch_up_stride":
            img = img.flip(-1)
        feat = F.relu(self.conv(F.relu(img))).reshape(B * T, P * R)
        return self.out(self.scorer(torch.tanh(self.mix(feat)))).view(B, T)


def model():
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    tokens = np.random.default_rng(5).integers(0, V, size=(B, T)).astype("int64")
    return (torch.from_numpy(tokens),), {}


def loss(out):
    return (out * out).mean()
