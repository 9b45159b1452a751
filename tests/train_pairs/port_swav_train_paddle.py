"""Hand-written SwAV-style self-supervised model in TRAINING mode, paddle side ("person A").

    SwavLearner: registers proto_bank (Linear 16 -> 8, bias_attr=False: the prototypes, weight
        [16, 8], one prototype per COLUMN), view_encoder (ViewEncoder: inp_fc 12 -> 32, relu,
        inline F.dropout(p 0.1), mid_fc 32 -> 32, relu), embed_head (Sequential: Linear 32 -> 32
        bias_attr=False, BatchNorm1D(32), ReLU, Linear 32 -> 16)
    forward(view_a, view_b):
        at the start of every training forward the prototypes are L2-normalised IN PLACE under
        paddle.no_grad() (each column to unit norm; paddle.assign into the parameter);
        x = concat([view_a, view_b]) (one pass: BatchNorm statistics over both views),
        z = F.normalize(embed_head(view_encoder(x)), axis=1), scores = proto_bank(z)
        -> (scores [32, 8], z [32, 16])

Loss (swapped prediction): scores split into the two views (paddle.split); for each view the
codes q = Sinkhorn-Knopp(scores_view) computed under paddle.no_grad() (epsilon 0.05, 3
iterations, [B, K] layout: normalise prototype columns then sample rows); the OTHER view
predicts them: F.cross_entropy(scores_other / 0.1, q, soft_label=True) (mean over samples);
loss = mean of the two terms.
Optimizer: paddle.optimizer.Momentum(learning_rate 0.05, weight_decay 5e-4 (coupled L2)),
momentum left at paddle's default 0.9, over the trainable parameters; no schedule, no clipping.
Data: inputs(step): 16 samples x 12 features from default_rng(3830 + step), two views, each
x * (1 + 0.2 n1) + 0.1 n2 (n1, n2 N(0, 1) drawn per view, the same numbers on both sides).
Init: paddle.seed(38); weights N(0, 0.25), biases N(0, 0.1), BatchNorm weight 1 + N(0, 0.1),
bias N(0, 0.1), running mean N(0, 0.1), running variance 1 + U(0, 0.3).

PADIFF_BUG (this side only):
  paddle_keep_prob -> the encoder's dropout called with the KEEP probability (0.9) where the
              drop probability 0.1 is meant (a TF / fluid-era keep_prob config read as p)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_keep_prob"} | {"torch_no_momentum", "torch_self_predict"}  # the torch side's, ignored here
IN_DIM, WIDTH, EMB, N_PROTO, PER_VIEW = 12, 32, 16, 8, 16
DROP_RATE = 0.1  # the config's dropout rate (drop probability)
TEMP, SK_EPS, SK_ITERS = 0.1, 0.05, 3
LR, WD = 0.05, 5e-4


def two_views(step):
    rng = np.random.default_rng(3830 + step)
    x = rng.standard_normal((PER_VIEW, IN_DIM))
    views = []
    for _ in range(2):
        scale = 1.0 + 0.2 * rng.standard_normal((PER_VIEW, IN_DIM))
        jitter = 0.1 * rng.standard_normal((PER_VIEW, IN_DIM))
        views.append((x * scale + jitter).astype("float32"))
    return views


class ViewEncoder(nn.Layer):
    def __init__(self, rate):
        super().__init__()
        self.inp_fc = nn.Linear(IN_DIM, WIDTH)
        self.mid_fc = nn.Linear(WIDTH, WIDTH)
        self.drop_p = 1.0 - rate if bug(BUGS) == "paddle_keep_prob" else rate

    def forward(self, x):
        h = F.relu(self.inp_fc(x))
        h = F.dropout(h, p=self.drop_p, training=self.training)
        return F.relu(self.mid_fc(h))


class SwavLearner(nn.Layer):
    def __init__(self):
        super().__init__()
        self.proto_bank = nn.Linear(EMB, N_PROTO, bias_attr=False)
        self.view_encoder = ViewEncoder(DROP_RATE)
        self.embed_head = nn.Sequential(
            nn.Linear(WIDTH, WIDTH, bias_attr=False), nn.BatchNorm1D(WIDTH, momentum=0.9), nn.ReLU(),
            nn.Linear(WIDTH, EMB))

    @paddle.no_grad()
    def renorm_prototypes(self):
        w = self.proto_bank.weight
        paddle.assign(F.normalize(w, p=2, axis=0), output=w)

    def forward(self, view_a, view_b):
        if self.training:
            self.renorm_prototypes()
        x = paddle.concat([view_a, view_b], axis=0)
        z = F.normalize(self.embed_head(self.view_encoder(x)), p=2, axis=1)
        return self.proto_bank(z), z


def _trained_looking(m):
    paddle.seed(38)
    for sub in m.sublayers():
        if isinstance(sub, nn.BatchNorm1D):
            sub.weight.set_value(1.0 + paddle.normal(0.0, 0.1, sub.weight.shape))
            sub.bias.set_value(paddle.normal(0.0, 0.1, sub.bias.shape))
            sub._mean.set_value(paddle.normal(0.0, 0.1, sub._mean.shape))
            sub._variance.set_value(1.0 + paddle.uniform(sub._variance.shape, min=0.0, max=0.3))
        elif isinstance(sub, nn.Linear):
            sub.weight.set_value(paddle.normal(0.0, 0.25, sub.weight.shape))
            if sub.bias is not None:
                sub.bias.set_value(paddle.normal(0.0, 0.1, sub.bias.shape))


def model():
    bug(BUGS)
    m = SwavLearner()
    _trained_looking(m)
    m.train()
    return m


def inputs(step=0):
    va, vb = two_views(step)
    return (paddle.to_tensor(va), paddle.to_tensor(vb)), {}


def sinkhorn_codes(scores):
    """Sinkhorn-Knopp on [B, K] scores: columns (prototypes) get equal mass, rows (samples) sum to 1."""
    n, k = scores.shape
    q = paddle.exp(scores / SK_EPS)
    q = q / q.sum()
    for _ in range(SK_ITERS):
        q = q / q.sum(axis=0, keepdim=True) / k
        q = q / q.sum(axis=1, keepdim=True) / n
    return q * n


def loss(output):
    scores, _ = output
    per_view = paddle.split(scores, 2, axis=0)
    total = 0.0
    for a in range(2):
        with paddle.no_grad():
            codes = sinkhorn_codes(per_view[a].detach())
        other = per_view[1 - a]
        total = total + F.cross_entropy(other / TEMP, codes, soft_label=True)
    return total / 2


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    return paddle.optimizer.Momentum(learning_rate=LR, parameters=params, weight_decay=WD)
