"""Hand-written port, torch side: a tiny DLRM-style click-through-rate model (written by "person B").

The same math as port_dlrm_paddle.py, written in the style of facebookresearch/dlrm
(dlrm_s_pytorch.py). Sizes: batch 2, 4 dense features, 3 sparse features (tables of 20, 30, 12
rows, dim 8), bottom MLP 4 -> 16 -> 8, dot interaction without self-interaction (6 pairs),
top MLP 14 -> 16 -> 8 -> 1, sigmoid. Inputs: `dense_x` [2, 4] and `sparse_ids` [2, 3, 4]
(bags padded with -1), the same arrays as the paddle side.

Torch idioms on this side:
- root `DLRM_Net`: `emb_l` = nn.ModuleList of nn.EmbeddingBag(rows, 8, mode="sum") (no
  padding row), registered first, then `bot_l` = nn.Sequential(Linear, ReLU, Linear, ReLU),
  `inter` (`InteractionArch`), `top_l` = nn.Sequential(Linear, ReLU, Linear, ReLU, Linear,
  Sigmoid) — the sigmoid is the last module of top_l, as in the reference code.
- the padded [B, L] ids of each feature are turned into EmbeddingBag's (flat indices, offsets)
  format by `_to_bags` (boolean-mask select, exclusive cumsum of the bag lengths); an empty bag
  gives a zero vector.
- `InteractionArch` takes (x [B, 8], ly = list of 3 pooled [B, 8]), T = cat([x] + ly).view(B,
  4, 8), Z = bmm(T, T^T), and gathers Z[:, li, lj] with li, lj = torch.tril_indices(4, 4, -1)
  (the reference's li / lj lists), then cat([x, Zflat]).

Planted bugs (PADIFF_BUG), see port_dlrm_truth.json; the paddle side's bug name is accepted and
ignored, any other name raises ValueError:
  torch_bag_default_mean      -> the tables are built as nn.EmbeddingBag(rows, 8) without
                                 mode=, i.e. torch's default mode="mean": each bag is averaged
                                 instead of summed (bags of length 0 or 1 are unchanged)
  torch_top_mlp_autocast_fp16 -> top_l runs under torch.autocast("cpu", dtype=torch.float16)
                                 (kept from a mixed-precision training script), the result cast
                                 back with .float() (precision-level)
"""
import math
import os

import numpy as np
import torch
from torch import nn

BATCH, DENSE, DIM, BAG = 2, 4, 8, 4
TABLE_ROWS = (20, 30, 12)
OWN_BUGS = {"torch_bag_default_mean", "torch_top_mlp_autocast_fp16"}
OTHER_BUGS = {"paddle_interaction_dense_last"}


def _to_bags(ids):
    """ids [B, L] padded with -1 -> (flat indices, offsets) for nn.EmbeddingBag."""
    valid = ids >= 0
    lengths = valid.sum(dim=1)
    offsets = torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, dim=0)[:-1]])
    return ids[valid], offsets


class InteractionArch(nn.Module):
    def forward(self, x, ly):
        batch_size, d = x.shape
        T = torch.cat([x] + ly, dim=1).view((batch_size, -1, d))
        Z = torch.bmm(T, torch.transpose(T, 1, 2))
        ni = T.shape[1]
        li, lj = torch.tril_indices(ni, ni, offset=-1)
        Zflat = Z[:, li, lj]
        return torch.cat([x, Zflat], dim=1)


class DLRM_Net(nn.Module):
    def __init__(self, bag_mean=False, top_fp16=False):
        super().__init__()
        self.top_fp16 = top_fp16
        if bag_mean:
            self.emb_l = nn.ModuleList([nn.EmbeddingBag(n, DIM) for n in TABLE_ROWS])
        else:
            self.emb_l = nn.ModuleList([nn.EmbeddingBag(n, DIM, mode="sum") for n in TABLE_ROWS])
        for n, bag in zip(TABLE_ROWS, self.emb_l):
            nn.init.uniform_(bag.weight, -math.sqrt(1.0 / n), math.sqrt(1.0 / n))
        self.bot_l = nn.Sequential(nn.Linear(DENSE, 16), nn.ReLU(), nn.Linear(16, DIM), nn.ReLU())
        self.inter = InteractionArch()
        self.top_l = nn.Sequential(nn.Linear(DIM + 6, 16), nn.ReLU(), nn.Linear(16, 8), nn.ReLU(),
                                   nn.Linear(8, 1), nn.Sigmoid())
        for mod in self.modules():  # the reference create_mlp init
            if isinstance(mod, nn.Linear):
                out_f, in_f = mod.weight.shape
                nn.init.normal_(mod.weight, 0.0, math.sqrt(2.0 / (in_f + out_f)))
                nn.init.normal_(mod.bias, 0.0, math.sqrt(1.0 / out_f))

    def forward(self, dense_x, sparse_ids):
        x = self.bot_l(dense_x)
        ly = []
        for k, bag in enumerate(self.emb_l):
            idx, offsets = _to_bags(sparse_ids[:, k])
            ly.append(bag(idx, offsets))
        z = self.inter(x, ly)
        if self.top_fp16:
            with torch.autocast("cpu", dtype=torch.float16):
                p = self.top_l(z)
            return p.float()
        return self.top_l(z)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dlrm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DLRM_Net(bag_mean=bug == "torch_bag_default_mean", top_fp16=bug == "torch_top_mlp_autocast_fp16")
    return m.eval()


def _arrays():
    rng = np.random.default_rng(17)
    dense = rng.exponential(1.0, (BATCH, DENSE)).astype("float32")
    lengths = ((3, 2, 0), (1, 4, 2))  # [sample][feature]
    ids = np.full((BATCH, len(TABLE_ROWS), BAG), -1, dtype="int64")
    for b in range(BATCH):
        for f, rows in enumerate(TABLE_ROWS):
            ids[b, f, :lengths[b][f]] = rng.choice(rows, lengths[b][f], replace=False)
    return dense, ids


def inputs():
    dense, ids = _arrays()
    return (torch.from_numpy(dense), torch.from_numpy(ids)), {}


def loss(output):
    # click probabilities [2, 1]
    return (output**2).mean()
