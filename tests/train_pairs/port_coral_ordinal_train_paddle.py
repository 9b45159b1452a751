"""Hand-written port in TRAINING mode, paddle side ("person A"): an ordinal regressor with the CORAL
loss (Cao, Mirjalili, Raschka 2020: rank-consistent ordinal regression), K = 5 ordered classes.

    CoralNet: registers lin1 (Linear 12 -> 32), lin2 (Linear 32 -> 32), drop (ONE Dropout 0.2, called
        twice), score (Linear 32 -> 1, no bias: the shared weight vector), cutpoints (a Parameter [4]
        made with create_parameter: the K - 1 threshold biases)
    forward(x) -> logits [B, 4], logits[:, k] = score(h) + cutpoints[k],
        h = drop(relu(lin2(drop(relu(lin1(x))))))

Loss: the K - 1 cumulative binary tasks "label > k" (k = 0..3) with the framework's
F.binary_cross_entropy_with_logits(reduction="none"), summed over the tasks, averaged over the batch
(the CORAL paper's / coral_pytorch's reduction).
Optimizer: Momentum(momentum 0.9, weight_decay 1e-4 (L2, added to the gradient), use_nesterov False)
on StepDecay(0.05, step_size 2, gamma 0.5): lr 0.05, 0.05, 0.025 for updates 1..3.
Init: paddle.seed(4320) (default Linear weights), biases N(0, 0.1), cutpoints decreasing
[1.1, 0.35, -0.3, -1.2] + N(0, 0.05) (numpy default_rng(4321)).
Data: x [16, 12] N(0, 1) per step (default_rng(4330 + step)), labels 0..4 cut from a noisy linear
score of x (the same numbers on both sides).

PADIFF_BUG (this side only):
  paddle_bce_mean -> F.binary_cross_entropy_with_logits(logits, levels) with its default
                 reduction="mean": averaged over the B x (K - 1) elements, not summed over the K - 1
                 tasks - the loss and every gradient 4x smaller (SGD: updates 4x smaller)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_bce_mean"} | {"torch_no_momentum", "torch_dropout_default"}  # the torch side's, ignored here
N_FEAT, HIDDEN, K, BATCH = 12, 32, 5, 16
P_DROP = 0.2
LR, MOMENTUM, WD, STEP_SIZE, GAMMA = 0.05, 0.9, 1e-4, 2, 0.5

_BATCH = {}


def draw(step):
    rng = np.random.default_rng(4330 + step)
    x = rng.standard_normal((BATCH, N_FEAT)).astype("float32")
    w = np.linspace(-1.0, 1.0, N_FEAT)
    score = x @ w / np.sqrt(N_FEAT) * 2.0 + 0.5 * rng.standard_normal(BATCH)
    labels = np.digitize(score, [-1.2, -0.4, 0.4, 1.2]).astype("int64")
    return x, labels


class CoralNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin1 = nn.Linear(N_FEAT, HIDDEN)
        self.lin2 = nn.Linear(HIDDEN, HIDDEN)
        self.drop = nn.Dropout(P_DROP)
        self.score = nn.Linear(HIDDEN, 1, bias_attr=False)
        self.cutpoints = self.create_parameter([K - 1], is_bias=True)

    def forward(self, x):
        h = self.drop(F.relu(self.lin1(x)))
        h = self.drop(F.relu(self.lin2(h)))
        return self.score(h) + self.cutpoints


def model():
    bug(BUGS)
    paddle.seed(4320)
    m = CoralNet()
    rng = np.random.default_rng(4321)
    for layer in (m.lin1, m.lin2):
        layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
    m.cutpoints.set_value((np.array([1.1, 0.35, -0.3, -1.2]) + rng.normal(0.0, 0.05, K - 1)).astype("float32"))
    m.train()
    return m


def inputs(step=0):
    x, labels = draw(step)
    _BATCH["labels"] = labels
    return (paddle.to_tensor(x),), {}


def loss(logits):
    y = paddle.to_tensor(_BATCH["labels"])
    levels = (y.unsqueeze(1) > paddle.arange(K - 1, dtype="int64").unsqueeze(0)).astype(logits.dtype)
    if bug(BUGS) == "paddle_bce_mean":
        return F.binary_cross_entropy_with_logits(logits, levels)
    return F.binary_cross_entropy_with_logits(logits, levels, reduction="none").sum(axis=1).mean()


def optimizer(model):
    sched = paddle.optimizer.lr.StepDecay(LR, step_size=STEP_SIZE, gamma=GAMMA)
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, parameters=model.parameters(),
                                    weight_decay=WD)
    return opt, sched
