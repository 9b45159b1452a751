"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a multi-label
classifier (residual MLP with LayerNorm) trained with the asymmetric loss (ASL, Ridnik et al.
2021, the official AsymmetricLoss code), 3 steps, a new batch every step.

    MultiLabelNet: registers stem (Linear 24 -> 32), layers (LayerList of 2 ResBlock: fc Linear
        32 -> 32, norm LayerNorm(32), drop Dropout(0.2); h + drop(gelu(norm(fc(h)))), F.gelu
        exact), final_norm (LayerNorm(32)), head (Linear 32 -> 6)
    forward(x) -> logits [B, 6]

Data: inputs(step): 16 samples from default_rng(3150 + step): features [16, 24] N(0, 1) (shifted
by the labels so that they are learnable) and multi-hot labels [16, 6] (Bernoulli 0.3).
Loss (ASL, official code): xs_pos = sigmoid(x), xs_neg = clip(1 - xs_pos + 0.05, max=1) (probability
shifting of the negatives, clip 0.05); los = y log(max(xs_pos, 1e-8)) + (1 - y) log(max(xs_neg, 1e-8));
asymmetric focusing with pt = xs_pos y + xs_neg (1 - y), weight (1 - pt) ** (gamma_pos y +
gamma_neg (1 - y)), gamma_pos 1, gamma_neg 4 (gradient through the weight); loss = -sum.
Optimizer: Momentum(momentum 0.9, use_nesterov=True), two parameter groups: weight decay 1e-3
(coupled L2) on the Linear weights, 0 on biases and LayerNorm parameters (selected by the
structured names of named_parameters()); learning rate LinearWarmup(0.1, warmup_steps 4,
start_lr 0.025, end_lr 0.1): 0.025, 0.04375, 0.0625 for updates 1..3.
Init (person A): numpy default_rng(32): matrices N(0, 1/sqrt(fan_in)), biases N(0, 0.1),
LayerNorm scales 1 + N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_focus_unshifted -> the focusing weight of the negatives is computed from the UNSHIFTED
              probability: pt = xs_pos y + (1 - xs_pos)(1 - y), so w_neg = p ** 4 instead of
              max(p - 0.05, 0) ** 4 (the log term still uses the shifted probability)
  paddle_decay_by_pname -> the no-decay group selected with p.name ("linear_0.b_0",
              "layer_norm_0.w_0") instead of the structured name: "bias" never matches, so the
              Linear biases are decayed (LayerNorm parameters still excluded: "layer_norm")
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_focus_unshifted", "paddle_decay_by_pname"} | {"block_drop_default"}  # torch side's, ignored
IN_DIM, DIM, N_LABELS, DEPTH, BATCH = 24, 32, 6, 2, 16
DROP = 0.2
GAMMA_POS, GAMMA_NEG, CLIP, EPS = 1.0, 4.0, 0.05, 1e-8
BASE_LR, START_LR, WARMUP, MOMENTUM, WD = 0.1, 0.025, 4, 0.9, 1e-3

_BATCH = {}


def batch(step):
    rng = np.random.default_rng(3150 + step)
    y = (rng.random((BATCH, N_LABELS)) < 0.3).astype("float32")
    x = rng.standard_normal((BATCH, IN_DIM))
    x[:, :N_LABELS] += 1.5 * (y - 0.3)
    return x.astype("float32"), y


class ResBlock(nn.Layer):
    def __init__(self, dim, drop):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.drop = nn.Dropout(drop)

    def forward(self, h):
        return h + self.drop(F.gelu(self.norm(self.fc(h))))


class MultiLabelNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(IN_DIM, DIM)
        self.layers = nn.LayerList([ResBlock(DIM, DROP) for _ in range(DEPTH)])
        self.final_norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, N_LABELS)

    def forward(self, x):
        h = self.stem(x)
        for layer in self.layers:
            h = layer(h)
        return self.head(self.final_norm(h))


def _init(m):
    rng = np.random.default_rng(32)
    for name, p in m.named_parameters():
        if p.ndim == 2:  # [in, out]
            v = rng.normal(0.0, 1.0 / np.sqrt(p.shape[0]), p.shape)
        elif "norm" in name and name.endswith("weight"):
            v = 1.0 + rng.normal(0.0, 0.1, p.shape)
        else:
            v = rng.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype("float32"))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = MultiLabelNet()
    _init(m)
    m.train()
    return m


def inputs(step=0):
    x, y = batch(step)
    _BATCH["y"] = y
    return (paddle.to_tensor(x),), {}


def loss(output):
    x = output
    y = paddle.to_tensor(_BATCH["y"]).astype(x.dtype)
    xs_pos = F.sigmoid(x)
    xs_neg = 1 - xs_pos
    xs_neg_shift = paddle.clip(xs_neg + CLIP, max=1.0)
    los_pos = y * paddle.log(paddle.clip(xs_pos, min=EPS))
    los_neg = (1 - y) * paddle.log(paddle.clip(xs_neg_shift, min=EPS))
    los = los_pos + los_neg
    if bug(BUGS) == "paddle_focus_unshifted":
        pt = xs_pos * y + xs_neg * (1 - y)
    else:
        pt = xs_pos * y + xs_neg_shift * (1 - y)
    gamma = GAMMA_POS * y + GAMMA_NEG * (1 - y)
    los = los * paddle.pow(1 - pt, gamma)
    return -los.sum()


def optimizer(model):
    if bug(BUGS) == "paddle_decay_by_pname":
        named = [(p.name, p) for p in model.parameters()]
    else:
        named = list(model.named_parameters())
    no_decay = [p for n, p in named if "bias" in n or "norm" in n]
    decay = [p for n, p in named if not ("bias" in n or "norm" in n)]
    sched = paddle.optimizer.lr.LinearWarmup(learning_rate=BASE_LR, warmup_steps=WARMUP, start_lr=START_LR,
                                             end_lr=BASE_LR)
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, use_nesterov=True,
                                    parameters=[{"params": decay, "weight_decay": WD},
                                                {"params": no_decay, "weight_decay": 0.0}])
    return opt, sched
