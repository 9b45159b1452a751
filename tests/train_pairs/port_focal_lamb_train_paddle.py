"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny dense
(RetinaNet-style, one anchor per location) detector head on a small CNN trunk, trained 3 steps with
sigmoid focal loss + smooth-L1 box regression and the LAMB optimizer.

    FocalDetector: registers backbone, head; calls backbone, head
    Backbone: conv1 (Conv2D 3 -> 8, 3x3, padding 1, no bias), bn1 (BatchNorm2D, momentum 0.9,
        epsilon 1e-5), conv2 (Conv2D 8 -> 16, 3x3, stride 2, padding 1, no bias), bn2; F.relu after
        each BatchNorm (functional: no module call)
    DenseHead: tower (Conv2D 16 -> 16, 3x3, padding 1), F.relu, dropout (nn.Dropout, p 0.1),
        cls_pred (Conv2D 16 -> 3, 1x1), box_pred (Conv2D 16 -> 4, 1x1); both predictions moved from
        NCHW to [B, H*W, K] with paddle.transpose + reshape
    forward(images [4, 3, 16, 16]) -> (class logits [4, 64, 3], box deltas [4, 64, 4])
model.train(): BatchNorm uses batch statistics, dropout active.

Data: inputs(step): a new batch from default_rng(7500 + step): images N(0, 1), per-location
multi-label class targets (about 1 location in 5 positive, each positive with 1 or 2 of the 3
classes; every other location background) and box-delta targets N(0, 0.5) (kept for loss()).
Loss: F.sigmoid_focal_loss(logits, targets, normalizer=num_pos, alpha 0.25, gamma 2, reduction sum)
+ smooth-L1 (beta 1/9, written out with paddle.where) summed over the positive locations' 4 deltas
(a 0/1 mask), / num_pos; num_pos = the number of positive locations (max 1).
Optimizer: paddle.optimizer.Lamb(learning_rate 5e-3, lamb_weight_decay 0.01, beta1 0.9, beta2 0.999,
epsilon 1e-6, exclude_from_weight_decay_fn = 1-D tensors (biases, BatchNorm scales/shifts));
always_adapt False (paddle's default): the excluded tensors also skip the trust ratio (a plain
bias-corrected Adam step); no schedule, no clipping.
Init: paddle.seed(75), paddle's default conv init; then (numpy default_rng(75)) conv biases
N(0, 0.1), BatchNorm weight 1 + N(0, 0.1), bias N(0, 0.1), running mean N(0, 0.1), running
variance 1 + |N(0, 0.2)|; the class bias at the focal prior -log(99) + N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_huber_delta -> the box term with paddle's built-in F.smooth_l1_loss(..., delta=1/9):
              paddle's "delta" is the Huber threshold (0.5 d^2 below delta, delta * (|d| - delta/2)
              above), i.e. delta x torch's smooth_l1(beta=delta): the box term is 1/9 as large
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_huber_delta"} | {"torch_bn_decayed", "torch_head_drop_default"}  # torch side's, ignored
BATCH, IMG, N_CLS, FEAT = 4, 16, 3, 16
LR, BETA1, BETA2, EPS, WD = 5e-3, 0.9, 0.999, 1e-6, 0.01
ALPHA, GAMMA, BETA_BOX, HEAD_DROP = 0.25, 2.0, 1.0 / 9.0, 0.1

_BATCH = {}


