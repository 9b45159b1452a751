"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny tabular
regressor (categorical embeddings + numeric features, MLP with LayerNorm and dropout) trained 3
steps with a smooth-L1 loss, centered RMSProp and global-norm gradient clipping.

    TabularRegressor: registers cat_embeds = LayerList([Embedding(7, 4), Embedding(5, 4)]),
        emb_drop (Dropout 0.1), mlp = Sequential(Linear(14, 32), LayerNorm(32), ReLU, Dropout(0.2),
        Linear(32, 32), LayerNorm(32), ReLU, Dropout(0.2)) (.0-.7), out (Linear 32 -> 1);
        forward: concat(embeddings of the two columns) -> emb_drop -> concat with the 6 numeric
        features -> mlp -> out
Batch 16 per step from default_rng(9300 + step): categorical ids [16, 2] (column 0 in [0, 7),
column 1 in [0, 5)), numeric features N(0, 1) [16, 6], targets [16, 1]; model.train().

Loss: smooth L1 with beta 0.5 (torch's SmoothL1Loss(beta=0.5)): paddle's F.smooth_l1_loss is the
Huber loss by default (is_huber=True: 0.5 d^2 below delta, delta (|d| - 0.5 delta) above), so
the port passes is_huber=False to get 0.5 d^2 / delta below delta, |d| - 0.5 delta above.
Optimizer: RMSProp(learning_rate 1e-3, rho 0.9, epsilon 1e-24, momentum 0, centered=True,
grad_clip=ClipGradByGlobalNorm(0.5)). paddle adds epsilon INSIDE the square root
(sqrt(r - g_avg^2 + epsilon)), torch adds eps outside (sqrt(...) + eps): epsilon = 1e-24 here is
torch's eps 1e-12 squared (both far below any gradient that fp32 resolves, so the placement does
not matter; with torch's default 1e-8 it would for the tiny embedding gradients).
Init: paddle.seed(0), paddle's default init for the linears and embeddings; linear biases
N(0, 0.1), LayerNorm weight 1 + N(0, 0.1), bias N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_huber_default -> F.smooth_l1_loss(pred, target, delta=0.5) (is_huber left at its default
              True): the Huber loss with delta 0.5, i.e. 0.5 x torch's smooth L1 with beta 0.5
  paddle_emb_dropout   -> emb_drop built with the hidden dropout rate (0.2) instead of the
              embedding dropout rate 0.1 (config key mix-up)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_huber_default", "paddle_emb_dropout"} | {"rmsprop_alpha_default"}  # torch side's, ignored here
CARDS, EMB_DIM, N_NUM, HIDDEN, BATCH = (7, 5), 4, 6, 32, 16
EMB_DROPOUT, HIDDEN_DROPOUT = 0.1, 0.2
LR, RHO, EPSILON, CLIP, BETA = 1e-3, 0.9, 1e-24, 0.5, 0.5


def batch(step):
    rng = np.random.default_rng(9300 + step)
    cats = np.stack([rng.integers(0, c, BATCH) for c in CARDS], axis=1).astype("int64")
    num = rng.standard_normal((BATCH, N_NUM)).astype("float32")
    effect = np.array([-1.0, -0.5, 0.0, 0.4, 0.8, 1.2, 1.6])[cats[:, 0]] + 0.3 * cats[:, 1]
    y = (effect + num @ np.linspace(-0.6, 0.6, N_NUM) + 0.3 * rng.standard_normal(BATCH)).astype("float32")
    return cats, num, y[:, None]


class TabularRegressor(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cat_embeds = nn.LayerList([nn.Embedding(c, EMB_DIM) for c in CARDS])
        p_emb = HIDDEN_DROPOUT if bug(BUGS) == "paddle_emb_dropout" else EMB_DROPOUT
        self.emb_drop = nn.Dropout(p_emb)
        d_in = EMB_DIM * len(CARDS) + N_NUM
        self.mlp = nn.Sequential(
            nn.Linear(d_in, HIDDEN), nn.LayerNorm(HIDDEN), nn.ReLU(), nn.Dropout(HIDDEN_DROPOUT),
            nn.Linear(HIDDEN, HIDDEN), nn.LayerNorm(HIDDEN), nn.ReLU(), nn.Dropout(HIDDEN_DROPOUT),
        )
        self.out = nn.Linear(HIDDEN, 1)

    def forward(self, cats, num):
        emb = paddle.concat([e(cats[:, i]) for i, e in enumerate(self.cat_embeds)], axis=-1)
        h = paddle.concat([self.emb_drop(emb), num], axis=-1)
        return self.out(self.mlp(h))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = TabularRegressor()
    for sub in m.sublayers():
        if isinstance(sub, nn.Linear):
            sub.bias.set_value(paddle.normal(0.0, 0.1, sub.bias.shape))
        elif isinstance(sub, nn.LayerNorm):
            sub.weight.set_value(1.0 + paddle.normal(0.0, 0.1, sub.weight.shape))
            sub.bias.set_value(paddle.normal(0.0, 0.1, sub.bias.shape))
    m.train()
    return m


_TARGET = {}


def inputs(step=0):
    cats, num, y = batch(step)
    _TARGET["y"] = y
    return (paddle.to_tensor(cats), paddle.to_tensor(num)), {}


def loss(output):
    target = paddle.to_tensor(_TARGET["y"]).astype(output.dtype)
    if bug(BUGS) == "paddle_huber_default":
        return F.smooth_l1_loss(output, target, reduction="mean", delta=BETA)
    return F.smooth_l1_loss(output, target, reduction="mean", delta=BETA, is_huber=False)


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    return paddle.optimizer.RMSProp(learning_rate=LR, rho=RHO, epsilon=EPSILON, momentum=0.0, centered=True,
                                    parameters=params, grad_clip=nn.ClipGradByGlobalNorm(CLIP))
