"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a multi-quantile
regressor (quantiles 0.1 / 0.5 / 0.9) trained with the pinball (quantile) loss, AdamW with
decoupled weight decay and a polynomial-decay learning rate after a linear warmup; 3 steps.

    QuantileRegressor: registers stem (Linear 8 -> 32), blocks (LayerList of 2 ResidualBlock),
        q_heads (LayerList of 3 Linear 32 -> 1, one per quantile), final_norm (LayerNorm 32)
    ResidualBlock: registers norm (LayerNorm 32), fc (Linear 32 -> 32), drop (Dropout);
        forward x + drop(fc(gelu(norm(x)))) (paddle.nn.functional.gelu: no module)
    forward(x) -> concat([head(gelu(final_norm(h))) for head in q_heads], -1): [32, 3]

The model is built with dropout=0.0 (deterministic: the Dropout layers are there, with p 0).
Data: inputs(step): 32 samples from default_rng(4200 + step): x ~ U(-1, 1) [32, 8];
y = sin(2 x0) + 0.5 x1 x2 + (0.2 + 0.3 |x3|) N(0, 1) (heteroscedastic), kept for loss().
Loss (written by hand): e = y[:, None] - pred; mean over batch and quantiles of
max(q e, (q - 1) e).
Optimizer: paddle.optimizer.AdamW(learning_rate=LinearWarmup(PolynomialDecay(0.01,
decay_steps 4, end_lr 1e-4, power 2), warmup_steps 1, start_lr 0.002, end_lr 0.01), beta1 0.9,
beta2 0.999, epsilon 1e-8, weight_decay 0.01 on the 2-D tensors only (apply_decay_param_fun gets
the parameter's .name, so the set is built from p.name)); the scheduler is returned with the
optimizer and stepped after every optimizer step: lr 0.002, 0.01, 0.0056688 for updates 1..3.
Init (person A): paddle.seed(42), paddle's default Linear init; LayerNorm scales 1 + N(0, 0.1),
shifts and Linear biases N(0, 0.1) (numpy default_rng(421)).

PADIFF_BUG (this side only):
  paddle_dropout_default -> QuantileRegressor(QUANTILES) built without dropout=0.0: the
              constructor's default dropout 0.1 is left in both residual blocks
  paddle_decay_names     -> apply_decay_param_fun checks the STRUCTURED names
              (named_parameters(): "stem.weight", ...) while paddle passes it p.name
              ("linear_0.w_0"): nothing matches, no tensor is decayed
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_dropout_default", "paddle_decay_names"} | {"torch_residual_sign"}  # the torch side's, ignored here
IN_DIM, WIDTH, BATCH = 8, 32, 32
QUANTILES = (0.1, 0.5, 0.9)
PEAK_LR, START_LR, END_LR, WARMUP, DECAY_STEPS, POWER = 0.01, 0.002, 1e-4, 1, 4, 2.0
WEIGHT_DECAY = 0.01

_TARGET = {}


def sample(step):
    rng = np.random.default_rng(4200 + step)
    x = rng.uniform(-1.0, 1.0, (BATCH, IN_DIM))
    noise = rng.standard_normal(BATCH)
    y = np.sin(2.0 * x[:, 0]) + 0.5 * x[:, 1] * x[:, 2] + (0.2 + 0.3 * np.abs(x[:, 3])) * noise
    return x.astype("float32"), y.astype("float32")


class ResidualBlock(nn.Layer):
    def __init__(self, width, dropout):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return x + self.drop(self.fc(F.gelu(self.norm(x))))


class QuantileRegressor(nn.Layer):
    def __init__(self, quantiles, in_dim=IN_DIM, width=WIDTH, depth=2, dropout=0.1):
        super().__init__()
        self.stem = nn.Linear(in_dim, width)
        self.blocks = nn.LayerList([ResidualBlock(width, dropout) for _ in range(depth)])
        self.q_heads = nn.LayerList([nn.Linear(width, 1) for _ in quantiles])
        self.final_norm = nn.LayerNorm(width)

    def forward(self, x):
        h = self.stem(x)
        for block in self.blocks:
            h = block(h)
        h = F.gelu(self.final_norm(h))
        return paddle.concat([head(h) for head in self.q_heads], axis=-1)


def model():
    b = bug(BUGS)  # an unknown name fails early
    paddle.seed(42)
    m = QuantileRegressor(QUANTILES) if b == "paddle_dropout_default" else QuantileRegressor(QUANTILES, dropout=0.0)
    rng = np.random.default_rng(421)
    for name, p in m.named_parameters():
        if p.ndim == 1 and "norm" in name and name.endswith("weight"):
            p.set_value((1.0 + 0.1 * rng.standard_normal(p.shape)).astype("float32"))
        elif p.ndim == 1:
            p.set_value((0.1 * rng.standard_normal(p.shape)).astype("float32"))
    m.train()
    return m


def inputs(step=0):
    x, y = sample(step)
    _TARGET["y"] = y
    return (paddle.to_tensor(x),), {}


def loss(output):
    y = paddle.to_tensor(_TARGET["y"]).astype(output.dtype).unsqueeze(-1)
    q = paddle.to_tensor(np.array(QUANTILES)).astype(output.dtype)
    e = y - output
    return paddle.maximum(q * e, (q - 1.0) * e).mean()


def optimizer(model):
    sched = paddle.optimizer.lr.LinearWarmup(
        learning_rate=paddle.optimizer.lr.PolynomialDecay(learning_rate=PEAK_LR, decay_steps=DECAY_STEPS,
                                                          end_lr=END_LR, power=POWER),
        warmup_steps=WARMUP, start_lr=START_LR, end_lr=PEAK_LR)
    params = model.parameters()
    if bug(BUGS) == "paddle_decay_names":
        decay = {n for n, p in model.named_parameters() if p.ndim >= 2}
    else:
        decay = {p.name for p in params if p.ndim >= 2}
    opt = paddle.optimizer.AdamW(learning_rate=sched, beta1=0.9, beta2=0.999, epsilon=1e-8, parameters=params,
                                 weight_decay=WEIGHT_DECAY, apply_decay_param_fun=lambda name: name in decay)
    return opt, sched
