"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny CLIP-style dual
encoder trained contrastively for 3 steps.

    visual: conv1 (Conv2D 3->32, kernel 4, stride 4, no bias: 16 patches of a 16x16 image),
            class_embedding [32], positional_embedding [17, 32], ln_pre, one pre-norm block,
            ln_post on the class token, proj [32, 24] (a raw parameter, x @ proj)
    text:   token_embedding (64 x 32), positional_embedding [8, 32], emb_drop, one CAUSAL pre-norm
            block, ln_final, pooling at the EOT token (the largest id, 63: argmax), text_proj
            [32, 24] (a raw parameter)
    block:  norm1, attn = paddle.nn.MultiHeadAttention(32, 4, bias_attr=False) (q/k/v/out_proj,
            no attention-probability dropout), drop1 (0.1), norm2, fc1 (32->64), exact GELU,
            fc2 (64->32), drop2 (0.1)
    logit_scale: a 0-d parameter (shape []) = log(1 / 0.07); scale = clip(exp(logit_scale), max=100)
Dropout 0.1 on the residual branches and the text embeddings: 5 calls per forward (image block 2,
text embeddings 1, text block 2). model.train(). Forward returns (logits_per_image, logits_per_text).

Data: images N(0, 1) [4, 3, 16, 16] and token ids [4, 8] (EOT 63 at lengths 8, 6, 5, 7, pad 0
after it) from default_rng(24), the same batch every step. Loss: symmetric cross-entropy with
labels arange(4): (CE(logits_per_image) + CE(logits_per_text)) / 2.

Optimizer (CLIP recipe): AdamW(lr 5e-4, beta1 0.9, beta2 0.98, epsilon 1e-6, weight_decay 0.2) on
tensors of ndim >= 2 only (apply_decay_param_fun on p.name): no decay on biases, LayerNorm,
class_embedding or logit_scale; grad_clip=ClipGradByGlobalNorm(1.0).
Weights: person A's init (paddle.seed(0)): matrices and embeddings N(0, 0.1), class_embedding
N(0, 0.1), LayerNorm scales 1 + N(0, 0.1), biases N(0, 0.1), logit_scale log(1 / 0.07).

PADIFF_BUG (this side only):
  paddle_scale_decay -> the decay set built as `len(p.shape) != 1` ("skip the vectors: biases and
              norms"): the 0-d logit_scale (shape []) is not a vector, so AdamW decays it
"""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_scale_decay"} | {"text_mlp_drop", "one_direction"}  # the torch side's, ignored here
IMG, PATCH, WIDTH, HEADS, MLP, EMBED = 16, 4, 32, 4, 64, 24
VOCAB, CTX, EOT = 64, 8, 63
BATCH = 4
P_DROP = 0.1
LR, BETA1, BETA2, EPS, WD, CLIP = 5e-4, 0.9, 0.98, 1e-6, 0.2, 1.0
INIT_SCALE = math.log(1 / 0.07)

_rng = np.random.default_rng(24)
IMAGES = _rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")
TEXT = np.zeros((BATCH, CTX), "int64")
for _b, _n in enumerate((8, 6, 5, 7)):
    TEXT[_b, :_n - 1] = _rng.integers(1, EOT, _n - 1)
    TEXT[_b, _n - 1] = EOT


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(WIDTH)
        self.attn = nn.MultiHeadAttention(WIDTH, HEADS, bias_attr=False)
        self.drop1 = nn.Dropout(P_DROP)
        self.norm2 = nn.LayerNorm(WIDTH)
        self.fc1 = nn.Linear(WIDTH, MLP)
        self.fc2 = nn.Linear(MLP, WIDTH)
        self.drop2 = nn.Dropout(P_DROP)

    def forward(self, x, attn_mask=None):
        h = self.norm1(x)
        x = x + self.drop1(self.attn(h, h, h, attn_mask=attn_mask))
        return x + self.drop2(self.fc2(F.gelu(self.fc1(self.norm2(x)))))


class VisionTower(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(3, WIDTH, PATCH, stride=PATCH, bias_attr=False)
        n = (IMG // PATCH) ** 2 + 1
        self.class_embedding = self.create_parameter([WIDTH])
        self.positional_embedding = self.create_parameter([n, WIDTH])
        self.ln_pre = nn.LayerNorm(WIDTH)
        self.block = Block()
        self.ln_post = nn.LayerNorm(WIDTH)
        self.proj = self.create_parameter([WIDTH, EMBED])

    def forward(self, image):
        x = self.conv1(image).flatten(2).transpose([0, 2, 1])  # [B, 16, W]
        cls = self.class_embedding.reshape([1, 1, WIDTH]).expand([x.shape[0], 1, WIDTH])
        x = paddle.concat([cls, x], axis=1) + self.positional_embedding
        x = self.block(self.ln_pre(x))
        return paddle.matmul(self.ln_post(x[:, 0]), self.proj)


class TextTower(nn.Layer):
    def __init__(self):
        super().__init__()
        self.token_embedding = nn.Embedding(VOCAB, WIDTH)
        self.positional_embedding = self.create_parameter([CTX, WIDTH])
        self.emb_drop = nn.Dropout(P_DROP)
        self.block = Block()
        self.ln_final = nn.LayerNorm(WIDTH)
        self.text_proj = self.create_parameter([WIDTH, EMBED])

    def forward(self, text):
        t = text.shape[1]
        x = self.emb_drop(self.token_embedding(text) + self.positional_embedding[:t])
        mask = paddle.triu(paddle.full([t, t], float("-inf"), dtype=x.dtype), diagonal=1)
        x = self.ln_final(self.block(x, attn_mask=mask))
        eot = paddle.argmax(text, axis=-1)
        pooled = paddle.gather_nd(x, paddle.stack([paddle.arange(x.shape[0], dtype="int64"), eot], axis=1))
        return paddle.matmul(pooled, self.text_proj)


class TinyCLIP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.visual = VisionTower()
        self.text = TextTower()
        self.logit_scale = self.create_parameter(
            [], default_initializer=nn.initializer.Constant(INIT_SCALE))

    def forward(self, image, text):
        img = F.normalize(self.visual(image), axis=-1)
        txt = F.normalize(self.text(text), axis=-1)
        scale = paddle.clip(self.logit_scale.exp(), max=100.0)
        logits_per_image = scale * paddle.matmul(img, txt, transpose_y=True)
        return logits_per_image, logits_per_image.t()


def _init(m):
    paddle.seed(0)
    for name, p in m.named_parameters():
        if name == "logit_scale":
            continue
        if p.ndim >= 2 or name.endswith(("class_embedding", "bias")):
            v = paddle.normal(0.0, 0.1, p.shape)
        else:  # LayerNorm scales
            v = 1.0 + paddle.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype(p.dtype))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = TinyCLIP()
    _init(m)
    m.train()
    return m


def inputs():
    return (paddle.to_tensor(IMAGES), paddle.to_tensor(TEXT)), {}


def loss(output):
    logits_per_image, logits_per_text = output
    labels = paddle.arange(logits_per_image.shape[0], dtype="int64")
    return (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    if bug(BUGS) == "paddle_scale_decay":
        decay = {p.name for p in params if len(p.shape) != 1}  # "no decay on vectors": the 0-d scale slips in
    else:
        decay = {p.name for p in params if p.ndim >= 2}
    return paddle.optimizer.AdamW(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params,
                                  weight_decay=WD, apply_decay_param_fun=lambda name: name in decay,
                                  grad_clip=paddle.nn.ClipGradByGlobalNorm(CLIP))
