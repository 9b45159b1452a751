"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny U-Net-style
segmentation net trained 3 steps with soft-Dice + cross-entropy, AdamW (decay on conv weights
only) and a polynomial ("poly", power 0.9) learning-rate decay stepped every iteration.

    TinyUNet: registers stem = ConvBNReLU(3 -> 8), down = ConvBNReLU(8 -> 16, stride 2),
        up = Conv2DTranspose(16 -> 8, kernel 2, stride 2), fuse = SkipFuse(8 + 8 -> 8),
        head = SegHead(8 -> 3); calls stem, down, up, fuse(up, skip), head
    ConvBNReLU: conv (Conv2D 3x3, padding 1, bias_attr=False), bn (BatchNorm2D, momentum 0.9),
        act (ReLU)
    SkipFuse: the decoder's 3x3 conv over concat([up, skip]) written without the concat, as two
        convolutions summed: from_up (8 -> 8) + from_skip (8 -> 8) (no bias), then bn, act
    SegHead: inline F.dropout(p=0.1, training=self.training), then cls (Conv2D 1x1, 8 -> 3)
Batch 2 of 3x16x16 images, 3 classes, labels [2, 16, 16] (4x4 blocks of a random class map);
model.train() (batch statistics, dropout on).

Loss: F.cross_entropy(logits, labels, axis=1) + (1 - mean_c dice_c), the soft Dice of class c over
the batch and all pixels: dice_c = (2 sum(p_c y_c) + 1) / (sum(p_c) + sum(y_c) + 1), p =
F.softmax(logits, axis=1), y = one_hot(labels) transposed to NCHW; smoothing constant 1.0.
Optimizer: AdamW(lr PolynomialDecay(2e-3, decay_steps=10, end_lr=0, power=0.9), beta1 0.9,
beta2 0.999, epsilon 1e-8, weight_decay 0.01, apply_decay_param_fun: only the conv / transposed
conv weights (by their paddle .name); BatchNorm scales/shifts and biases not decayed);
optimizer() returns (optimizer, scheduler), stepped after every update: lr 2e-3, 1.819e-3,
1.636e-3 for updates 1..3.
Init: paddle.seed(0), paddle's default conv init; BatchNorm weight 1 + N(0, 0.1), bias N(0, 0.1),
running mean N(0, 0.1), running variance 1 + U(0, 0.5); conv biases N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_softmax_axis -> the Dice probabilities taken with F.softmax(logits) (paddle's default
              axis=-1: a softmax over the image width instead of the classes)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_softmax_axis"} | {"dropout_default_p", "poly_power_default"}  # torch side's, ignored here
N_CLS, BATCH, IMG = 3, 2, 16
LR, MAX_ITER, POWER, WD, SMOOTH, DROP = 2e-3, 10, 0.9, 0.01, 1.0, 0.1


def batch(step):
    rng = np.random.default_rng(3500 + step)
    x = rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")
    blocks = rng.integers(0, N_CLS, (BATCH, IMG // 4, IMG // 4))
    y = np.repeat(np.repeat(blocks, 4, axis=1), 4, axis=2).astype("int64")
    return x, y


class ConvBNReLU(nn.Layer):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, 3, stride=stride, padding=1, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout, momentum=0.9, epsilon=1e-5)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class SkipFuse(nn.Layer):
    """conv3x3(concat([up, skip])) as from_up(up) + from_skip(skip), then BN and ReLU."""

    def __init__(self, c_up, c_skip, cout):
        super().__init__()
        self.from_up = nn.Conv2D(c_up, cout, 3, padding=1, bias_attr=False)
        self.from_skip = nn.Conv2D(c_skip, cout, 3, padding=1, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout, momentum=0.9, epsilon=1e-5)
        self.act = nn.ReLU()

    def forward(self, up, skip):
        return self.act(self.bn(self.from_up(up) + self.from_skip(skip)))


class SegHead(nn.Layer):
    def __init__(self, cin, n_cls, dropout):
        super().__init__()
        self.dropout = dropout
        self.cls = nn.Conv2D(cin, n_cls, 1)

    def forward(self, x):
        x = F.dropout(x, p=self.dropout, training=self.training)
        return self.cls(x)


class TinyUNet(nn.Layer):
    def __init__(self, n_cls=N_CLS):
        super().__init__()
        self.stem = ConvBNReLU(3, 8)
        self.down = ConvBNReLU(8, 16, stride=2)
        self.up = nn.Conv2DTranspose(16, 8, 2, stride=2)
        self.fuse = SkipFuse(8, 8, 8)
        self.head = SegHead(8, n_cls, DROP)

    def forward(self, x):
        skip = self.stem(x)
        deep = self.down(skip)
        return self.head(self.fuse(self.up(deep), skip))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = TinyUNet()
    for bn in (m.stem.bn, m.down.bn, m.fuse.bn):
        c = bn.weight.shape
        bn.weight.set_value(1.0 + paddle.normal(0.0, 0.1, c))
        bn.bias.set_value(paddle.normal(0.0, 0.1, c))
        bn._mean.set_value(paddle.normal(0.0, 0.1, c))
        bn._variance.set_value(1.0 + 0.5 * paddle.rand(c))
    for b in (m.up.bias, m.head.cls.bias):
        b.set_value(paddle.normal(0.0, 0.1, b.shape))
    m.train()
    return m


_LABELS = {}


def inputs(step=0):
    x, y = batch(step)
    _LABELS["y"] = y
    return (paddle.to_tensor(x),), {}


def soft_dice_loss(logits, label):
    if bug(BUGS) == "paddle_softmax_axis":
        prob = F.softmax(logits)
    else:
        prob = F.softmax(logits, axis=1)
    onehot = F.one_hot(label, N_CLS).astype(logits.dtype).transpose([0, 3, 1, 2])
    axes = [0, 2, 3]
    inter = paddle.sum(prob * onehot, axis=axes)
    denom = paddle.sum(prob, axis=axes) + paddle.sum(onehot, axis=axes)
    dice = (2.0 * inter + SMOOTH) / (denom + SMOOTH)
    return 1.0 - paddle.mean(dice)


def loss(output):
    label = paddle.to_tensor(_LABELS["y"])
    return F.cross_entropy(output, label, axis=1) + soft_dice_loss(output, label)


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    decay = {sub.weight.name for sub in model.sublayers() if isinstance(sub, (nn.Conv2D, nn.Conv2DTranspose))}
    sched = paddle.optimizer.lr.PolynomialDecay(learning_rate=LR, decay_steps=MAX_ITER, end_lr=0.0, power=POWER)
    opt = paddle.optimizer.AdamW(learning_rate=sched, beta1=0.9, beta2=0.999, epsilon=1e-8, parameters=params,
                                 weight_decay=WD, apply_decay_param_fun=lambda name: name in decay)
    return opt, sched
