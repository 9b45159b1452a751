"""Hand-written port, paddle side: a FiLM visual-reasoning model (CLEVR style, Perez et al. 2018), written by "person A".

Inputs (positional): `image` [2, 3, 16, 16] float32 (numpy rng seed 32, standard normal) and
`question` [2, 7] int64 token ids in [0, 20) (same rng). Output: answer logits [2, 10].

Shared math (both sides):
  q      = last hidden state of a 1-layer GRU (16 -> 24) over the token embeddings (vocab 20, 16)
  film   = one affine map of q giving, for each of the 3 residual blocks, gamma_i [16] and beta_i [16]
  x      = relu(BN(conv3x3(image)))                              stem, 3 -> 16 channels
  block  : x = relu(conv1x1(x)); r = x
           y = BN_noaffine(conv3x3(x)); y = gamma_i * y + beta_i; x = relu(y) + r
  head   : relu(BN(conv1x1(x))) (16 -> 32), global MAX pool, fc 32 -> 32, relu, fc 32 -> 10

Paddle idioms on this side:
- root `FiLMReasoner`: `question_encoder` (a `QuestionEncoder` layer: `embed` nn.Embedding(20, 16),
  `gru` nn.GRU(16, 24), time_major=False; it returns outputs[:, -1]), then ONE fused
  `film_gen` nn.Linear(24, 96) whose output is reshaped to [B, 2, 3, 16]: ALL gammas first
  (columns 0:48, block by block), then ALL betas (columns 48:96). The modulation uses gamma AS IS
  (x * gamma + beta): the "+1" of the torch side's convention lives in this side's bias (model()
  gives the gamma half of the bias values around 1).
- the stem is two attributes, `stem_conv` / `stem_bn`, with F.relu inline in the root forward.
- `blocks` = LayerList of `FiLMBlock`, which registers `conv3x3` (no bias), `norm`
  (BatchNorm2D without affine: weight_attr=False, bias_attr=False) and only then `input_proj`
  (1x1, bias); the FiLM modulation and both relus are inline in its forward.
- `head` = `ClassifierHead`: `proj` 1x1 conv, `bn`, `fc1`, `fc2`; relus inline, the global max
  pool is `paddle.amax(axis=[2, 3])` inline.
- model() gives every BN trained-looking running statistics (and the stem / head BN affine
  weights), seeded, so that nothing is an identity.

The torch side (port_film_vqa_torch.py) was written independently: the GRU inline in the root,
one Linear PER BLOCK producing (delta_gamma, beta) used as (1 + delta_gamma) * x + beta by a FiLM
module, nn.Sequential stem and classifier.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_gru_time_major -> the question GRU is built with time_major=True (the porter flipped
                           torch's batch_first=True), so it runs over the BATCH axis as time
  paddle_block_bn_eps   -> FiLMBlock's BatchNorm2D is built with epsilon=1e-3 (a TF default)
                           instead of 1e-5: precision-level
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, EMBED, HIDDEN = 20, 16, 24
CHANNELS, N_BLOCKS, HEAD_DIM, N_ANSWERS = 16, 3, 32, 10
BATCH, Q_LEN, IMG = 2, 7, 16
OWN_BUGS = {"paddle_gru_time_major", "paddle_block_bn_eps"}
OTHER_BUGS = {"torch_film_gamma_no_offset", "torch_residual_before_relu"}


class QuestionEncoder(nn.Layer):
    def __init__(self, time_major=False):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.gru = nn.GRU(EMBED, HIDDEN, time_major=time_major)

    def forward(self, question):
        outputs, _ = self.gru(self.embed(question))
        return outputs[:, -1]  # [B, HIDDEN]


class FiLMBlock(nn.Layer):
    def __init__(self, channels, bn_eps=1e-5):
        super().__init__()
        self.conv3x3 = nn.Conv2D(channels, channels, 3, padding=1, bias_attr=False)
        self.norm = nn.BatchNorm2D(channels, epsilon=bn_eps, weight_attr=False, bias_attr=False)
        self.input_proj = nn.Conv2D(channels, channels, 1)

    def forward(self, x, gamma, beta):
        x = F.relu(self.input_proj(x))
        shortcut = x
        y = self.norm(self.conv3x3(x))
        y = y * gamma.unsqueeze([2, 3]) + beta.unsqueeze([2, 3])
        return F.relu(y) + shortcut


class ClassifierHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2D(CHANNELS, HEAD_DIM, 1)
        self.bn = nn.BatchNorm2D(HEAD_DIM)
        self.fc1 = nn.Linear(HEAD_DIM, HEAD_DIM)
        self.fc2 = nn.Linear(HEAD_DIM, N_ANSWERS)

    def forward(self, x):
        x = F.relu(self.bn(self.proj(x)))
        x = paddle.amax(x, axis=[2, 3])
        return self.fc2(F.relu(self.fc1(x)))


class FiLMReasoner(nn.Layer):
    def __init__(self, time_major=False, bn_eps=1e-5):
        super().__init__()
        self.question_encoder = QuestionEncoder(time_major)
        self.film_gen = nn.Linear(HIDDEN, 2 * N_BLOCKS * CHANNELS)
        self.stem_conv = nn.Conv2D(3, CHANNELS, 3, padding=1)
        self.stem_bn = nn.BatchNorm2D(CHANNELS)
        self.blocks = nn.LayerList([FiLMBlock(CHANNELS, bn_eps) for _ in range(N_BLOCKS)])
        self.head = ClassifierHead()

    def forward(self, image, question):
        q = self.question_encoder(question)
        film = self.film_gen(q).reshape([q.shape[0], 2, N_BLOCKS, CHANNELS])
        gammas, betas = film[:, 0], film[:, 1]
        x = F.relu(self.stem_bn(self.stem_conv(image)))
        for i, block in enumerate(self.blocks):
            x = block(x, gammas[:, i], betas[:, i])
        return self.head(x)


def _trained_look(m):
    rng = np.random.default_rng(321)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer._mean.shape[0]
            if layer.weight is not None:
                layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
                layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
    half = N_BLOCKS * CHANNELS
    bias = np.concatenate([rng.normal(1.0, 0.2, half), rng.normal(0.0, 0.2, half)]).astype("float32")
    m.film_gen.bias.set_value(bias)
    m.question_encoder.embed.weight.set_value(rng.normal(0.0, 0.5, (VOCAB, EMBED)).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_film_vqa paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = FiLMReasoner(time_major=bug == "paddle_gru_time_major",
                     bn_eps=1e-3 if bug == "paddle_block_bn_eps" else 1e-5)
    _trained_look(m)
    m.eval()
    return m


def _arrays():
    rng = np.random.default_rng(32)
    image = rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")
    question = rng.integers(0, VOCAB, (BATCH, Q_LEN)).astype("int64")
    return image, question


def inputs():
    image, question = _arrays()
    return (paddle.to_tensor(image), paddle.to_tensor(question)), {}


def loss(output):
    # answer logits [2, 10]
    return (output**2).mean()
