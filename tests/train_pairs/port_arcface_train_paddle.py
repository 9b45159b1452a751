"""Hand-written port in TRAINING mode, paddle side (written by "person A", PaddleClas style): ArcFace
(additive angular margin) training of a small face-embedding CNN, 3 steps, one batch per step.

    ArcFaceNet: registers backbone (FaceEmbedder), head (CosineHead)
      FaceEmbedder: stem (ConvBNPReLU 3 -> 8, 3x3, stride 1), stage (ConvBNPReLU 8 -> 16, 3x3,
          stride 2), neck (EmbeddingNeck, insightface's "E" output layer: bn BatchNorm2D(16),
          dropout Dropout 0.2, flatten, fc Linear 256 -> 32, features BatchNorm1D(32))
      ConvBNPReLU: conv (Conv2D, no bias), bn (BatchNorm2D), act (PReLU, one slope per channel)
      CosineHead (PaddleClas ArcMargin without the margin): weight [32, 10] (create_parameter),
          cos = (x / ||x||) @ (W / ||W||_column)
    forward(images [16, 3, 8, 8]) -> cos [16, 10] (cosine of the angle to each class centre)

Data: inputs(step): images N(0, 1) [16, 3, 8, 8] and identities in 0..9 from default_rng(6700 + step)
(the identities kept by the spec for loss()).
Loss (ArcFace, PaddleClas ArcMargin's arithmetic): s 30, m 0.5, easy_margin False:
    sin = sqrt(clip(1 - cos^2, 0, 1)); phi = cos cos(m) - sin sin(m)   (= cos(theta + m))
    phi = where(cos > cos(pi - m), phi, cos - sin(pi - m) m)           (threshold fallback)
    logits = s (onehot phi + (1 - onehot) cos); F.cross_entropy(logits, label)
Optimizer: AdamW(learning_rate 1e-3, beta1 0.9, beta2 0.999, epsilon 1e-8, weight_decay 0.1) with
weight decay on the tensors of ndim >= 2 (conv and fc weights, the class centres) only:
apply_decay_param_fun receives the parameter's .name ("conv2d_0.w_0"), so the set is built from
p.name.
Init (person A): numpy default_rng(2727): conv / fc weights He-normal, class centres N(0, 0.1),
BatchNorm weight 1 + N(0, 0.1), bias N(0, 0.1), running mean N(0, 0.1), running variance
1 + U(0, 0.5), PReLU slopes 0.25 + N(0, 0.05) (trained-looking, not identity).

PADIFF_BUG (this side only):
  paddle_easy_margin  -> easy_margin=True in the loss: phi = where(cos > 0, phi, cos) - targets
              with cos <= 0 get no margin (the reference uses the cos(pi - m) threshold)
  paddle_decay_names  -> the decay set built from the structured names (named_parameters():
              "backbone.stem.conv.weight"), which apply_decay_param_fun never receives: no
              parameter is decayed
"""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_easy_margin", "paddle_decay_names"} | {"torch_no_dropout"}  # the torch side's, ignored here
EMB, N_ID, BATCH, P_DROP = 32, 10, 16, 0.2
SCALE, MARGIN = 30.0, 0.5
LR, BETA1, BETA2, EPS, WD = 1e-3, 0.9, 0.999, 1e-8, 0.1

_BATCH = {}


def batch(step):
    rng = np.random.default_rng(6700 + step)
    images = rng.standard_normal((BATCH, 3, 8, 8)).astype("float32")
    ids = rng.integers(0, N_ID, BATCH).astype("int64")
    return images, ids


class ConvBNPReLU(nn.Layer):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv = nn.Conv2D(c_in, c_out, 3, stride=stride, padding=1, bias_attr=False)
        self.bn = nn.BatchNorm2D(c_out, momentum=0.9, epsilon=1e-5)
        self.act = nn.PReLU(c_out, init=0.25)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class EmbeddingNeck(nn.Layer):
    def __init__(self, channels, spatial, emb, p):
        super().__init__()
        self.bn = nn.BatchNorm2D(channels, momentum=0.9, epsilon=1e-5)
        self.dropout = nn.Dropout(p)
        self.fc = nn.Linear(channels * spatial, emb)
        self.features = nn.BatchNorm1D(emb, momentum=0.9, epsilon=1e-5)

    def forward(self, x):
        x = self.dropout(self.bn(x))
        x = paddle.flatten(x, start_axis=1)
        return self.features(self.fc(x))


