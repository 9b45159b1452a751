"""Hand-written port, paddle side: a tiny MLP-Mixer written the way a Paddle user would write it
(the "original" model). 32x32 RGB in, 8x8 patches (16 tokens), width 32, token-mixing hidden 24,
channel-mixing hidden 64, 2 blocks, 10 classes.

    stem: PatchStem (Conv2D 3->32, kernel = stride = 8, then flatten + transpose to [B, 16, 32])
    blocks[i]: x + token_mlp(norm1(x)^T)^T ; x + channel_mlp(norm2(x))
    norm, mean over tokens, head

Paddle idioms on this side: the patches are embedded with a strided `nn.Conv2D` (weight
[D, C, p, p]) inside a `PatchStem` layer called `stem`; both MLPs are the same `Mlp` layer
(`fc1`, `act` = nn.GELU, `fc2`, paddle Linear weights [in, out]); the token-mixing MLP is applied
by transposing the normalised tokens to [B, D, N] and back; LayerNorm epsilon 1e-6 everywhere.

PADIFF_BUG=paddle_norm_reuse plants this side's bug (see port_mixer_truth.json); the torch side's
bug names are accepted and ignored, any other name raises.
"""
import os

import numpy as np
import paddle
from paddle import nn

IMG, PATCH, DIM, TOKEN_HIDDEN, CHANNEL_HIDDEN, DEPTH, CLASSES = 32, 8, 32, 24, 64, 2, 10
NUM_TOKENS = (IMG // PATCH) ** 2

PADDLE_BUGS = ("paddle_norm_reuse",)
TORCH_BUGS = ("patch_order", "token_gelu_tanh")


class PatchStem(nn.Layer):
    def __init__(self, in_chans=3, embed_dim=DIM, patch_size=PATCH):
        super().__init__()
        self.conv = nn.Conv2D(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        x = self.conv(x)  # [B, D, H/p, W/p]
        return x.flatten(2).transpose([0, 2, 1])  # [B, N, D]


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class MixerBlock(nn.Layer):
    def __init__(self, dim=DIM, num_tokens=NUM_TOKENS):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=1e-6)
        self.token_mlp = Mlp(num_tokens, TOKEN_HIDDEN)
        self.norm2 = nn.LayerNorm(dim, epsilon=1e-6)
        self.channel_mlp = Mlp(dim, CHANNEL_HIDDEN)
        self.reuse_norm1 = False  # PADIFF_BUG=paddle_norm_reuse

    def forward(self, x):
        y = self.norm1(x).transpose([0, 2, 1])  # [B, D, N]
        x = x + self.token_mlp(y).transpose([0, 2, 1])
        if self.reuse_norm1:
            # copy-paste slip: the channel branch is normalised with norm1's parameters
            return x + self.channel_mlp(self.norm1(x))
        return x + self.channel_mlp(self.norm2(x))


class MlpMixer(nn.Layer):
    def __init__(self, num_classes=CLASSES, depth=DEPTH):
        super().__init__()
        self.stem = PatchStem()
        self.blocks = nn.LayerList([MixerBlock() for _ in range(depth)])
        self.norm = nn.LayerNorm(DIM, epsilon=1e-6)
        self.head = nn.Linear(DIM, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        return self.head(x.mean(axis=1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in PADDLE_BUGS + TORCH_BUGS:
        raise ValueError(f"port_mixer: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MlpMixer()
    m.eval()
    _perturb(m)
    if bug == "paddle_norm_reuse":
        m.blocks[1].reuse_norm1 = True
    return m


def _perturb(m):
    """Random init leaves every bias 0 and every LayerNorm at (1, 0): give them random values
    (fixed numpy rng) so that a bias or norm parameter ported wrongly shows."""
    rng = np.random.default_rng(1)
    for name, p in m.named_parameters():
        if name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif "norm" in name and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, IMG, IMG)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    # logits [2, 10] of a Linear on the LayerNormed, token-averaged features: a mean of squares depends on all of it
    return (output**2).mean()
