"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a BYOL step
(Bootstrap Your Own Latent, Grill et al. 2020) on a tiny MLP encoder, trained 3 steps on two
augmented views of a new batch each step.

    online = Encoder: backbone = Sequential(Linear(32, 64), ReLU, Linear(64, 64), ReLU),
             projector = MLPHead(64 -> 64 -> 16): fc1, bn (BatchNorm1D(64, momentum=0.9)), relu, fc2
             (MLPHead registers fc1, fc2 BEFORE bn: registration order differs from call order)
    target = Encoder of the same shape, a copy of online (set_state_dict), stop_gradient=True,
             called under paddle.no_grad(): no gradient into the target
    predictor = MLPHead(16 -> 64 -> 16) with its own BatchNorm1D
Registration order: online, target, predictor (call order: online, predictor, target).
forward(v1, v2): x = concat([v1, v2]) [16, 32] (both views in ONE batch, so each BatchNorm sees
16 rows and runs once per step); p1, p2 = split(predictor(online(x)), 2); t1, t2 =
split(target(x), 2) (train mode: the target's BatchNorm also uses batch statistics and updates
its own running stats). One call of each module per forward.
Returns (p1, p2, t1, t2). No dropout anywhere (BYOL has none).

Loss: regression_loss(p, t) = 2 - 2 <normalize(p), normalize(t)> per sample (F.normalize over the
feature axis -1), symmetrised: mean(regression_loss(p1, t2) + regression_loss(p2, t1)).

Optimizer: MomentumEMA, a subclass of paddle.optimizer.Momentum(learning_rate 0.05, momentum 0.9,
weight_decay 1e-4 (L2Decay: added to the gradient)) over the online + predictor parameters
whose step() runs the Momentum update and then the target's exponential moving average,
target = lerp(target, online, 1 - tau) = tau * target + (1 - tau) * online with tau 0.99,
parameters only (BatchNorm running stats of the target are its own).
Weights: paddle.seed(0), Linear layers paddle's default init, BatchNorm weight 1 + N(0, 0.1),
bias N(0, 0.1); target copied from online.

Data: inputs(step): a new base batch X [8, 32] (default_rng(4600 + step)) and two views
v = X * (1 + 0.2 N) + 0.2 N (independent noise per view) - the "augmentations" made in numpy.

PADIFF_BUG (this side only):
  paddle_ema_inverted -> the EMA written lerp(target, online, tau): target = (1 - tau) * target
              + tau * online (tau on the wrong side: the target nearly follows the online network)
  paddle_cos_axis -> F.normalize(x, axis=0) in regression_loss: each feature normalised over the
              batch instead of each sample over its features
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_ema_inverted", "paddle_cos_axis"} | {"bn_momentum"}  # torch's, ignored here
IN_DIM, HID, REP, PROJ_HID, PROJ = 32, 64, 64, 64, 16
BATCH = 8
LR, MOMENTUM, WD, TAU = 0.05, 0.9, 1e-4, 0.99


class MLPHead(nn.Layer):
    def __init__(self, in_dim, hidden, out_dim):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden)
        self.fc2 = nn.Linear(hidden, out_dim)
        self.bn = nn.BatchNorm1D(hidden, momentum=0.9)  # paddle: running = 0.9 running + 0.1 batch
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.fc2(self.relu(self.bn(self.fc1(x))))


class Encoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(IN_DIM, HID), nn.ReLU(), nn.Linear(HID, REP), nn.ReLU())
        self.projector = MLPHead(REP, PROJ_HID, PROJ)

    def forward(self, x):
        return self.projector(self.backbone(x))


class BYOL(nn.Layer):
    def __init__(self):
        super().__init__()
        self.online = Encoder()
        self.target = Encoder()
        self.predictor = MLPHead(PROJ, PROJ_HID, PROJ)
        self.target.set_state_dict(self.online.state_dict())
        for p in self.target.parameters():
            p.stop_gradient = True

    def forward(self, v1, v2):
        x = paddle.concat([v1, v2], axis=0)  # both views in one batch: one BatchNorm statistic
        p1, p2 = paddle.split(self.predictor(self.online(x)), 2, axis=0)
        with paddle.no_grad():
            t1, t2 = paddle.split(self.target(x), 2, axis=0)
        return p1, p2, t1.detach(), t2.detach()


class MomentumEMA(paddle.optimizer.Momentum):
    """Momentum, then the target's moving average (BYOL: after every optimizer step)."""

    def __init__(self, online, target, tau, **kwargs):
        super().__init__(**kwargs)
        # parameters() also lists BatchNorm's _mean / _variance (stop_gradient): moving-average
        # the trainable ones only, the target's running stats follow its own forward
        self._ema_pairs = [(po, pt) for po, pt in zip(online.parameters(), target.parameters()) if po.trainable]
        self._tau = tau
        self._inverted = bug(BUGS) == "paddle_ema_inverted"

    def step(self):
        super().step()
        w = self._tau if self._inverted else 1.0 - self._tau
        with paddle.no_grad():
            for p_online, p_target in self._ema_pairs:
                p_target.set_value(paddle.lerp(p_target, p_online, w))


def model():
    bug(BUGS)
    paddle.seed(0)
    m = BYOL()
    for name, sub in m.named_sublayers():
        if isinstance(sub, nn.BatchNorm1D) and not name.startswith("target"):
            sub.weight.set_value(1.0 + paddle.normal(0.0, 0.1, sub.weight.shape))
            sub.bias.set_value(paddle.normal(0.0, 0.1, sub.bias.shape))
    m.target.set_state_dict(m.online.state_dict())
    m.train()
    return m


def _views(step):
    rng = np.random.default_rng(4600 + step)
    x = rng.standard_normal((BATCH, IN_DIM))
    v1 = x * (1.0 + 0.2 * rng.standard_normal(x.shape)) + 0.2 * rng.standard_normal(x.shape)
    v2 = x * (1.0 + 0.2 * rng.standard_normal(x.shape)) + 0.2 * rng.standard_normal(x.shape)
    return v1.astype("float32"), v2.astype("float32")


def inputs(step=0):
    v1, v2 = _views(step)
    return (paddle.to_tensor(v1), paddle.to_tensor(v2)), {}


def regression_loss(p, t):
    axis = 0 if bug(BUGS) == "paddle_cos_axis" else -1
    p = F.normalize(p, axis=axis)
    t = F.normalize(t, axis=axis)
    return 2 - 2 * (p * t).sum(axis=-1)


def loss(output):
    p1, p2, t1, t2 = output
    return (regression_loss(p1, t2) + regression_loss(p2, t1)).mean()


def optimizer(model):
    params = [p for p in model.online.parameters() + model.predictor.parameters() if p.trainable]
    return MomentumEMA(model.online, model.target, TAU, learning_rate=LR, momentum=MOMENTUM,
                       parameters=params, weight_decay=WD)