class FaceEmbedder(nn.Layer):
    def __init__(self, emb=EMB, p=P_DROP):
        super().__init__()
        self.stem = ConvBNPReLU(3, 8, 1)
        self.stage = ConvBNPReLU(8, 16, 2)
        self.neck = EmbeddingNeck(16, 4 * 4, emb, p)

    def forward(self, x):
        return self.neck(self.stage(self.stem(x)))


class CosineHead(nn.Layer):
    def __init__(self, emb, n_cls):
        super().__init__()
        self.weight = self.create_parameter([emb, n_cls])

    def forward(self, x):
        x_norm = paddle.sqrt(paddle.sum(paddle.square(x), axis=1, keepdim=True))
        w_norm = paddle.sqrt(paddle.sum(paddle.square(self.weight), axis=0, keepdim=True))
        return paddle.matmul(x / x_norm, self.weight / w_norm)


class ArcFaceNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.backbone = FaceEmbedder()
        self.head = CosineHead(EMB, N_ID)

    def forward(self, images):
        return self.head(self.backbone(images))


def _init(m):
    # paddle lists BatchNorm's running statistics (_mean, _variance) among the parameters
    # (stop_gradient True) and names PReLU's slopes _weight
    rng = np.random.default_rng(2727)
    for name, p in m.named_parameters():
        if name == "head.weight":
            v = rng.normal(0.0, 0.1, p.shape)
        elif p.ndim == 4:
            v = rng.normal(0.0, math.sqrt(2.0 / (p.shape[1] * p.shape[2] * p.shape[3])), p.shape)
        elif p.ndim == 2:  # Linear [in, out]
            v = rng.normal(0.0, math.sqrt(2.0 / p.shape[0]), p.shape)
        elif name.endswith("act._weight"):
            v = 0.25 + rng.normal(0.0, 0.05, p.shape)
        elif name.endswith("_variance"):
            v = 1.0 + rng.uniform(0.0, 0.5, p.shape)
        elif name.endswith("weight"):
            v = 1.0 + rng.normal(0.0, 0.1, p.shape)
        else:  # biases, running means
            v = rng.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype("float32"))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = ArcFaceNet()
    _init(m)
    m.train()
    return m


def inputs(step=0):
    images, ids = batch(step)
    _BATCH["label"] = paddle.to_tensor(ids)
    return (paddle.to_tensor(images),), {}


def arc_margin_logits(cos, label, margin=MARGIN, scale=SCALE, easy_margin=False):
    sin = paddle.sqrt(paddle.clip(1.0 - paddle.square(cos), 0.0, 1.0))
    cos_m, sin_m = math.cos(margin), math.sin(margin)
    th, mm = math.cos(math.pi - margin), math.sin(math.pi - margin) * margin
    phi = cos * cos_m - sin * sin_m
    if easy_margin:
        phi = paddle.where(cos > 0, phi, cos)
    else:
        phi = paddle.where(cos > th, phi, cos - mm)
    one_hot = F.one_hot(label, cos.shape[1]).astype(cos.dtype)
    return (one_hot * phi + (1.0 - one_hot) * cos) * scale


def loss(output):
    label = _BATCH["label"]
    logits = arc_margin_logits(output, label, easy_margin=bug(BUGS) == "paddle_easy_margin")
    return F.cross_entropy(logits, label)


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    if bug(BUGS) == "paddle_decay_names":
        decay = {n for n, p in model.named_parameters() if p.ndim >= 2}
    else:
        decay = {p.name for p in params if p.ndim >= 2}
    return paddle.optimizer.AdamW(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params,
                                  weight_decay=WD, apply_decay_param_fun=lambda name: name in decay)
