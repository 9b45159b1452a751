"""Hand-written port in TRAINING mode, paddle side (written by "person A"): multi-task learning
with homoscedastic-uncertainty loss weighting (Kendall, Gal & Cipolla 2018), 3 steps, one batch
per step.

    MTLNet: registers trunk (SharedTrunk: fc1 Linear 12 -> 32, norm LayerNorm(32), drop1 Dropout 0.2,
        fc2 Linear 32 -> 32, drop2 Dropout 0.2; ReLU functional), reg_head (Linear 32 -> 2),
        cls_head (ClsHead: fc Linear 32 -> 16, drop Dropout 0.1, out Linear 16 -> 4; ReLU
        functional), task_uncertainty (TaskUncertainty: log_var_reg [1], log_var_cls [1],
        forward() returns their concatenation [2])
    forward(x) -> (regression [B, 2], class logits [B, 4], log-variances [2])

Data: inputs(step): 16 samples from default_rng(2750 + step): x [16, 12] N(0, 1); regression
targets [16, 2] (a fixed linear map of x through tanh, plus noise 0.3), class labels 0..3 (the
argmax of another fixed map of x plus noise) - both maps drawn from default_rng(2700).
Loss (Kendall eq. 10, s = log sigma^2): 0.5 exp(-s_reg) MSE + exp(-s_cls) CE + 0.5 s_reg + 0.5 s_cls
(MSE = F.mse_loss mean over the batch and both outputs, CE = F.cross_entropy mean).
Optimizer: Momentum(learning_rate 0.05, momentum 0.9, use_nesterov=True, weight_decay 5e-4,
grad_clip=ClipGradByGlobalNorm(1.0)); the two log-variances carry their own
ParamAttr(regularizer=L2Decay(0.0)), which takes precedence over the optimizer's weight decay:
they are not decayed (a decay would pull the log-variances towards 0, i.e. the task weights
towards 1).
Weights (person A): numpy default_rng(2701): Linear weights N(0, 1/sqrt(fan_in)) (head out
N(0, 0.4)), biases N(0, 0.1), LayerNorm 1 + N(0, 0.1) / N(0, 0.1); log-variances as after some
training: s_reg 0.45, s_cls -0.35.

PADIFF_BUG (this side only):
  paddle_decay_logvars -> the log-variances created without the L2Decay(0.0) ParamAttr: the
              optimizer's weight decay 5e-4 then applies to them too (coupled, added to the
              clipped gradient)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_decay_logvars"} | {"torch_head_dropout", "torch_plain_kendall"}  # the torch side's, ignored here
IN_DIM, HIDDEN, HEAD_HIDDEN, N_REG, N_CLS, BATCH = 12, 32, 16, 2, 4, 16
TRUNK_DROPOUT, HEAD_DROPOUT = 0.2, 0.1
LR, MOMENTUM, WEIGHT_DECAY, CLIP = 0.05, 0.9, 5e-4, 1.0
INIT_LOG_VARS = (0.45, -0.35)

_BATCH = {}


def task_batch(step):
    maps = np.random.default_rng(2700)
    a_reg = maps.normal(0.0, 0.5, (IN_DIM, N_REG))
    a_cls = maps.normal(0.0, 0.5, (IN_DIM, N_CLS))
    rng = np.random.default_rng(2750 + step)
    x = rng.standard_normal((BATCH, IN_DIM))
    y_reg = np.tanh(x @ a_reg) + 0.3 * rng.standard_normal((BATCH, N_REG))
    y_cls = np.argmax(x @ a_cls + 0.5 * rng.standard_normal((BATCH, N_CLS)), axis=1)
    return x.astype("float32"), y_reg.astype("float32"), y_cls.astype("int64")


class SharedTrunk(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IN_DIM, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN)
        self.drop1 = nn.Dropout(TRUNK_DROPOUT)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.drop2 = nn.Dropout(TRUNK_DROPOUT)

    def forward(self, x):
        h = self.drop1(F.relu(self.norm(self.fc1(x))))
        return self.drop2(F.relu(self.fc2(h)))


class ClsHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(HIDDEN, HEAD_HIDDEN)
        self.drop = nn.Dropout(HEAD_DROPOUT)
        self.out = nn.Linear(HEAD_HIDDEN, N_CLS)

    def forward(self, h):
        return self.out(self.drop(F.relu(self.fc(h))))


class TaskUncertainty(nn.Layer):
    """s_i = log sigma_i^2 of each task, learned with the network."""

    def __init__(self, exempt_from_decay=True):
        super().__init__()

        def attr(v):
            reg = paddle.regularizer.L2Decay(0.0) if exempt_from_decay else None
            return paddle.ParamAttr(initializer=nn.initializer.Constant(v), regularizer=reg)

        self.log_var_reg = self.create_parameter([1], attr=attr(INIT_LOG_VARS[0]))
        self.log_var_cls = self.create_parameter([1], attr=attr(INIT_LOG_VARS[1]))

    def forward(self):
        return paddle.concat([self.log_var_reg, self.log_var_cls])


class MTLNet(nn.Layer):
    def __init__(self, exempt_log_vars=True):
        super().__init__()
        self.trunk = SharedTrunk()
        self.reg_head = nn.Linear(HIDDEN, N_REG)
        self.cls_head = ClsHead()
        self.task_uncertainty = TaskUncertainty(exempt_log_vars)

    def forward(self, x):
        h = self.trunk(x)
        return self.reg_head(h), self.cls_head(h), self.task_uncertainty()


def _init(m):
    rng = np.random.default_rng(2701)
    for name, p in m.named_parameters():
        if name.startswith("task_uncertainty"):
            continue
        shape = tuple(p.shape)
        if len(shape) == 2:
            std = 0.4 if name == "cls_head.out.weight" else 1.0 / np.sqrt(shape[0])
            v = rng.normal(0.0, std, shape)
        elif name.startswith("trunk.norm") and name.endswith("weight"):
            v = 1.0 + rng.normal(0.0, 0.1, shape)
        else:
            v = rng.normal(0.0, 0.1, shape)
        p.set_value(v.astype("float32"))


def model():
    b = bug(BUGS)  # an unknown name fails early
    m = MTLNet(exempt_log_vars=b != "paddle_decay_logvars")
    _init(m)
    m.train()
    return m


def inputs(step=0):
    x, y_reg, y_cls = task_batch(step)
    _BATCH.update(y_reg=y_reg, y_cls=y_cls)
    return (paddle.to_tensor(x),), {}


def loss(output):
    reg, logits, log_vars = output
    y_reg = paddle.to_tensor(_BATCH["y_reg"]).astype(reg.dtype)
    y_cls = paddle.to_tensor(_BATCH["y_cls"])
    mse = F.mse_loss(reg, y_reg)
    ce = F.cross_entropy(logits, y_cls)
    s_reg, s_cls = log_vars[0], log_vars[1]
    return 0.5 * paddle.exp(-s_reg) * mse + paddle.exp(-s_cls) * ce + 0.5 * s_reg + 0.5 * s_cls


def optimizer(model):
    return paddle.optimizer.Momentum(learning_rate=LR, momentum=MOMENTUM, use_nesterov=True,
                                     weight_decay=WEIGHT_DECAY, parameters=model.parameters(),
                                     grad_clip=paddle.nn.ClipGradByGlobalNorm(CLIP))
