"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a mixture density
network (K = 3 diagonal Gaussians on a 2-D target) trained with the mixture negative
log-likelihood, Adam with coupled L2 weight decay and global-norm clipping, 3 steps, a new batch
each step.

    MDN: registers hidden1 (Linear 4 -> 32), hidden2 (Linear 32 -> 32), dropout_hidden
        (nn.Dropout(0.1)), dropout_feat (nn.Dropout(0.2)), logit_head (Linear 32 -> 3), mean_head
        (Linear 32 -> 6), scale_head (Linear 32 -> 6: log-sigmas); tanh functional (paddle.tanh)
    forward(x [16, 4]): h = dropout_hidden(tanh(hidden1(x))); h = dropout_feat(tanh(hidden2(h)));
        -> (logits [16, 3], means [16, 3, 2], log_sigmas [16, 3, 2])

Loss (inline in loss()): log_pi = log_softmax(logits); per component
log N(y | mu, sigma) = sum_d [-0.5 ((y - mu) / sigma)^2 - log sigma - 0.5 log 2 pi], sigma =
exp(log_sigma); NLL = -mean_b logsumexp_k(log_pi + log N).
Optimizer: paddle.optimizer.Adam(learning_rate 2e-3, epsilon 1e-8,
weight_decay=L2Decay(5e-3) (coupled: 5e-3 * w added to the gradient after clipping),
grad_clip=ClipGradByGlobalNorm(1.0)).
Init: paddle.seed(4523); Linear weights N(0, 1/sqrt(fan_in)) (x 0.5 for the heads), biases N(0, 0.1),
the log-sigma head's bias -0.7 + N(0, 0.1) (trained-looking, non-identity).

PADIFF_BUG (this side only):
  paddle_drop_swapped   -> the two dropout rates swapped when the layers are built
              (dropout_hidden p 0.2, dropout_feat p 0.1)
  paddle_adamw_decoupled -> paddle.optimizer.AdamW(weight_decay=5e-3): decoupled decay
              (w -= lr * 5e-3 * w, every parameter) instead of Adam's coupled L2
"""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_drop_swapped", "paddle_adamw_decoupled"} | {"torch_softplus_scale"}  # the torch side's, ignored here
IN_DIM, HIDDEN, K, D, BATCH = 4, 32, 3, 2, 16
P_HIDDEN, P_FEAT = 0.1, 0.2
LR, EPS, L2, MAX_NORM = 2e-3, 1e-8, 5e-3, 1.0

_TARGETS = {}


def sample(step):
    """x [16, 4] and a multi-modal 2-D target y [16, 2] (numpy), the same on both sides."""
    rng = np.random.default_rng(4520 + step)
    x = rng.standard_normal((BATCH, IN_DIM))
    branch = rng.integers(0, K, BATCH)
    centre = np.stack([np.sin(x[:, 0] + 2.0 * branch), (branch - 1.0) * np.cos(x[:, 1]) + 0.3 * x[:, 2]], -1)
    y = centre + 0.15 * rng.standard_normal((BATCH, D))
    return x.astype("float32"), y.astype("float32")


class MDN(nn.Layer):
    def __init__(self, p_hidden=P_HIDDEN, p_feat=P_FEAT):
        super().__init__()
        self.hidden1 = nn.Linear(IN_DIM, HIDDEN)
        self.hidden2 = nn.Linear(HIDDEN, HIDDEN)
        self.dropout_hidden = nn.Dropout(p_hidden)
        self.dropout_feat = nn.Dropout(p_feat)
        self.logit_head = nn.Linear(HIDDEN, K)
        self.mean_head = nn.Linear(HIDDEN, K * D)
        self.scale_head = nn.Linear(HIDDEN, K * D)

    def forward(self, x):
        h = self.dropout_hidden(paddle.tanh(self.hidden1(x)))
        h = self.dropout_feat(paddle.tanh(self.hidden2(h)))
        return (self.logit_head(h), self.mean_head(h).reshape([-1, K, D]),
                self.scale_head(h).reshape([-1, K, D]))


def _init(m):
    paddle.seed(4523)
    for name, p in m.named_parameters():
        if p.ndim == 2:
            gain = 0.5 if "head" in name else 1.0
            v = paddle.normal(0.0, gain / math.sqrt(p.shape[0]), p.shape)
        elif name == "scale_head.bias":
            v = -0.7 + paddle.normal(0.0, 0.1, p.shape)
        else:
            v = paddle.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype(p.dtype))


def model():
    b = bug(BUGS)
    m = MDN(P_FEAT, P_HIDDEN) if b == "paddle_drop_swapped" else MDN()
    _init(m)
    m.train()
    return m


def inputs(step=0):
    x, y = sample(step)
    _TARGETS["y"] = y
    return (paddle.to_tensor(x),), {}


def loss(output):
    logits, mu, log_sigma = output
    dt = logits.dtype
    y = paddle.to_tensor(_TARGETS["y"]).astype(dt).unsqueeze(1)  # [B, 1, D]
    log_pi = F.log_softmax(logits, axis=-1)
    z = (y - mu) * paddle.exp(-log_sigma)
    log_comp = (-0.5 * z * z - log_sigma).sum(axis=-1) - 0.5 * D * math.log(2.0 * math.pi)
    return -paddle.logsumexp(log_pi + log_comp, axis=-1).mean()


def optimizer(model):
    clip = paddle.nn.ClipGradByGlobalNorm(MAX_NORM)
    if bug(BUGS) == "paddle_adamw_decoupled":
        return paddle.optimizer.AdamW(learning_rate=LR, epsilon=EPS, parameters=model.parameters(),
                                      weight_decay=L2, grad_clip=clip)
    return paddle.optimizer.Adam(learning_rate=LR, epsilon=EPS, parameters=model.parameters(),
                                 weight_decay=paddle.regularizer.L2Decay(L2), grad_clip=clip)
