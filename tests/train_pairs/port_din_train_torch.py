"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_din_train_paddle.py) the DeepCTR-Torch way.

    DeepInterestNetwork: registers embedding (ONE table, Embedding(50 + 10, 8): item rows 0..49,
        category rows 50..59, category ids offset by 50), attention (AttentionSequencePoolingLayer
        holding local_att = LocalActivationUnit), linears (ModuleList: Linear 48 -> 32, 32 -> 16),
        activations (ModuleList: Dice 32, Dice 16), dnn_dropout (nn.Dropout 0.2, called after each
        layer), dnn_linear (Linear 16 -> 1, the output)
    forward(target_ids [B, 2], hist_ids [B, T, 2], mask [B, T] bool) -> logit [B, 1]
        ids [..., 0] are items, [..., 1] categories; embedding(ids + [0, 50]).flatten(-2)
    LocalActivationUnit: dnn = Sequential(Linear 64 -> 32, PReLU(32), Linear 32 -> 16, PReLU(16)),
        dense = Linear 16 -> 1; run on the flattened [B * T, 64] attention input (nn.PReLU takes
        the channel at dim 1)
    AttentionSequencePoolingLayer: scores / sqrt(16), masked_fill(~mask, -inf), softmax, bmm
    Dice (DeepCTR-Torch): bn = BatchNorm1d(dim, eps 1e-8), alpha = Parameter [dim];
        x_p = sigmoid(bn(x)); out = alpha * (1 - x_p) * x + x_p * x
Per step the same numpy batch as the paddle side (default_rng(2500 + step), same recipe); the
spec passes packed ids and a boolean mask (paddle: separate ids and the lengths).
Loss: nn.BCEWithLogitsLoss() (mean). Optimizer: torch.optim.Adagrad(lr 0.05, eps 1e-10,
initial_accumulator_value 0.1, weight_decay 1e-3).

PADIFF_BUG (this side only):
  torch_bce_sum      -> BCEWithLogitsLoss(reduction="sum"), DeepCTR-Torch's reduction, where the
                        paddle original takes the mean (8x the loss and the gradients)
  torch_adagrad_acc0 -> torch.optim.Adagrad(..., no initial_accumulator_value): torch's default 0
                        instead of the TF/paddle-side 0.1 (the first update becomes lr * sign(g))
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"torch_bce_sum", "torch_adagrad_acc0"} | {"paddle_keep_prob"}  # the paddle side's, ignored here
N_ITEM, N_CAT, EMB, HIST, BATCH = 50, 10, 8, 6, 8
LR, ADA_EPS, ADA_INIT_ACC, WD = 0.05, 1e-10, 0.1, 1e-3
DNN_DROPOUT = 0.2

_Y = {}


def sample(step):
    rng = np.random.default_rng(2500 + step)
    cate_of = rng.integers(1, N_CAT, N_ITEM)
    target = rng.integers(1, N_ITEM, BATCH)
    length = rng.integers(2, HIST + 1, BATCH)
    hist = rng.integers(1, N_ITEM, (BATCH, HIST))
    mask = np.arange(HIST)[None, :] < length[:, None]
    hist = np.where(mask, hist, 0)
    hist_cate = np.where(hist > 0, cate_of[hist], 0)
    y = rng.integers(0, 2, BATCH).astype(np.float32)
    target_ids = np.stack([target, cate_of[target]], -1).astype(np.int64)
    hist_ids = np.stack([hist, hist_cate], -1).astype(np.int64)
    return target_ids, hist_ids, mask, y


class LocalActivationUnit(nn.Module):
    def __init__(self, embedding_dim, hidden_units=(32, 16)):
        super().__init__()
        self.dnn = nn.Sequential(
            nn.Linear(4 * embedding_dim, hidden_units[0]), nn.PReLU(hidden_units[0]),
            nn.Linear(hidden_units[0], hidden_units[1]), nn.PReLU(hidden_units[1]),
        )
        self.dense = nn.Linear(hidden_units[1], 1)

    def forward(self, query, user_behavior):
        b, t, d = user_behavior.shape
        queries = query.unsqueeze(1).expand(-1, t, -1)
        attention_input = torch.cat([queries, user_behavior, queries - user_behavior, queries * user_behavior], dim=-1)
        out = self.dnn(attention_input.reshape(b * t, 4 * d))
        return self.dense(out).view(b, t)


class AttentionSequencePoolingLayer(nn.Module):
    def __init__(self, embedding_dim):
        super().__init__()
        self.local_att = LocalActivationUnit(embedding_dim)

    def forward(self, query, keys, mask):
        scores = self.local_att(query, keys) / keys.shape[-1] ** 0.5
        scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return torch.bmm(weights.unsqueeze(1), keys).squeeze(1)


class Dice(nn.Module):
    def __init__(self, emb_size, epsilon=1e-8):
        super().__init__()
        self.bn = nn.BatchNorm1d(emb_size, eps=epsilon)
        self.alpha = nn.Parameter(torch.zeros(emb_size))

    def forward(self, x):
        x_p = torch.sigmoid(self.bn(x))
        return self.alpha * (1 - x_p) * x + x_p * x


class DeepInterestNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(N_ITEM + N_CAT, EMB)
        self.register_buffer("field_offset", torch.tensor([0, N_ITEM]), persistent=False)
        self.attention = AttentionSequencePoolingLayer(2 * EMB)
        self.linears = nn.ModuleList([nn.Linear(6 * EMB, 32), nn.Linear(32, 16)])
        self.activations = nn.ModuleList([Dice(32), Dice(16)])
        self.dnn_dropout = nn.Dropout(DNN_DROPOUT)
        self.dnn_linear = nn.Linear(16, 1)

    def embed(self, ids):
        return self.embedding(ids + self.field_offset).flatten(-2)

    def forward(self, target_ids, hist_ids, mask):
        query = self.embed(target_ids)  # [B, 16]
        keys = self.embed(hist_ids)  # [B, T, 16]
        hist = self.attention(query, keys, mask)
        x = torch.cat([hist, query, hist * query], dim=-1)
        for fc, act in zip(self.linears, self.activations):
            x = self.dnn_dropout(act(fc(x)))
        return self.dnn_linear(x)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = DeepInterestNetwork()
    m.train()
    return m


def inputs(step=0):
    target_ids, hist_ids, mask, y = sample(step)
    _Y["y"] = torch.from_numpy(y)
    return (torch.from_numpy(target_ids), torch.from_numpy(hist_ids), torch.from_numpy(mask)), {}


def loss(output):
    y = _Y["y"].to(output.dtype).unsqueeze(-1)
    reduction = "sum" if bug(BUGS) == "torch_bce_sum" else "mean"
    return nn.BCEWithLogitsLoss(reduction=reduction)(output, y)


def optimizer(model):
    kw = dict(lr=LR, eps=ADA_EPS, weight_decay=WD)
    if bug(BUGS) != "torch_adagrad_acc0":
        kw["initial_accumulator_value"] = ADA_INIT_ACC
    return torch.optim.Adagrad(model.parameters(), **kw)
