"""Hand-written port, torch side: a FiLM visual-reasoning model (CLEVR style), written by "person B".

The same math as port_film_vqa_paddle.py, re-implemented by hand: inputs `image` [2, 3, 16, 16]
and `question` [2, 7] int64 (positional), output answer logits [2, 10]. A GRU question encoder,
a conv stem, 3 FiLM-ed residual blocks and a classifier with a global max pool.

Torch idioms on this side:
- root `FiLMNet` registers `embedding` nn.Embedding(20, 16) and `rnn` nn.GRU(16, 24,
  batch_first=True) directly (no encoder module; the question vector is h_n[-1]), then
  `film_heads` = ModuleList of one nn.Linear(24, 32) PER BLOCK, whose output is chunked into
  (delta_gamma, beta). The FiLM convention here is (1 + delta_gamma) * x + beta, so
  film_heads.i.bias[:16] = (the paddle gamma bias) - 1 after the weight copy.
- `stem` = nn.Sequential(Conv2d(3, 16, 3, padding=1), BatchNorm2d(16), ReLU).
- `res_blocks` = ModuleList of `FiLMedResBlock`: `conv1` (1x1, bias), `conv2` (3x3, no bias),
  `bn2` (BatchNorm2d(affine=False)) and `film`, a parameter-free `FiLM` module that does the
  modulation (the paddle side does it inline in its block).
- `classifier` = nn.Sequential(Conv2d(16, 32, 1), BatchNorm2d(32), ReLU, AdaptiveMaxPool2d(1),
  Flatten, Linear(32, 32), ReLU, Linear(32, 10)).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_film_gamma_no_offset -> the FiLM module computes gamma * x + beta with the raw
                                delta_gamma (forgets the "1 +" of its own convention)
  torch_residual_before_relu -> FiLMedResBlock returns relu(y + residual) (ResNet habit)
                                instead of relu(y) + residual
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

N_TOKENS, WORD_DIM, RNN_DIM = 20, 16, 24
MODULE_DIM, NUM_MODULES, CLS_DIM, NUM_ANSWERS = 16, 3, 32, 10
OWN_BUGS = {"torch_film_gamma_no_offset", "torch_residual_before_relu"}
OTHER_BUGS = {"paddle_gru_time_major", "paddle_block_bn_eps"}


class FiLM(nn.Module):
    def __init__(self, no_offset=False):
        super().__init__()
        self.no_offset = no_offset

    def forward(self, x, delta_gamma, beta):
        gamma = delta_gamma if self.no_offset else 1.0 + delta_gamma
        return gamma[:, :, None, None] * x + beta[:, :, None, None]


class FiLMedResBlock(nn.Module):
    def __init__(self, dim, no_offset=False, add_before_relu=False):
        super().__init__()
        self.add_before_relu = add_before_relu
        self.conv1 = nn.Conv2d(dim, dim, kernel_size=1)
        self.conv2 = nn.Conv2d(dim, dim, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(dim, affine=False)
        self.film = FiLM(no_offset)

    def forward(self, x, delta_gamma, beta):
        x = F.relu(self.conv1(x))
        residual = x
        out = self.film(self.bn2(self.conv2(x)), delta_gamma, beta)
        if self.add_before_relu:
            return F.relu(out + residual)
        return F.relu(out) + residual


class FiLMNet(nn.Module):
    def __init__(self, no_offset=False, add_before_relu=False):
        super().__init__()
        self.embedding = nn.Embedding(N_TOKENS, WORD_DIM)
        self.rnn = nn.GRU(WORD_DIM, RNN_DIM, batch_first=True)
        self.film_heads = nn.ModuleList([nn.Linear(RNN_DIM, 2 * MODULE_DIM) for _ in range(NUM_MODULES)])
        self.stem = nn.Sequential(
            nn.Conv2d(3, MODULE_DIM, 3, padding=1), nn.BatchNorm2d(MODULE_DIM), nn.ReLU(inplace=False)
        )
        self.res_blocks = nn.ModuleList(
            [FiLMedResBlock(MODULE_DIM, no_offset, add_before_relu) for _ in range(NUM_MODULES)]
        )
        self.classifier = nn.Sequential(
            nn.Conv2d(MODULE_DIM, CLS_DIM, 1),
            nn.BatchNorm2d(CLS_DIM),
            nn.ReLU(),
            nn.AdaptiveMaxPool2d(1),
            nn.Flatten(),
            nn.Linear(CLS_DIM, CLS_DIM),
            nn.ReLU(),
            nn.Linear(CLS_DIM, NUM_ANSWERS),
        )

    def forward(self, image, question):
        _, h_n = self.rnn(self.embedding(question))
        q = h_n[-1]  # [B, 24]
        feats = self.stem(image)
        for head, block in zip(self.film_heads, self.res_blocks):
            delta_gamma, beta = head(q).chunk(2, dim=-1)
            feats = block(feats, delta_gamma, beta)
        return self.classifier(feats)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_film_vqa torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = FiLMNet(no_offset=bug == "torch_film_gamma_no_offset", add_before_relu=bug == "torch_residual_before_relu")
    return m.eval()


def _arrays():
    rng = np.random.default_rng(32)
    image = rng.standard_normal((2, 3, 16, 16)).astype("float32")
    question = rng.integers(0, N_TOKENS, (2, 7)).astype("int64")
    return image, question


def inputs():
    image, question = _arrays()
    return (torch.from_numpy(image), torch.from_numpy(question)), {}


def loss(output):
    # answer logits [2, 10]
    return (output**2).mean()
