"""Hand-written port in TRAINING mode, paddle side (written by "person A"): Sharpness-Aware
Minimization (Foret et al. 2021) around SGD with momentum, on a small MLP classifier with dropout,
3 steps, one batch per step.

    SAMNet: registers feat_drop (Dropout 0.1 on the input features), blocks (LayerList of two
        MLPBlock: fc Linear, norm LayerNorm, drop Dropout 0.2; GELU is F.gelu inline), head
        (Linear 32 -> 10); calls feat_drop, blocks.0, blocks.1, head
    forward(x [16, 20]) -> logits [16, 10]

Data: inputs(step): x [16, 20] N(0, 1) and labels in 0..9 from default_rng(6600 + step) (the labels
are kept by the spec for loss() and for the optimizer's second pass).
Loss: F.cross_entropy(logits, labels, label_smoothing=0.1) (target 0.91, others 0.01).

Optimizer: SAM (this file's `SAM`), the recorder calls its step() once per step after the first
backward:
    1. g = the gradients of the first pass (already in p.grad); ||g|| the GLOBAL 2-norm over all
       parameters; e = rho * g / (||g|| + 1e-12) (rho 0.05); w <- w + e (old weights kept)
    2. gradients cleared; forward + loss + backward again on the same batch at w + e (the second
       pass: dropout draws new masks, the model stays in train mode)
    3. w <- the kept weights; base optimizer step with the second gradients:
       paddle.optimizer.Momentum(learning_rate 0.05, momentum 0.9, weight_decay 5e-4)
clear_grad() and every other attribute are the base optimizer's.
Init (person A): numpy default_rng(2626), Linear weights N(0, 0.3) (head N(0, 0.4)), biases
N(0, 0.1), LayerNorm weight 1 + N(0, 0.1), bias N(0, 0.1) (trained-looking, not identity).

PADIFF_BUG (this side only):
  paddle_hidden_drop -> the hidden blocks are built with the feature-dropout rate (p_in 0.1
              passed where p_hidden 0.2 belongs, a copy-paste in SAMNet.__init__)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_hidden_drop"} | {"torch_smooth_ce", "torch_no_zero_grad"}  # the torch side's, ignored here
IN_DIM, HIDDEN, N_CLS, BATCH = 20, 32, 10, 16
P_IN, P_HIDDEN = 0.1, 0.2
LR, MOMENTUM, WD, RHO, SMOOTH = 0.05, 0.9, 5e-4, 0.05, 0.1

_BATCH = {}


def batch(step):
    rng = np.random.default_rng(6600 + step)
    x = rng.standard_normal((BATCH, IN_DIM)).astype("float32")
    y = rng.integers(0, N_CLS, BATCH).astype("int64")
    return x, y


class MLPBlock(nn.Layer):
    def __init__(self, d_in, d_out, p):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.norm = nn.LayerNorm(d_out)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(F.gelu(self.norm(self.fc(x))))


class SAMNet(nn.Layer):
    def __init__(self, in_dim=IN_DIM, hidden=HIDDEN, n_cls=N_CLS, p_in=P_IN, p_hidden=P_HIDDEN):
        super().__init__()
        self.feat_drop = nn.Dropout(p_in)
        p_blk = p_in if bug(BUGS) == "paddle_hidden_drop" else p_hidden
        self.blocks = nn.LayerList([MLPBlock(in_dim, hidden, p_blk), MLPBlock(hidden, hidden, p_blk)])
        self.head = nn.Linear(hidden, n_cls)

    def forward(self, x):
        h = self.feat_drop(x)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h)


def _init(m):
    rng = np.random.default_rng(2626)
    for name, p in m.named_parameters():
        if p.ndim >= 2:
            v = rng.normal(0.0, 0.4 if name.startswith("head") else 0.3, p.shape)
        elif name.endswith("norm.weight"):
            v = 1.0 + rng.normal(0.0, 0.1, p.shape)
        else:
            v = rng.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype("float32"))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = SAMNet()
    _init(m)
    m.train()
    return m


def inputs(step=0):
    x, y = batch(step)
    x = paddle.to_tensor(x)
    _BATCH.update(x=x, y=paddle.to_tensor(y))
    return (x,), {}


def loss(output):
    return F.cross_entropy(output, _BATCH["y"], label_smoothing=SMOOTH)


class SAM:
    """Sharpness-Aware Minimization around a paddle optimizer; ``closure`` re-runs forward + loss +
    backward on the current batch (the second pass)."""

    def __init__(self, parameters, base_optimizer, closure, rho=0.05):
        self._params = list(parameters)
        self._base = base_optimizer
        self._closure = closure
        self.rho = rho

    @paddle.no_grad()
    def _ascent(self):
        live = [p for p in self._params if not p.stop_gradient and p.grad is not None]
        grad_norm = paddle.linalg.norm(paddle.stack([paddle.linalg.norm(p.grad) for p in live]))
        scale = self.rho / (grad_norm + 1e-12)
        kept = []
        for p in live:
            kept.append((p, p.clone()))
            p.set_value(p + p.grad * scale)
        return kept

    def step(self):
        kept = self._ascent()
        self._base.clear_grad()
        with paddle.enable_grad():
            self._closure()
        with paddle.no_grad():
            for p, old in kept:
                p.set_value(old)
        self._base.step()

    def clear_grad(self, *args, **kwargs):
        return self._base.clear_grad(*args, **kwargs)

    def __getattr__(self, name):  # learning rate, state, ... of the base optimizer
        return getattr(self._base, name)


def optimizer(model):
    base = paddle.optimizer.Momentum(learning_rate=LR, momentum=MOMENTUM, parameters=model.parameters(),
                                     weight_decay=WD)

    def closure():
        dtype = model.head.weight.dtype
        out = model(_BATCH["x"].astype(dtype))
        second = loss(out)
        second.backward()
        return second

    return SAM(model.parameters(), base, closure, rho=RHO)
