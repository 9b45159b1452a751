"""Hand-written port, torch side: the same tiny MLP-Mixer re-implemented in PyTorch by a second
person, without any conv. 32x32 RGB in, 8x8 patches (16 tokens), width 32, token-mixing hidden
24, channel-mixing hidden 64, 2 layers, 10 classes.

Torch idioms on this side:
- `patch_embed` (`PatchEmbed`) cuts the image into patches with reshape + permute, einops-style
  "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", and projects them with ONE `proj` nn.Linear(192, 32)
  (weight [D, p*p*C], the input features in (p1, p2, c) order);
- the token mixing is a `TokenMixer` module holding raw parameters `w1` [hidden, tokens], `b1`,
  `w2` [tokens, hidden], `b2`, applied with torch.einsum over the token axis (no transpose, no
  nn.Linear, the GELU is F.gelu inline);
- the channel mixing is an nn.Sequential(Linear, GELU, Linear);
- the layers are an nn.Sequential of `MixerLayer` (`token_norm`, `token_mixing`, `channel_norm`,
  `channel_mixing`), the final norm is `ln`, the classifier `classifier`. LayerNorm eps 1e-6.

Planted bugs (PADIFF_BUG): see port_mixer_truth.json; the paddle side's bug names are accepted
and ignored, any other name raises.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMG, PATCH, DIM, TOKEN_HIDDEN, CHANNEL_HIDDEN, DEPTH, CLASSES = 32, 8, 32, 24, 64, 2, 10
NUM_TOKENS = (IMG // PATCH) ** 2

TORCH_BUGS = ("patch_order", "token_gelu_tanh")
PADDLE_BUGS = ("paddle_norm_reuse",)


class PatchEmbed(nn.Module):
    def __init__(self, in_chans=3, patch_size=PATCH, dim=DIM):
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(patch_size * patch_size * in_chans, dim)
        self.channels_first = False  # PADIFF_BUG=patch_order

    def forward(self, x):
        b, c, hh, ww = x.shape
        p = self.patch_size
        x = x.reshape(b, c, hh // p, p, ww // p, p)  # b c h p1 w p2
        if self.channels_first:
            x = x.permute(0, 2, 4, 1, 3, 5)  # b h w c p1 p2: F.unfold's order, not the weights'
        else:
            x = x.permute(0, 2, 4, 3, 5, 1)  # b h w p1 p2 c
        x = x.reshape(b, (hh // p) * (ww // p), p * p * c)
        return self.proj(x)


class TokenMixer(nn.Module):
    """MLP over the token axis of [B, N, D], with its own weights and einsum."""

    def __init__(self, num_tokens=NUM_TOKENS, hidden=TOKEN_HIDDEN):
        super().__init__()
        self.w1 = nn.Parameter(torch.empty(hidden, num_tokens))
        self.b1 = nn.Parameter(torch.zeros(hidden))
        self.w2 = nn.Parameter(torch.empty(num_tokens, hidden))
        self.b2 = nn.Parameter(torch.zeros(num_tokens))
        nn.init.trunc_normal_(self.w1, std=0.02)
        nn.init.trunc_normal_(self.w2, std=0.02)
        self.approximate = "none"  # PADIFF_BUG=token_gelu_tanh

    def forward(self, x):
        h = torch.einsum("hn,bnd->bhd", self.w1, x) + self.b1[:, None]
        h = F.gelu(h, approximate=self.approximate)
        return torch.einsum("nh,bhd->bnd", self.w2, h) + self.b2[:, None]


class MixerLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.token_norm = nn.LayerNorm(DIM, eps=1e-6)
        self.token_mixing = TokenMixer()
        self.channel_norm = nn.LayerNorm(DIM, eps=1e-6)
        self.channel_mixing = nn.Sequential(
            nn.Linear(DIM, CHANNEL_HIDDEN), nn.GELU(), nn.Linear(CHANNEL_HIDDEN, DIM))

    def forward(self, x):
        x = x + self.token_mixing(self.token_norm(x))
        return x + self.channel_mixing(self.channel_norm(x))


class MLPMixer(nn.Module):
    def __init__(self, num_classes=CLASSES, depth=DEPTH):
        super().__init__()
        self.patch_embed = PatchEmbed()
        self.layers = nn.Sequential(*[MixerLayer() for _ in range(depth)])
        self.ln = nn.LayerNorm(DIM, eps=1e-6)
        self.classifier = nn.Linear(DIM, num_classes)

    def forward(self, x):
        x = self.ln(self.layers(self.patch_embed(x)))
        return self.classifier(x.mean(dim=1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in TORCH_BUGS + PADDLE_BUGS:
        raise ValueError(f"port_mixer: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MLPMixer().eval()
    if bug == "patch_order":
        m.patch_embed.channels_first = True
    elif bug == "token_gelu_tanh":
        # TokenMixer uses the tanh approximation of GELU (every layer's token mixing, as if the
        # porter had written F.gelu(h, approximate="tanh") in TokenMixer.forward)
        for layer in m.layers:
            layer.token_mixing.approximate = "tanh"
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, IMG, IMG)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    # logits [2, 10] of a Linear on the LayerNormed, token-averaged features: a mean of squares depends on all of it
    return (output**2).mean()
