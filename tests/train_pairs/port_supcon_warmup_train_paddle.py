"""Hand-written port in TRAINING mode, paddle side (written by "person A"): supervised contrastive
learning (SupCon, Khosla et al. 2020) on small feature vectors, 3 steps, a new batch every step.

    SupConMLP: registers head (ProjHead) first, then encoder (Encoder); calls encoder, head,
        then F.normalize(axis=1) (functional: no module call)
    Encoder: lin1 (Linear 16 -> 32, bias_attr=False), norm1 (BatchNorm1D 32, momentum 0.9),
        lin2 (Linear 32 -> 32); relu functional: lin1, norm1, relu, lin2, relu
    ProjHead: fc_in (Linear 32 -> 32, bias_attr=False), bn (BatchNorm1D 32, momentum 0.9), fc_out
        (Linear 32 -> 16); relu functional: fc_in, bn, relu, fc_out
    forward(x [16, 16]) -> z [16, 16], rows of unit L2 norm

Data: inputs(step): 8 base samples from default_rng(3905 + step) (4 classes; class prototypes
from default_rng(3900)), two augmented views each (random per-feature scaling, additive noise,
feature masking); the model sees the views stacked [view 1 of all 8; view 2 of all 8] (the
SupContrast torch.cat(torch.unbind(features, dim=1)) order); labels kept for loss().
Loss (SupContrast's SupConLoss, contrast_mode "all"): logits = z z^T / T (T 0.1), row max
subtracted (detached), self-contrast removed by logits_mask = 1 - I from the denominator and from
the positives; positives = same label (mask tiled over both views);
loss = -(T / base_T) * mean over anchors of (sum over positives of log_prob) / (#positives),
base_T = T (factor 1).
Optimizer: Momentum(momentum 0.9, use_nesterov=True, weight_decay=5e-4: L2 added to the gradient
of every parameter) with learning_rate = LinearWarmup(CosineAnnealingDecay(0.2, T_max=8),
warmup_steps=2, start_lr=0.02, end_lr=0.2): lr 0.02, 0.11, 0.2 for updates 1..3 (then cosine
0.1924, 0.1707, ...); optimizer() returns (optimizer, scheduler), stepped after every update.
Init: paddle.seed(0), paddle's default Linear weights; Linear biases N(0, 0.1); BatchNorm weight
1 + N(0, 0.1), bias N(0, 0.1), running mean N(0, 0.1), running variance 1 + U(0, 0.5)
(trained-looking).

PADIFF_BUG (this side only):
  paddle_head_bn_momentum -> the projection head's BatchNorm1D built with momentum=0.1 (the torch /
              paper value copied; paddle's momentum weighs the OLD running statistic, so the head's
              running stats move 90 % of the way to each batch statistic instead of 10 %)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_head_bn_momentum"} | {"torch_self_contrast", "torch_wd_skip_1d"}  # the torch side's, ignored here
N_BASE, N_CLS, D_IN, D_HID, D_PROJ = 8, 4, 16, 32, 16
TEMPERATURE, BASE_TEMPERATURE = 0.1, 0.1
LR, WARMUP_LR, WARMUP, TOTAL = 0.2, 0.02, 2, 10
MOMENTUM, WD = 0.9, 5e-4

_BATCH = {}


def two_views(step):
    """numpy: views [2 * N_BASE, D_IN] ([view 1 of all; view 2 of all]) and labels [N_BASE]."""
    protos = np.random.default_rng(3900).normal(0.0, 1.0, (N_CLS, D_IN))
    rng = np.random.default_rng(3905 + step)
    labels = rng.permutation(np.arange(N_BASE) % N_CLS)
    base = protos[labels] + rng.normal(0.0, 0.6, (N_BASE, D_IN))
    views = []
    for _ in range(2):  # augmentation: per-feature scaling, noise, random feature masking
        scale = rng.uniform(0.7, 1.3, (N_BASE, D_IN))
        keep = rng.random((N_BASE, D_IN)) >= 0.15
        views.append(base * scale * keep + rng.normal(0.0, 0.2, (N_BASE, D_IN)))
    return np.concatenate(views, 0).astype("float32"), labels.astype("int64")


class Encoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin1 = nn.Linear(D_IN, D_HID, bias_attr=False)
        self.norm1 = nn.BatchNorm1D(D_HID, momentum=0.9, epsilon=1e-5)
        self.lin2 = nn.Linear(D_HID, D_HID)

    def forward(self, x):
        h = F.relu(self.norm1(self.lin1(x)))
        return F.relu(self.lin2(h))


class ProjHead(nn.Layer):
    def __init__(self, momentum=0.9):
        super().__init__()
        self.fc_in = nn.Linear(D_HID, D_HID, bias_attr=False)
        self.bn = nn.BatchNorm1D(D_HID, momentum=momentum, epsilon=1e-5)
        self.fc_out = nn.Linear(D_HID, D_PROJ)

    def forward(self, h):
        return self.fc_out(F.relu(self.bn(self.fc_in(h))))


class SupConMLP(nn.Layer):
    def __init__(self, head_momentum=0.9):
        super().__init__()
        self.head = ProjHead(head_momentum)
        self.encoder = Encoder()

    def forward(self, x):
        return F.normalize(self.head(self.encoder(x)), p=2, axis=1)


def model():
    b = bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = SupConMLP(head_momentum=0.1 if b == "paddle_head_bn_momentum" else 0.9)
    for bn in (m.encoder.norm1, m.head.bn):
        c = bn.weight.shape[0]
        bn.weight.set_value(1.0 + paddle.normal(0.0, 0.1, [c]))
        bn.bias.set_value(paddle.normal(0.0, 0.1, [c]))
        bn._mean.set_value(paddle.normal(0.0, 0.1, [c]))
        bn._variance.set_value(1.0 + paddle.uniform([c], min=0.0, max=0.5))
    for lin in (m.encoder.lin2, m.head.fc_out):
        lin.bias.set_value(paddle.normal(0.0, 0.1, lin.bias.shape))
    m.train()
    return m


def inputs(step=0):
    x, labels = two_views(step)
    _BATCH["labels"] = labels
    return (paddle.to_tensor(x),), {}


def loss(output):
    feats = output
    dt = feats.dtype
    n = feats.shape[0]
    lab = paddle.to_tensor(np.tile(_BATCH["labels"], 2)).reshape([-1, 1])
    mask = paddle.equal(lab, lab.T).astype(dt)
    logits = paddle.matmul(feats, feats, transpose_y=True) / TEMPERATURE
    logits = logits - logits.max(axis=1, keepdim=True).detach()
    logits_mask = 1.0 - paddle.eye(n, dtype=dt)
    mask = mask * logits_mask
    exp_logits = paddle.exp(logits) * logits_mask
    log_prob = logits - paddle.log(exp_logits.sum(axis=1, keepdim=True))
    mean_log_prob_pos = (mask * log_prob).sum(axis=1) / mask.sum(axis=1)
    return (-(TEMPERATURE / BASE_TEMPERATURE) * mean_log_prob_pos).mean()


def optimizer(model):
    cosine = paddle.optimizer.lr.CosineAnnealingDecay(learning_rate=LR, T_max=TOTAL - WARMUP)
    sched = paddle.optimizer.lr.LinearWarmup(learning_rate=cosine, warmup_steps=WARMUP, start_lr=WARMUP_LR, end_lr=LR)
    params = [p for p in model.parameters() if not p.stop_gradient]
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, parameters=params,
                                    use_nesterov=True, weight_decay=WD)
    return opt, sched
