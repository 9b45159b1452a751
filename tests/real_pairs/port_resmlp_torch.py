"""Hand-written port, torch side: a tiny ResMLP (written by "person B").

The same function as port_resmlp_paddle.py, re-implemented by hand: input `x` [2, 3, 16, 16]
(positional), patch 4 -> 16 patches, width 24, 2 layers, channel hidden 96 (exact GELU),
10 classes, output logits [2, 10].

Torch idioms on this side:
- root `ResMLPNet`: `to_patches` nn.Conv2d(3, 24, 4, stride 4), `layers` (nn.ModuleList of
  `MLPLayer`), then the final affine as two INLINE root parameters `out_alpha`, `out_beta`
  [24], and `classifier` nn.Linear(24, 10); token mean inline.
- `MLPLayer` registers the LayerScale vectors FIRST (`ls_token`, `ls_channel` [24]), then the
  pre-token affine `alpha_1`, `beta_1` [1, 1, 24] (inline parameters, no Affine module), the
  cross-patch mixer `token_mix` = nn.Conv1d(16, 16, kernel_size=1) applied directly to the
  [B, N, C] tensor (the 16 tokens are the conv's channels, the 24 features its length, so no
  transpose), the pre-channel affine `alpha_2`, `beta_2`, and the channel MLP `fc1`, `fc2`
  with F.gelu inline.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_quick_gelu       -> the channel MLP uses the "quick GELU" x * sigmoid(1.702 x) (copied
                            from CLIP code) instead of the exact GELU (precision-level)
  torch_aff2_uses_alpha1 -> copy-paste in the layer forward: the pre-channel affine computes
                            x * alpha_1 + beta_2 (the pre-token scale) instead of
                            x * alpha_2 + beta_2
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMAGE_SIZE, PATCH_SIZE, CHANNELS = 16, 4, 3
WIDTH, N_LAYERS, HIDDEN, N_CLASSES = 24, 2, 96, 10
SEQ_LEN = (IMAGE_SIZE // PATCH_SIZE) ** 2
BATCH = 2
OWN_BUGS = {"torch_quick_gelu", "torch_aff2_uses_alpha1"}
OTHER_BUGS = {"paddle_reshape_not_transpose", "paddle_ls1_twice"}


class MLPLayer(nn.Module):
    def __init__(self, seq_len, width, hidden, quick_gelu=False, aff2_alpha1=False):
        super().__init__()
        self.quick_gelu = quick_gelu
        self.aff2_alpha1 = aff2_alpha1
        self.ls_token = nn.Parameter(torch.full((width,), 0.1))
        self.ls_channel = nn.Parameter(torch.full((width,), 0.1))
        self.alpha_1 = nn.Parameter(torch.ones(1, 1, width))
        self.beta_1 = nn.Parameter(torch.zeros(1, 1, width))
        self.token_mix = nn.Conv1d(seq_len, seq_len, kernel_size=1)
        self.alpha_2 = nn.Parameter(torch.ones(1, 1, width))
        self.beta_2 = nn.Parameter(torch.zeros(1, 1, width))
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, width)

    def forward(self, x):
        # x: [B, N, C]; Conv1d sees N as channels and C as length
        x = x + self.ls_token * self.token_mix(x * self.alpha_1 + self.beta_1)
        scale = self.alpha_1 if self.aff2_alpha1 else self.alpha_2
        h = x * scale + self.beta_2
        h = self.fc1(h)
        h = h * torch.sigmoid(1.702 * h) if self.quick_gelu else F.gelu(h)
        h = self.fc2(h)
        return x + self.ls_channel * h


class ResMLPNet(nn.Module):
    def __init__(self, quick_gelu=False, aff2_alpha1=False):
        super().__init__()
        self.to_patches = nn.Conv2d(CHANNELS, WIDTH, PATCH_SIZE, stride=PATCH_SIZE)
        self.layers = nn.ModuleList(
            [MLPLayer(SEQ_LEN, WIDTH, HIDDEN, quick_gelu, aff2_alpha1) for _ in range(N_LAYERS)])
        self.out_alpha = nn.Parameter(torch.ones(WIDTH))
        self.out_beta = nn.Parameter(torch.zeros(WIDTH))
        self.classifier = nn.Linear(WIDTH, N_CLASSES)

    def forward(self, x):
        x = self.to_patches(x)  # [B, 24, 4, 4]
        x = x.permute(0, 2, 3, 1).reshape(x.shape[0], -1, WIDTH)  # [B, 16, 24]
        for layer in self.layers:
            x = layer(x)
        x = x * self.out_alpha + self.out_beta
        return self.classifier(x.mean(dim=1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_resmlp torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ResMLPNet(quick_gelu=bug == "torch_quick_gelu", aff2_alpha1=bug == "torch_aff2_uses_alpha1")
    return m.eval()


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, CHANNELS, IMAGE_SIZE, IMAGE_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
