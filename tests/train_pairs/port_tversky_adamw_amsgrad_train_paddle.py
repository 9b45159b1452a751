"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny segmentation
net trained with Tversky + cross-entropy and AdamW with amsgrad, 3 steps, a new batch each step.

    TverskySegNet: registers classifier (Conv2D 1x1 8 -> 2, with bias) FIRST, then enc1
        (ConvGNAct 3 -> 8, 3x3, GroupNorm 2 groups), enc2 (ConvGNAct 8 -> 8, 3x3, GroupNorm 4
        groups), fuse (ConvGNAct 8 -> 8, 1x1, GroupNorm 2 groups), drop (one nn.Dropout(0.1)
        module, called twice); ConvGNAct = conv (no bias), norm (GroupNorm eps 1e-5), act (ReLU)
    forward(x [2, 3, 12, 12]): h = drop(enc1(x)); h = h + enc2(h); h = fuse(h);
        logits = classifier(drop(h))  -> [2, 2, 12, 12]

Loss (inline in loss()): softmax probabilities over the class axis, one-hot targets; per class,
summed over batch and pixels, TP = sum(p g), FP = sum(p (1 - g)), FN = sum((1 - p) g);
Tversky index TI = (TP + 1) / (TP + 0.3 FP + 0.7 FN + 1) (alpha 0.3 on false positives, beta 0.7
on false negatives, smoothing 1); loss = cross_entropy(logits, labels) + mean_c (1 - TI_c).
Optimizer: paddle.optimizer.AdamW(learning_rate 5e-3, beta1 0.9, beta2 0.99, epsilon 1e-8,
weight_decay 0.05, apply_decay_param_fun: the conv kernels (ndim >= 2) only, amsgrad=True).
Init: paddle.seed(4512); conv kernels N(0, sqrt(2 / fan_in)); GroupNorm scales 1 + N(0, 0.1),
shifts N(0, 0.1); classifier bias N(0, 0.1) (trained-looking, non-identity).

PADIFF_BUG (this side only):
  paddle_ab_swapped -> alpha and beta swapped in the Tversky index: 0.7 FP + 0.3 FN (the papers
              disagree on which letter weighs the false positives; the port read them the other
              way round)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_ab_swapped"} | {"torch_head_p_default", "torch_amsgrad_vhat"}  # the torch side's, ignored here
N_CLASSES, WIDTH, SIZE, BATCH = 2, 8, 12, 2
ALPHA, BETA, SMOOTH = 0.3, 0.7, 1.0
LR, BETA1, BETA2, EPS, WD = 5e-3, 0.9, 0.99, 1e-8, 0.05
DROP_P = 0.1

_LABELS = {}


def batch(step):
    """Images [2, 3, 12, 12] and masks [2, 12, 12] (a disc per image), numpy, the same on both sides."""
    rng = np.random.default_rng(4500 + step)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    masks = np.zeros((BATCH, SIZE, SIZE), dtype="int64")
    for i in range(BATCH):
        cy, cx = rng.uniform(3.0, 9.0, 2)
        r = rng.uniform(2.5, 4.5)
        masks[i] = ((yy - cy) ** 2 + (xx - cx) ** 2 <= r * r).astype("int64")
    tint = rng.normal(0.0, 1.0, (BATCH, 3, 1, 1))
    images = (0.8 * (masks[:, None] - 0.5) * tint + rng.standard_normal((BATCH, 3, SIZE, SIZE))).astype("float32")
    return images, masks


class ConvGNAct(nn.Layer):
    def __init__(self, cin, cout, k, groups):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, k, padding=k // 2, bias_attr=False)
        self.norm = nn.GroupNorm(groups, cout, epsilon=1e-5)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.norm(self.conv(x)))


class TverskySegNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.classifier = nn.Conv2D(WIDTH, N_CLASSES, 1)
        self.enc1 = ConvGNAct(3, WIDTH, 3, 2)
        self.enc2 = ConvGNAct(WIDTH, WIDTH, 3, 4)
        self.fuse = ConvGNAct(WIDTH, WIDTH, 1, 2)
        self.drop = nn.Dropout(DROP_P)

    def forward(self, x):
        h = self.drop(self.enc1(x))
        h = h + self.enc2(h)
        h = self.fuse(h)
        return self.classifier(self.drop(h))


def _init(m):
    paddle.seed(4512)
    for name, p in m.named_parameters():
        if p.ndim == 4:
            fan_in = int(np.prod(p.shape[1:]))
            v = paddle.normal(0.0, float(np.sqrt(2.0 / fan_in)), p.shape)
        elif name.endswith("norm.weight"):
            v = 1.0 + paddle.normal(0.0, 0.1, p.shape)
        else:
            v = paddle.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype(p.dtype))


def model():
    bug(BUGS)
    m = TverskySegNet()
    _init(m)
    m.train()
    return m


def inputs(step=0):
    images, masks = batch(step)
    _LABELS["masks"] = masks
    return (paddle.to_tensor(images),), {}


def loss(output):
    logits = output
    dt = logits.dtype
    label = paddle.to_tensor(_LABELS["masks"])
    probs = F.softmax(logits, axis=1)
    onehot = F.one_hot(label, N_CLASSES).transpose([0, 3, 1, 2]).astype(dt)
    tp = (probs * onehot).sum(axis=[0, 2, 3])
    fp = (probs * (1.0 - onehot)).sum(axis=[0, 2, 3])
    fn = ((1.0 - probs) * onehot).sum(axis=[0, 2, 3])
    if bug(BUGS) == "paddle_ab_swapped":
        ti = (tp + SMOOTH) / (tp + BETA * fp + ALPHA * fn + SMOOTH)
    else:
        ti = (tp + SMOOTH) / (tp + ALPHA * fp + BETA * fn + SMOOTH)
    ce = F.cross_entropy(logits.transpose([0, 2, 3, 1]), label.unsqueeze(-1), axis=-1)
    return ce + (1.0 - ti).mean()


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    decay = {p.name for p in params if p.ndim >= 2}
    return paddle.optimizer.AdamW(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params,
                                  weight_decay=WD, apply_decay_param_fun=lambda n: n in decay, amsgrad=True)