def detection_batch(step):
    """Images and per-location targets (numpy): the same numbers on both sides."""
    rng = np.random.default_rng(7500 + step)
    images = rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")
    hw = (IMG // 2) ** 2
    pos = rng.random((BATCH, hw)) < 0.2
    cls_t = np.zeros((BATCH, hw, N_CLS), "float32")
    first = rng.integers(0, N_CLS, (BATCH, hw))
    second = rng.integers(0, N_CLS, (BATCH, hw))
    two = rng.random((BATCH, hw)) < 0.3
    for b in range(BATCH):
        for i in range(hw):
            if pos[b, i]:
                cls_t[b, i, first[b, i]] = 1.0
                if two[b, i]:
                    cls_t[b, i, second[b, i]] = 1.0
    box_t = (rng.standard_normal((BATCH, hw, 4)) * 0.5).astype("float32")
    return images, cls_t, box_t, pos


class Backbone(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(3, 8, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(8, momentum=0.9, epsilon=1e-5)
        self.conv2 = nn.Conv2D(8, FEAT, 3, stride=2, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(FEAT, momentum=0.9, epsilon=1e-5)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(x)))


class DenseHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.tower = nn.Conv2D(FEAT, FEAT, 3, padding=1)
        self.dropout = nn.Dropout(HEAD_DROP)
        self.cls_pred = nn.Conv2D(FEAT, N_CLS, 1)
        self.box_pred = nn.Conv2D(FEAT, 4, 1)

    @staticmethod
    def _flat(x):
        b, k = x.shape[0], x.shape[1]
        return paddle.transpose(x, [0, 2, 3, 1]).reshape([b, -1, k])

    def forward(self, feat):
        h = self.dropout(F.relu(self.tower(feat)))
        return self._flat(self.cls_pred(h)), self._flat(self.box_pred(h))


class FocalDetector(nn.Layer):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.head = DenseHead()

    def forward(self, images):
        return self.head(self.backbone(images))


def _init(m):
    rng = np.random.default_rng(75)
    for _, sub in m.named_sublayers():
        if isinstance(sub, nn.Conv2D) and sub.bias is not None:
            sub.bias.set_value(rng.normal(0.0, 0.1, sub.bias.shape).astype("float32"))
        if isinstance(sub, nn.BatchNorm2D):
            c = sub.weight.shape[0]
            sub.weight.set_value((1.0 + rng.normal(0.0, 0.1, c)).astype("float32"))
            sub.bias.set_value(rng.normal(0.0, 0.1, c).astype("float32"))
            sub._mean.set_value(rng.normal(0.0, 0.1, c).astype("float32"))
            sub._variance.set_value((1.0 + np.abs(rng.normal(0.0, 0.2, c))).astype("float32"))
    prior = -np.log(99.0) + rng.normal(0.0, 0.1, N_CLS)
    m.head.cls_pred.bias.set_value(prior.astype("float32"))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(75)
    m = FocalDetector()
    _init(m)
    m.train()
    return m


def inputs(step=0):
    images, cls_t, box_t, pos = detection_batch(step)
    _BATCH.update(cls_t=cls_t, box_t=box_t, pos=pos.astype("float32"))
    return (paddle.to_tensor(images),), {}


def loss(output):
    cls_logits, box = output
    dt = cls_logits.dtype
    cls_t = paddle.to_tensor(_BATCH["cls_t"]).astype(dt)
    box_t = paddle.to_tensor(_BATCH["box_t"]).astype(dt)
    pos = paddle.to_tensor(_BATCH["pos"]).astype(dt)
    num_pos = paddle.clip(pos.sum(), min=1.0)

    cls_loss = F.sigmoid_focal_loss(cls_logits, cls_t, normalizer=num_pos.reshape([1]), alpha=ALPHA,
                                    gamma=GAMMA, reduction="sum").reshape([])
    if bug(BUGS) == "paddle_huber_delta":
        per = F.smooth_l1_loss(box, box_t, reduction="none", delta=BETA_BOX)
    else:
        d = paddle.abs(box - box_t)
        per = paddle.where(d < BETA_BOX, 0.5 * d * d / BETA_BOX, d - 0.5 * BETA_BOX)
    box_loss = (per * pos.unsqueeze(-1)).sum() / num_pos
    return cls_loss + box_loss


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    return paddle.optimizer.Lamb(learning_rate=LR, lamb_weight_decay=WD, beta1=BETA1, beta2=BETA2, epsilon=EPS,
                                 parameters=params, exclude_from_weight_decay_fn=lambda p: len(p.shape) == 1)
