"""The same convolution weight-normed through torch's parametrization, as HF's SpeechT5 and
wav2vec2 do (``parametrizations.weight.original0`` = g, ``original1`` = v, the weight
computed as g * v / |v| over the kernel axis).
PADIFF_BUG=act: ReLU instead of GELU after the convolution."""
import torch
import torch.nn.functional as F
from _common import D, bug, hidden
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

K = 5


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(D, D, K, padding=K // 2, groups=4), name="weight", dim=2)
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        y = self.conv(x.transpose(1, 2)).transpose(1, 2)
        return self.norm(x + (F.relu(y) if bug() == "act" else F.gelu(y)))


def model():
    torch.manual_seed(0)
    return Model().eval()


def inputs():
    return torch.from_numpy(hidden())


def loss(out):
    return (out[..., : D // 2] ** 2).mean()
