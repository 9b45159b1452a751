"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a small MLP
classifier with input and hidden dropout, trained 3 steps with cross-entropy, an L1 penalty on the
weight matrices through paddle's regularizer, Momentum and cosine annealing with warm restarts.

    MLPClassifier: registers in_drop (Dropout 0.2), fc1 (Linear 12 -> 32), ln1 (LayerNorm 32),
        drop1 (Dropout 0.3), fc2 (Linear 32 -> 32), drop2 (Dropout 0.3), out (Linear 32 -> 5);
        forward: in_drop -> fc1 -> ln1 -> relu -> drop1 -> fc2 -> relu -> drop2 -> out
        (F.relu functional); returns (logits [16, 5], l1 = sum |w| over the three weight matrices,
        computed under paddle.no_grad(): a number to log, no gradient)
Batch 16 per step from default_rng(9650 + step): features N(0, 1) [16, 12], labels in 0..4 from a
fixed linear teacher plus noise; model.train().

L1 penalty: lambda = 5e-4 on the three weight matrices only (fc1, fc2, out), given as
weight_attr=ParamAttr(regularizer=L1Decay(5e-4)): the optimizer adds lambda * sign(w) to those
gradients inside step() (the recorded .grad after backward does not contain it); biases and
LayerNorm parameters carry no regularizer and the optimizer has no weight_decay.
loss(): F.cross_entropy(logits, labels) (mean) + lambda * l1 (the forward's detached sum |w|):
the reported number is the regularised objective (as the reference logs it); its gradient comes
from L1Decay inside the optimizer, not from backward.
Optimizer: Momentum(momentum 0.9, no Nesterov) driven by CosineAnnealingWarmRestarts(learning_rate
0.1, T_0=2, T_mult=1, eta_min 0.01), stepped once per update: lr 0.1, 0.055, 0.1 (restart) for
updates 1..3 (paddle's scheduler steps once in its constructor: T_cur 0 at update 1).
Init: paddle.seed(0); linear weights N(0, 0.3), biases N(0, 0.1), LayerNorm weight 1 + N(0, 0.1),
bias N(0, 0.1) (_train_common.randomize_paddle).

PADIFF_BUG (this side only):
  paddle_l1_everywhere -> the optimizer is ALSO given weight_decay=L1Decay(5e-4): the weights keep
              their ParamAttr regularizer (a ParamAttr regularizer takes precedence, paddle logs
              so), but every other parameter (biases, LayerNorm weight and bias) is now
              L1-decayed too
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug, randomize_paddle
from paddle import nn

BUGS = {"paddle_l1_everywhere"} | {"torch_l1_all_params", "torch_input_dropout_p"}  # torch side's, ignored here
N_IN, HIDDEN, N_CLS, BATCH = 12, 32, 5, 16
IN_DROP, HID_DROP = 0.2, 0.3
L1, LR, T0, ETA_MIN, MOMENTUM = 5e-4, 0.1, 2, 0.01, 0.9

_LABELS = {}


def batch(step):
    rng = np.random.default_rng(9650 + step)
    x = rng.standard_normal((BATCH, N_IN)).astype("float32")
    teacher = np.cos(np.arange(N_IN)[:, None] * (np.arange(N_CLS)[None, :] + 1.0))  # [12, 5]
    y = np.argmax(x @ teacher + 0.5 * rng.standard_normal((BATCH, N_CLS)), axis=1).astype("int64")
    return x, y


def _l1_attr():
    return paddle.ParamAttr(regularizer=paddle.regularizer.L1Decay(L1))


class MLPClassifier(nn.Layer):
    def __init__(self):
        super().__init__()
        self.in_drop = nn.Dropout(IN_DROP)
        self.fc1 = nn.Linear(N_IN, HIDDEN, weight_attr=_l1_attr())
        self.ln1 = nn.LayerNorm(HIDDEN)
        self.drop1 = nn.Dropout(HID_DROP)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN, weight_attr=_l1_attr())
        self.drop2 = nn.Dropout(HID_DROP)
        self.out = nn.Linear(HIDDEN, N_CLS, weight_attr=_l1_attr())

    def forward(self, x):
        h = self.drop1(F.relu(self.ln1(self.fc1(self.in_drop(x)))))
        h = self.drop2(F.relu(self.fc2(h)))
        with paddle.no_grad():  # logged only: L1Decay supplies the gradient
            l1 = paddle.add_n([paddle.abs(w).sum() for w in (self.fc1.weight, self.fc2.weight, self.out.weight)])
        return self.out(h), l1


def model():
    bug(BUGS)
    paddle.seed(0)
    m = MLPClassifier()
    randomize_paddle(m, std=0.3, seed=0)
    m.train()
    return m


def inputs(step=0):
    x, y = batch(step)
    _LABELS["y"] = y
    return (paddle.to_tensor(x),), {}


def loss(output):
    logits, l1 = output
    return F.cross_entropy(logits, paddle.to_tensor(_LABELS["y"])) + L1 * l1


def optimizer(model):
    sched = paddle.optimizer.lr.CosineAnnealingWarmRestarts(learning_rate=LR, T_0=T0, T_mult=1, eta_min=ETA_MIN)
    extra = {"weight_decay": paddle.regularizer.L1Decay(L1)} if bug(BUGS) == "paddle_l1_everywhere" else {}
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, parameters=model.parameters(), **extra)
    return opt, sched
