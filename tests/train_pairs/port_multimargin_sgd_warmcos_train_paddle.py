"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a small MLP classifier
trained 3 steps with the multi-class margin (hinge) loss, SGD with Nesterov momentum and weight
decay, and a linear warm-up + cosine-annealing schedule.

    MarginMLP: registers blocks = LayerList of two HiddenBlock (20 -> 64, dropout 0.3;
        64 -> 32, dropout 0.1), then classifier (Linear 32 -> 5)
    HiddenBlock: fc (Linear), norm (LayerNorm, epsilon 1e-5), drop (Dropout); forward:
        drop(F.relu(norm(fc(x)))) (the activation functional)
Batch 16 of 20 features per step (default_rng(4300 + step)), labels from a fixed random teacher
(argmax of a linear map; the same numpy numbers on both sides). model.train(): dropout on.

Loss: written by hand (paddle person A does not use F.multi_margin_loss): for each sample,
sum over the classes i != y of w[y] * max(0, margin - x[y] + x[i]) (p = 1), divided by the number
of classes C = 5, then the plain mean over the batch; margin 0.5, class weights
w = [1.0, 2.0, 0.5, 1.5, 1.0].
Optimizer: Momentum(learning_rate=LinearWarmup(CosineAnnealingDecay(0.1, T_max=3), warmup_steps=1,
start_lr=0.01, end_lr=0.1), momentum 0.9, use_nesterov=True, weight_decay=1e-3 (L2Decay added to
the gradient)); optimizer() returns (optimizer, scheduler), stepped after every update: lr 0.01,
0.1, 0.075 for updates 1..3 (warm-up of 1 step, then the cosine over the remaining 3 of 4 steps).
Init: paddle.seed(7), paddle's default Linear init; biases N(0, 0.1), LayerNorm weights 1 + N(0, 0.1),
LayerNorm biases N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_weighted_mean -> the batch reduction divides by the sum of the picked class weights,
              sum_n w[y_n] (cross-entropy's weighted mean), instead of the batch size: the
              reference's MultiMarginLoss(weight=...) takes the plain mean
  paddle_warmup_len    -> LinearWarmup(..., warmup_steps=WARMUP + 1): the warm-up length counted
              inclusive of step 0 (off by one): lr 0.01, 0.055, 0.1 for updates 1..3 (the cosine
              starts one update late); update 1 unchanged
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_weighted_mean", "paddle_warmup_len"} | {"torch_dropout_swap"}  # the torch side's, ignored here
BATCH, N_IN, N_CLS = 16, 20, 5
HIDDEN = [(N_IN, 64, 0.3), (64, 32, 0.1)]
MARGIN = 0.5
CLASS_WEIGHTS = np.array([1.0, 2.0, 0.5, 1.5, 1.0], dtype="float32")
LR, WARMUP_LR, WARMUP, TOTAL = 0.1, 0.01, 1, 4
MOMENTUM, WD = 0.9, 1e-3

_LABELS = {}


def batch(step):
    """Features [16, 20] and labels [16] of one step (numpy)."""
    rng = np.random.default_rng(4300 + step)
    x = rng.standard_normal((BATCH, N_IN)).astype("float32")
    teacher = np.random.default_rng(4399).standard_normal((N_IN, N_CLS))
    y = np.argmax(x @ teacher + 0.5 * rng.standard_normal((BATCH, N_CLS)), axis=1).astype("int64")
    return x, y


class HiddenBlock(nn.Layer):
    def __init__(self, d_in, d_out, p):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.norm = nn.LayerNorm(d_out, epsilon=1e-5)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(F.relu(self.norm(self.fc(x))))


class MarginMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([HiddenBlock(a, b, p) for a, b, p in HIDDEN])
        self.classifier = nn.Linear(HIDDEN[-1][1], N_CLS)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.classifier(x)


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(7)
    m = MarginMLP()
    for name, p in m.named_parameters():
        if name.endswith("norm.weight"):
            p.set_value(1.0 + paddle.normal(0.0, 0.1, p.shape))
        elif name.endswith("bias"):
            p.set_value(paddle.normal(0.0, 0.1, p.shape))
    m.train()
    return m


def inputs(step=0):
    x, y = batch(step)
    _LABELS["y"] = y
    return (paddle.to_tensor(x),), {}


def multi_margin(logits, y, margin, weight):
    """sum_{i != y} weight[y] * max(0, margin - x[y] + x[i]) / C per sample (p = 1)."""
    _n, c = logits.shape
    correct = paddle.take_along_axis(logits, y.unsqueeze(1), axis=1)
    hinge = F.relu(margin - correct + logits) * (1.0 - F.one_hot(y, c).astype(logits.dtype))
    w_y = paddle.gather(weight, y)
    per_sample = hinge.sum(axis=1) * w_y / c
    if bug(BUGS) == "paddle_weighted_mean":
        return per_sample.sum() / w_y.sum()
    return per_sample.mean()


def loss(output):
    y = paddle.to_tensor(_LABELS["y"])
    return multi_margin(output, y, MARGIN, paddle.to_tensor(CLASS_WEIGHTS).astype(output.dtype))


def optimizer(model):
    warmup = WARMUP + 1 if bug(BUGS) == "paddle_warmup_len" else WARMUP
    cosine = paddle.optimizer.lr.CosineAnnealingDecay(learning_rate=LR, T_max=TOTAL - WARMUP)
    sched = paddle.optimizer.lr.LinearWarmup(learning_rate=cosine, warmup_steps=warmup, start_lr=WARMUP_LR, end_lr=LR)
    params = [p for p in model.parameters() if not p.stop_gradient]
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, parameters=params,
                                    use_nesterov=True, weight_decay=WD)
    return opt, sched
