"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a multi-task model
(shared trunk, classification head, box-regression head) trained with online hard example mining
(OHEM), 3 steps, Adam with global-norm gradient clipping.

    MultiTaskNet: registers trunk (SharedTrunk: fc_in Linear 10 -> 32, norm LayerNorm(32), fc_mid
        Linear 32 -> 32; relu and dropout functional, F.dropout p 0.1 after the normalised first
        layer and p 0.2 after the second), then reg_head (Linear 32 -> 4), then cls_head
        (Linear 32 -> 5); calls trunk, cls_head, reg_head
    forward(feats) -> (logits [16, 5], deltas [16, 4])

Data: inputs(step): 16 samples from default_rng(3350 + step): features N(0, 1) [16, 10], class
labels in 0..4, box-regression targets N(0, 0.5) [16, 4] (kept by the spec for loss()).
Loss (OHEM): per-sample cross entropy (reduction "none"); the K = 8 hardest samples (paddle.topk of
the per-sample losses) are kept: cls = mean of their losses; the regression loss is taken on the
same hard samples (paddle.gather of the deltas and targets): paddle's F.smooth_l1_loss with
delta 0.5 (paddle's smooth_l1_loss is the Huber loss: 0.5 z^2 below delta, delta (|z| - delta / 2)
above), mean over the elements; loss = cls + 2.0 * reg.
Optimizer: Adam(learning_rate 2e-3, beta1 0.9, beta2 0.999, epsilon 1e-8),
grad_clip=ClipGradByGlobalNorm(1.0).
Init (person A): paddle.seed(35), Linear weights XavierNormal, biases N(0, 0.1), LayerNorm scale
N(1, 0.1), shift N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_second_dropout -> copy-paste slip in SharedTrunk.forward: the second F.dropout call
                           also uses P_IN (0.1) instead of P_OUT (0.2)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_second_dropout"} | {"torch_clip_per_module", "torch_smooth_l1_beta"}  # the torch side's, ignored here
N, IN_DIM, HID, N_CLS, N_BOX = 16, 10, 32, 5, 4
P_IN, P_OUT = 0.1, 0.2
HARD_K, REG_W, HUBER_DELTA = 8, 2.0, 0.5
LR, CLIP = 2e-3, 1.0

_TARGETS = {}


def sample(step):
    rng = np.random.default_rng(3350 + step)
    feats = rng.standard_normal((N, IN_DIM)).astype("float32")
    labels = rng.integers(0, N_CLS, N).astype("int64")
    boxes = (0.5 * rng.standard_normal((N, N_BOX))).astype("float32")
    return feats, labels, boxes


def _attrs():
    w = paddle.ParamAttr(initializer=nn.initializer.XavierNormal())
    b = paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.1))
    return w, b


class SharedTrunk(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(IN_DIM, HID, *_attrs())
        self.norm = nn.LayerNorm(HID, weight_attr=paddle.ParamAttr(initializer=nn.initializer.Normal(1.0, 0.1)),
                                 bias_attr=paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.1)))
        self.fc_mid = nn.Linear(HID, HID, *_attrs())
        self._copy_paste = bug(BUGS) == "paddle_second_dropout"

    def forward(self, x):
        h = F.relu(self.norm(self.fc_in(x)))
        h = F.dropout(h, p=P_IN, training=self.training)
        h = F.relu(self.fc_mid(h))
        return F.dropout(h, p=P_IN if self._copy_paste else P_OUT, training=self.training)


class MultiTaskNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.trunk = SharedTrunk()
        self.reg_head = nn.Linear(HID, N_BOX, *_attrs())
        self.cls_head = nn.Linear(HID, N_CLS, *_attrs())

    def forward(self, feats):
        h = self.trunk(feats)
        return self.cls_head(h), self.reg_head(h)


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(35)
    m = MultiTaskNet()
    m.train()
    return m


def inputs(step=0):
    feats, labels, boxes = sample(step)
    _TARGETS.update(labels=labels, boxes=boxes)
    return (paddle.to_tensor(feats),), {}


def loss(output):
    logits, deltas = output
    labels = paddle.to_tensor(_TARGETS["labels"])
    boxes = paddle.to_tensor(_TARGETS["boxes"]).astype(deltas.dtype)
    per_sample = F.cross_entropy(logits, labels, reduction="none")  # [16]
    hard_loss, hard_idx = paddle.topk(per_sample, k=HARD_K)
    cls_loss = hard_loss.mean()
    reg_loss = F.smooth_l1_loss(paddle.gather(deltas, hard_idx), paddle.gather(boxes, hard_idx),
                                reduction="mean", delta=HUBER_DELTA)
    return cls_loss + REG_W * reg_loss


def optimizer(model):
    return paddle.optimizer.Adam(learning_rate=LR, beta1=0.9, beta2=0.999, epsilon=1e-8,
                                 parameters=model.parameters(), grad_clip=nn.ClipGradByGlobalNorm(CLIP))
