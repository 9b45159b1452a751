"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a siamese encoder
trained with a cosine embedding loss (pairs labelled +1 similar / -1 dissimilar, margin 0.3),
SGD with momentum under a triangular cyclic learning rate stepped every step; 3 steps.

    SiameseNet: registers tower (PairTower), called twice per forward (shared weights)
    PairTower: registers norm (LayerNorm 32), fc_in (Linear 12 -> 32), fc_out (Linear 32 -> 16),
        drop (Dropout 0.1); calls fc_in, norm, gelu (paddle.nn.functional.gelu: no module), drop,
        fc_out
    forward(x1, x2) -> (emb1 [16, 16], emb2 [16, 16])

Data: inputs(step): 16 pairs from default_rng(4100 + step): x1 ~ N(0, 1) [16, 12]; labels +1
for 8 pairs, -1 for 8 (shuffled); a similar pair's x2 = x1 + 0.6 N(0, 1), a dissimilar one's
x2 ~ N(0, 1) independent. Labels kept by the spec for loss() (int64, +1 / -1).
Loss: the framework's built-in paddle.nn.CosineEmbeddingLoss(margin=0.3) (mean): 1 - cos for
+1 pairs, max(0, cos - 0.3) for -1 pairs.
Optimizer: paddle.optimizer.Momentum(learning_rate=CyclicLR(base 0.02, max 0.2, step_size_up 2,
mode "triangular"), momentum 0.9, weight_decay 5e-4); the scheduler is returned with the
optimizer and stepped after every optimizer step: lr 0.02, 0.11, 0.2 for updates 1..3.
Init (person A): paddle.seed(41), paddle's default Linear init; LayerNorm scale 1 + N(0, 0.1),
shift N(0, 0.1), Linear biases N(0, 0.1) (trained-looking, numpy default_rng(411)).

PADIFF_BUG (this side only):
  paddle_margin_default -> nn.CosineEmbeddingLoss() built without margin: paddle's default
              margin 0.0 instead of 0.3
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_margin_default"} | {"torch_dropout_default", "torch_cycle_momentum"}  # the torch side's, ignored here
IN_DIM, HID, EMB, PAIRS = 12, 32, 16, 16
MARGIN, DROP = 0.3, 0.1
BASE_LR, MAX_LR, STEP_UP, MOMENTUM, WD = 0.02, 0.2, 2, 0.9, 5e-4

_LABELS = {}


def make_pairs(step):
    rng = np.random.default_rng(4100 + step)
    x1 = rng.standard_normal((PAIRS, IN_DIM))
    y = np.array([1] * (PAIRS // 2) + [-1] * (PAIRS // 2))
    rng.shuffle(y)
    noise = rng.standard_normal((PAIRS, IN_DIM))
    other = rng.standard_normal((PAIRS, IN_DIM))
    x2 = np.where((y == 1)[:, None], x1 + 0.6 * noise, other)
    return x1.astype("float32"), x2.astype("float32"), y.astype("int64")


class PairTower(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(HID)
        self.fc_in = nn.Linear(IN_DIM, HID)
        self.fc_out = nn.Linear(HID, EMB)
        self.drop = nn.Dropout(DROP)

    def forward(self, x):
        h = F.gelu(self.norm(self.fc_in(x)))
        return self.fc_out(self.drop(h))


class SiameseNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.tower = PairTower()

    def forward(self, x1, x2):
        return self.tower(x1), self.tower(x2)


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(41)
    m = SiameseNet()
    rng = np.random.default_rng(411)
    t = m.tower
    t.norm.weight.set_value((1.0 + 0.1 * rng.standard_normal(HID)).astype("float32"))
    t.norm.bias.set_value((0.1 * rng.standard_normal(HID)).astype("float32"))
    t.fc_in.bias.set_value((0.1 * rng.standard_normal(HID)).astype("float32"))
    t.fc_out.bias.set_value((0.1 * rng.standard_normal(EMB)).astype("float32"))
    m.train()
    return m


def inputs(step=0):
    x1, x2, y = make_pairs(step)
    _LABELS["y"] = y
    return (paddle.to_tensor(x1), paddle.to_tensor(x2)), {}


def loss(output):
    emb1, emb2 = output
    if bug(BUGS) == "paddle_margin_default":
        criterion = nn.CosineEmbeddingLoss()
    else:
        criterion = nn.CosineEmbeddingLoss(margin=MARGIN)
    return criterion(emb1, emb2, paddle.to_tensor(_LABELS["y"]))


def optimizer(model):
    sched = paddle.optimizer.lr.CyclicLR(base_learning_rate=BASE_LR, max_learning_rate=MAX_LR,
                                         step_size_up=STEP_UP, mode="triangular")
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, weight_decay=WD,
                                    parameters=model.parameters())
    return opt, sched
