"""Hand-written port in TRAINING mode, paddle side (written by "person A"): VICReg
self-supervised pre-training (variance-invariance-covariance regularisation) of a tiny MLP
encoder + expander, 3 steps, SGD with momentum and weight decay.

    VICReg: registers expander (Expander: linear1 Linear 16 -> 32, norm1 BatchNorm1D(32),
        act ReLU, linear2 Linear 32 -> 32 without bias), then backbone (MLPBackbone: fc1 Linear
        12 -> 24, bn1 BatchNorm1D(24), fc2 Linear 24 -> 16; relu functional); calls backbone,
        then expander.
    forward(view_a, view_b): the two views are concatenated into one batch of 32 (one pass,
        BatchNorm statistics over both views, the DINO MultiCropWrapper way), the embeddings are
        split back: -> (z_a [16, 32], z_b [16, 32])

Data: inputs(step): two augmented views of 16 samples from default_rng(3300 + step): a base
batch N(0, 1) [16, 12] @ a fixed mixing matrix (default_rng(3333): I + 0.4 N(0, 1)); each view =
base * per-sample scale U(0.8, 1.2) * feature keep-mask (keep 0.85) + 0.1 N(0, 1) noise.
Loss (VICReg, weights 25 / 25 / 1): invariance mse(z_a, z_b); variance: per view
mean(relu(1 - sqrt(var(z, unbiased) + 1e-4))) / 2 each; covariance: per view the off-diagonal
entries of the (centered, / (N - 1)) covariance matrix, squared, summed, divided by the dim 32.
Optimizer: Momentum(learning_rate 0.05, momentum 0.9); weight decay 5e-4 (coupled L2) on the
Linear weights only, through each weight's ParamAttr regularizer (biases and BatchNorm none).
Init (person A): paddle.seed(33), Linear weights N(0, 1 / sqrt(fan_in)), biases N(0, 0.1),
BatchNorm scales N(1, 0.1), shifts N(0, 0.1), running means N(0, 0.1) and variances
1 + U(0, 0.5) (trained-looking).

PADIFF_BUG (this side only):
  paddle_l1_decay    -> the Linear weights' regularizer is L1Decay(5e-4) instead of L2Decay(5e-4)
  paddle_bn_momentum -> the expander's BatchNorm1D built with momentum=0.1 (torch's number copied:
                        paddle keeps 0.1 of the old running statistics, torch's 0.1 means 0.9)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_l1_decay", "paddle_bn_momentum"} | {"torch_cov_over_n"}  # the torch side's, ignored here
N_VIEW, IN_DIM, HID, REPR, EXP = 16, 12, 24, 16, 32
LR, MOMENTUM, WD = 0.05, 0.9, 5e-4
SIM_W, STD_W, COV_W, STD_EPS = 25.0, 25.0, 1.0, 1e-4


def two_views(step):
    mix = np.eye(IN_DIM) + 0.4 * np.random.default_rng(3333).standard_normal((IN_DIM, IN_DIM))
    rng = np.random.default_rng(3300 + step)
    base = rng.standard_normal((N_VIEW, IN_DIM)) @ mix

    def augment():
        scale = rng.uniform(0.8, 1.2, (N_VIEW, 1))
        keep = rng.random((N_VIEW, IN_DIM)) >= 0.15
        return (base * scale * keep + 0.1 * rng.standard_normal((N_VIEW, IN_DIM))).astype("float32")

    a = augment()
    return a, augment()


def _weight(fan_in):
    reg = paddle.regularizer.L1Decay(WD) if bug(BUGS) == "paddle_l1_decay" else paddle.regularizer.L2Decay(WD)
    return paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, fan_in ** -0.5), regularizer=reg)


def _bias():
    return paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.1))


def _bn(num, momentum=0.9):
    return nn.BatchNorm1D(num, momentum=momentum, weight_attr=paddle.ParamAttr(initializer=nn.initializer.Normal(1.0, 0.1)),
                          bias_attr=paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.1)))


class MLPBackbone(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IN_DIM, HID, weight_attr=_weight(IN_DIM), bias_attr=_bias())
        self.bn1 = _bn(HID)
        self.fc2 = nn.Linear(HID, REPR, weight_attr=_weight(HID), bias_attr=_bias())

    def forward(self, x):
        return self.fc2(F.relu(self.bn1(self.fc1(x))))


class Expander(nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(REPR, EXP, weight_attr=_weight(REPR), bias_attr=_bias())
        self.norm1 = _bn(EXP, momentum=0.1 if bug(BUGS) == "paddle_bn_momentum" else 0.9)
        self.act = nn.ReLU()
        self.linear2 = nn.Linear(EXP, EXP, weight_attr=_weight(EXP), bias_attr=False)

    def forward(self, h):
        return self.linear2(self.act(self.norm1(self.linear1(h))))


class VICReg(nn.Layer):
    def __init__(self):
        super().__init__()
        self.expander = Expander()
        self.backbone = MLPBackbone()

    def forward(self, view_a, view_b):
        n = view_a.shape[0]
        z = self.expander(self.backbone(paddle.concat([view_a, view_b], axis=0)))
        return z[:n], z[n:]


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(33)
    m = VICReg()
    rng = np.random.default_rng(34)
    for _, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm1D):  # trained-looking running statistics
            c = layer._mean.shape[0]
            layer._mean.set_value(rng.normal(0.0, 0.1, c).astype("float32"))
            layer._variance.set_value((1.0 + rng.uniform(0.0, 0.5, c)).astype("float32"))
    m.train()
    return m


def inputs(step=0):
    a, b = two_views(step)
    return (paddle.to_tensor(a), paddle.to_tensor(b)), {}


def _variance_term(z):
    std = paddle.sqrt(paddle.var(z, axis=0) + STD_EPS)
    return F.relu(1.0 - std).mean()


def _covariance_term(z):
    n, d = z.shape
    zc = z - z.mean(axis=0, keepdim=True)
    cov = paddle.matmul(zc, zc, transpose_x=True) / (n - 1)
    off = cov * (1.0 - paddle.eye(d, dtype=cov.dtype))
    return (off ** 2).sum() / d


def loss(output):
    z_a, z_b = output
    invariance = F.mse_loss(z_a, z_b)
    variance = _variance_term(z_a) / 2 + _variance_term(z_b) / 2
    covariance = _covariance_term(z_a) + _covariance_term(z_b)
    return SIM_W * invariance + STD_W * variance + COV_W * covariance


def optimizer(model):
    # weight decay lives in the Linear weights' ParamAttr regularizers (none elsewhere)
    trainable = [p for p in model.parameters() if not p.stop_gradient]  # not the BatchNorm statistics
    return paddle.optimizer.Momentum(learning_rate=LR, momentum=MOMENTUM, parameters=trainable)
