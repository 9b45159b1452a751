"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a small dilated 1-D conv
regressor (4 sensor channels x 24 time steps -> 2 targets) trained with momentum SGD and weight
decay, keeping an exponential moving average (EMA) of its weights, 3 steps, a new minibatch every
step.

    TCNRegressor: registers stem (Conv1D 4 -> 16, k 3, pad 1), block (ResBlock: conv Conv1D
        16 -> 16, k 3, dilation 2, pad 2; drop Dropout 0.1; h + drop(gelu(conv(h)))), norm
        (LayerNorm 16), head_drop (Dropout 0.2), head (Linear 16 -> 2); then, in a hand loop over
        its parameters, one EMA buffer per parameter: ema_<name with "." -> "_"> (a copy of the
        parameter at construction)
    forward(x [16, 4, 24]) -> [16, 2]: gelu(stem), block, mean over time, norm, head_drop, head

EMA (hand-written, the swa_utils convention): update_ema() after every optimizer step (the
optimizer subclass MomentumWithEMA calls it at the end of step()): the first update copies the
weights, later ones ema = 0.9 * ema + 0.1 * w; the count of updates is a python int.
Data: inputs(step): default_rng(3750 + step): x N(0, 1) [16, 4, 24]; targets: a fixed smooth
function of x (mean of channel products, a slope) plus noise, kept by the spec for loss().
Loss: Huber with delta 0.5, F.smooth_l1_loss(pred, y, delta=0.5) (paddle's smooth_l1_loss is the
Huber loss: 0.5 r^2 below delta, delta (|r| - delta / 2) above), mean over all elements.
Optimizer: MomentumWithEMA(paddle.optimizer.Momentum): learning_rate 0.05, momentum 0.9,
weight_decay=L2Decay(5e-4) (coupled, added to the gradient) on the conv / linear weights; biases
and the LayerNorm get ParamAttr(regularizer=L2Decay(0.0)), which overrides the optimizer's.
Init (person A): paddle.seed(3750) defaults; LayerNorm weight 1 + N(0, 0.1), bias N(0, 0.1);
every bias N(0, 0.05) (numpy default_rng(3751)).

PADIFF_BUG (this side only):
  paddle_huber_delta -> F.smooth_l1_loss(pred, y) without delta=0.5 (paddle's default delta 1.0)
  paddle_drop_default -> head_drop = nn.Dropout() without the rate (paddle's default p 0.5)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn
from paddle.regularizer import L2Decay

BUGS = {"paddle_huber_delta", "paddle_drop_default"} | {"torch_ema_pre_step"}  # the torch side's, ignored here
C_IN, T, WIDTH, N_OUT, BATCH = 4, 24, 16, 2, 16
BLOCK_DROP, HEAD_DROP = 0.1, 0.2
HUBER_DELTA = 0.5
LR, MOMENTUM, WD, EMA_DECAY = 0.05, 0.9, 5e-4, 0.9

_BATCH = {}


def make_batch(step):
    rng = np.random.default_rng(3750 + step)
    x = rng.standard_normal((BATCH, C_IN, T))
    t = np.linspace(-1.0, 1.0, T)
    y0 = (x[:, 0] * x[:, 1]).mean(-1) * 3.0 + (x[:, 2] * t).mean(-1) * 4.0
    y1 = np.tanh(x[:, 3].mean(-1) * 3.0) + 0.5 * x[:, 0, :12].mean(-1)
    y = np.stack([y0, y1], -1) + 0.3 * rng.standard_normal((BATCH, N_OUT))
    return x.astype("float32"), y.astype("float32")


def _no_decay():
    return paddle.ParamAttr(regularizer=L2Decay(0.0))


class ResBlock(nn.Layer):
    def __init__(self, width, p):
        super().__init__()
        self.conv = nn.Conv1D(width, width, 3, padding=2, dilation=2, bias_attr=_no_decay())
        self.drop = nn.Dropout(p)

    def forward(self, h):
        return h + self.drop(F.gelu(self.conv(h)))


class TCNRegressor(nn.Layer):
    def __init__(self):
        super().__init__()
        head_p = HEAD_DROP
        self.stem = nn.Conv1D(C_IN, WIDTH, 3, padding=1, bias_attr=_no_decay())
        self.block = ResBlock(WIDTH, BLOCK_DROP)
        self.norm = nn.LayerNorm(WIDTH, weight_attr=_no_decay(), bias_attr=_no_decay())
        self.head_drop = nn.Dropout() if bug(BUGS) == "paddle_drop_default" else nn.Dropout(head_p)
        self.head = nn.Linear(WIDTH, N_OUT, bias_attr=_no_decay())
        self._ema_updates = 0

    def init_ema(self):
        """One EMA buffer per parameter (hand loop), a copy of the current weights."""
        self._ema_names = []
        for name, p in list(self.named_parameters()):
            buf = "ema_" + name.replace(".", "_")
            self.register_buffer(buf, p.detach().clone())
            self._ema_names.append((buf, name))

    @paddle.no_grad()
    def update_ema(self):
        params = dict(self.named_parameters())
        for buf, name in self._ema_names:
            ema, w = getattr(self, buf), params[name]
            if self._ema_updates == 0:
                paddle.assign(w, output=ema)
            else:
                paddle.assign(EMA_DECAY * ema + (1.0 - EMA_DECAY) * w, output=ema)
        self._ema_updates += 1

    def forward(self, x):
        h = F.gelu(self.stem(x))
        h = self.block(h)
        h = self.norm(h.mean(axis=-1))
        return self.head(self.head_drop(h))


def _trained_looking(m):
    rng = np.random.default_rng(3751)
    for name, p in m.named_parameters():
        if name.startswith("norm.") and name.endswith("weight"):
            p.set_value((1.0 + 0.1 * rng.standard_normal(p.shape)).astype("float32"))
        elif name.startswith("norm."):
            p.set_value((0.1 * rng.standard_normal(p.shape)).astype("float32"))
        elif name.endswith("bias"):
            p.set_value((0.05 * rng.standard_normal(p.shape)).astype("float32"))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(3750)
    m = TCNRegressor()
    _trained_looking(m)
    m.init_ema()
    m.train()
    return m


def inputs(step=0):
    x, y = make_batch(step)
    _BATCH["y"] = y
    return (paddle.to_tensor(x),), {}


def loss(output):
    y = paddle.to_tensor(_BATCH["y"]).astype(output.dtype)
    if bug(BUGS) == "paddle_huber_delta":
        return F.smooth_l1_loss(output, y)
    return F.smooth_l1_loss(output, y, delta=HUBER_DELTA)


class MomentumWithEMA(paddle.optimizer.Momentum):
    """Momentum whose step() also refreshes the model's EMA buffers (after the update)."""

    def __init__(self, ema_model, **kwargs):
        super().__init__(**kwargs)
        self._ema_model = ema_model

    def step(self):
        super().step()
        self._ema_model.update_ema()


def optimizer(model):
    return MomentumWithEMA(model, learning_rate=LR, momentum=MOMENTUM, weight_decay=L2Decay(WD),
                           parameters=model.parameters())
