"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_huber_rmsprop_train_paddle.py) the pytorch-tabular / FT-Transformer way: ONE
embedding table for all categorical columns with per-column offsets.

    EmbeddingMLP: registers embedding (Embedding(7 + 5, 4); rows 0-6 column 0, rows 7-11 column
        1; a non-persistent buffer `offsets` = [0, 7]), embed_dropout (Dropout 0.1),
        blocks = ModuleList([Block(14, 32), Block(32, 32)]), head (Linear 32 -> 1)
    Block: fc (Linear), norm (LayerNorm); forward F.dropout(F.relu(norm(fc(x))), 0.2,
        self.training) (dropout inline, no module)
    forward: embedding(ids + offsets).flatten(1) -> embed_dropout -> cat with the numeric features
        -> blocks -> head
Same per-step batch as the paddle side (default_rng(9300 + step)).

Loss: nn.SmoothL1Loss(beta=0.5) (mean).
Optimizer: torch.optim.RMSprop(lr 1e-3, alpha 0.9, eps 1e-12, momentum 0, centered=True);
clip_grad(): torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5).

PADIFF_BUG (this side only):
  rmsprop_alpha_default -> RMSprop(..., eps=1e-12, centered=True) without alpha=0.9: torch's
              default smoothing constant alpha = 0.99 (paddle's rho 0.9 not carried over)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"rmsprop_alpha_default"} | {"paddle_huber_default", "paddle_emb_dropout"}  # paddle side's, ignored here
CARDINALITIES, D_EMB, N_CONT, D_HIDDEN, BATCH = (7, 5), 4, 6, 32, 16
LR, ALPHA, EPS, MAX_NORM, BETA = 1e-3, 0.9, 1e-12, 0.5, 0.5

_Y = {}


def draw(step):
    rng = np.random.default_rng(9300 + step)
    x_cat = np.stack([rng.integers(0, c, BATCH) for c in CARDINALITIES], axis=1).astype(np.int64)
    x_cont = rng.standard_normal((BATCH, N_CONT)).astype(np.float32)
    effect = np.array([-1.0, -0.5, 0.0, 0.4, 0.8, 1.2, 1.6])[x_cat[:, 0]] + 0.3 * x_cat[:, 1]
    y = (effect + x_cont @ np.linspace(-0.6, 0.6, N_CONT) + 0.3 * rng.standard_normal(BATCH)).astype(np.float32)
    return x_cat, x_cont, y.reshape(-1, 1)


class Block(nn.Module):
    def __init__(self, d_in, d_out, dropout=0.2):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.norm = nn.LayerNorm(d_out)
        self.dropout = dropout

    def forward(self, x):
        return F.dropout(F.relu(self.norm(self.fc(x))), self.dropout, self.training)


class EmbeddingMLP(nn.Module):
    def __init__(self, cardinalities=CARDINALITIES):
        super().__init__()
        self.embedding = nn.Embedding(sum(cardinalities), D_EMB)
        offsets = torch.tensor([0] + list(np.cumsum(cardinalities)[:-1]), dtype=torch.long)
        self.register_buffer("offsets", offsets, persistent=False)
        self.embed_dropout = nn.Dropout(0.1)
        d_in = D_EMB * len(cardinalities) + N_CONT
        self.blocks = nn.ModuleList([Block(d_in, D_HIDDEN), Block(D_HIDDEN, D_HIDDEN)])
        self.head = nn.Linear(D_HIDDEN, 1)

    def forward(self, x_cat, x_cont):
        x = self.embed_dropout(self.embedding(x_cat + self.offsets).flatten(1))
        x = torch.cat([x, x_cont], dim=1)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = EmbeddingMLP()
    m.train()
    return m


def inputs(step=0):
    x_cat, x_cont, y = draw(step)
    _Y["y"] = torch.from_numpy(y)
    return (torch.from_numpy(x_cat), torch.from_numpy(x_cont)), {}


def loss(output):
    return nn.SmoothL1Loss(beta=BETA)(output, _Y["y"].to(output.dtype))


def optimizer(model):
    if bug(BUGS) == "rmsprop_alpha_default":
        return torch.optim.RMSprop(model.parameters(), lr=LR, eps=EPS, momentum=0.0, centered=True)
    return torch.optim.RMSprop(model.parameters(), lr=LR, alpha=ALPHA, eps=EPS, momentum=0.0, centered=True)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
