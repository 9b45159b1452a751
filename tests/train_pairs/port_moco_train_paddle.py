"""Hand-written port in TRAINING mode, paddle side (written by "person A"): MoCo-v2 style
contrastive training of a tiny CNN encoder, 3 steps.

    MoCoV2: registers bank (MemoryBank) first, then query (Encoder, trained), key (Encoder, the
        momentum copy: every parameter stop_gradient=True); forward(im_q, im_k):
          q = normalize(query(im_q))
          momentum update (paddle.no_grad): key_p <- M * key_p + (1 - M) * query_p (M = 0.99)
              over the trainable parameters only (stop_gradient ones skipped: paddle lists the
              BatchNorm _mean / _variance as parameters; the key encoder's statistics come from
              its own forward)
          k = normalize(key(im_k)) (paddle.no_grad)
          logits = concat([sum(q * k, -1, keepdim), q @ bank.feats^T], -1)  [B, 1 + K]
              (a detached clone of the queue: push() overwrites it in place)
          bank.push(k): dequeue the oldest B rows, enqueue k
        returns the raw cosine logits (the temperature is applied in loss())
    Encoder: conv1 (Conv2D 3 -> 8, 3x3, pad 1, no bias), bn1 (BatchNorm2D), conv2 (Conv2D 8 -> 16,
        3x3, stride 2, pad 1, no bias), bn2, ReLU via F.relu, global mean pool, then the MoCo-v2
        MLP head as two Linears fc1 (16 -> 16), fc2 (16 -> 8) with F.relu between
    MemoryBank: buffers feats [K, DIM] (rows are negatives; K = 32, DIM = 8; initialised as
        L2-normalised N(0, 1) rows) and ptr (int64 [1]); push() writes rows ptr .. ptr + B and
        stores (ptr + B) % K back
Batch 8; inputs(step): base images 3x10x10 from default_rng(6000 + step) and two deterministic
"augmentations" per image (random 8x8 crop, horizontal flip, brightness scale, additive noise:
all numbers drawn in numpy, applied with paddle ops).
Loss: InfoNCE = F.cross_entropy(logits / T, zeros) with T = 0.2 (MoCo v2).
Optimizer: Momentum(learning_rate=CosineAnnealingDecay(0.06, T_max=3), momentum 0.9,
weight_decay=L2Decay(1e-4)) over the query encoder (the trainable parameters);
optimizer() returns (optimizer, scheduler), lr 0.06, 0.045, 0.015 for updates 1..3.
Init: paddle.seed(0), paddle's default conv/linear init; BatchNorm weight 1 + N(0, 0.1), bias
N(0, 0.1), Linear biases N(0, 0.1); the key encoder starts as a copy of the query encoder.

PADIFF_BUG (this side only):
  paddle_ema_stats -> the momentum update zips query.parameters() with key.parameters() without
              skipping the stop_gradient ones: paddle's BatchNorm2D lists _mean / _variance among
              its parameters (torch keeps them as buffers), so the key encoder's running statistics
              are also averaged with the query encoder's (0.99 key + 0.01 query) every step
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_ema_stats"} | {"torch_t_v1", "torch_no_wd"}  # the torch side's, ignored here
B, K, DIM, IMG, CROP = 8, 32, 8, 10, 8
M, T = 0.99, 0.2
LR, MOMENTUM, WD, STEPS = 0.06, 0.9, 1e-4, 3


def two_views(step):
    """Base images and the per-image augmentation numbers of both views (numpy)."""
    rng = np.random.default_rng(6000 + step)
    base = rng.standard_normal((B, 3, IMG, IMG)).astype("float32")
    views = []
    for _ in range(2):
        off = rng.integers(0, IMG - CROP + 1, (B, 2))
        flip = rng.random(B) < 0.5
        scale = rng.uniform(0.6, 1.4, B).astype("float32")
        noise = (0.1 * rng.standard_normal((B, 3, CROP, CROP))).astype("float32")
        views.append((off, flip, scale, noise))
    return base, views


def augment(base, off, flip, scale, noise):
    crops = []
    for i in range(B):
        y, x = int(off[i, 0]), int(off[i, 1])
        c = base[i, :, y:y + CROP, x:x + CROP]
        if flip[i]:
            c = paddle.flip(c, axis=[2])
        crops.append(c)
    out = paddle.stack(crops, axis=0)
    return out * paddle.to_tensor(scale).reshape([B, 1, 1, 1]) + paddle.to_tensor(noise)


class Encoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(3, 8, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(8, momentum=0.9, epsilon=1e-5)
        self.conv2 = nn.Conv2D(8, 16, 3, stride=2, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(16, momentum=0.9, epsilon=1e-5)
        self.fc1 = nn.Linear(16, 16)
        self.fc2 = nn.Linear(16, DIM)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = x.mean(axis=[2, 3])
        return self.fc2(F.relu(self.fc1(x)))


class MemoryBank(nn.Layer):
    def __init__(self, size, dim):
        super().__init__()
        self.register_buffer("feats", F.normalize(paddle.randn([size, dim]), axis=1))
        self.register_buffer("ptr", paddle.zeros([1], dtype="int64"))

    @paddle.no_grad()
    def push(self, k):
        n = k.shape[0]
        ptr = int(self.ptr[0])
        self.feats[ptr:ptr + n] = k.astype(self.feats.dtype)
        ptr = (ptr + n) % self.feats.shape[0]
        self.ptr[0] = ptr


class MoCoV2(nn.Layer):
    def __init__(self):
        super().__init__()
        self.bank = MemoryBank(K, DIM)
        self.query = Encoder()
        self.key = Encoder()

    @paddle.no_grad()
    def _momentum_update(self):
        every = bug(BUGS) == "paddle_ema_stats"
        for pq, pk in zip(self.query.parameters(), self.key.parameters()):
            if pq.stop_gradient and not every:  # BatchNorm _mean / _variance: paddle lists them as parameters
                continue
            pk.set_value(pk * M + pq * (1.0 - M))

    def forward(self, im_q, im_k):
        q = F.normalize(self.query(im_q), axis=1)
        with paddle.no_grad():
            self._momentum_update()
            k = F.normalize(self.key(im_k), axis=1)
        l_pos = paddle.sum(q * k, axis=-1, keepdim=True)
        l_neg = paddle.matmul(q, self.bank.feats.clone().detach(), transpose_y=True)
        logits = paddle.concat([l_pos, l_neg], axis=-1)
        self.bank.push(k)
        return logits


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = MoCoV2()
    for name, p in m.query.named_parameters():
        if name.startswith("bn") and name.endswith("weight"):
            p.set_value(1.0 + paddle.normal(0.0, 0.1, p.shape))
        elif name.endswith("bias"):
            p.set_value(paddle.normal(0.0, 0.1, p.shape))
    for pq, pk in zip(m.query.parameters(), m.key.parameters()):
        pk.set_value(pq)
        pk.stop_gradient = True
    m.train()
    return m


def inputs(step=0):
    base, views = two_views(step)
    base = paddle.to_tensor(base)
    return (augment(base, *views[0]), augment(base, *views[1])), {}


def loss(output):
    labels = paddle.zeros([output.shape[0]], dtype="int64")
    return F.cross_entropy(output / T, labels)


def optimizer(model):
    sched = paddle.optimizer.lr.CosineAnnealingDecay(learning_rate=LR, T_max=STEPS)
    params = [p for p in model.parameters() if not p.stop_gradient]
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, parameters=params,
                                    weight_decay=paddle.regularizer.L2Decay(WD))
    return opt, sched
