"""Hand-written SwAV-style port in TRAINING mode, torch side ("person B", the facebookresearch/swav
main_swav.py way, re-implemented from the paddle original port_swav_train_paddle.py).

    SwAVModel: registers feature_net (Sequential: Linear 12 -> 32, ReLU, Dropout(0.1),
        Linear 32 -> 32, ReLU: .0-.4), projection_head (Sequential: Linear 32 -> 32 bias=False,
        BatchNorm1d(32), ReLU(inplace), Linear 32 -> 16: .0-.3), prototypes (Linear 16 -> 8,
        bias=False: weight [8, 16], one prototype per ROW)
    forward(*crops):
        in training, first the swav loop's prototype normalisation, done on a COPY:
        w = prototypes.weight.data.clone(); w = F.normalize(w, dim=1, p=2);
        prototypes.weight.copy_(w) (under torch.no_grad());
        x = torch.cat(crops) (one pass), z = F.normalize(projection_head(feature_net(x)), dim=1)
        -> (prototypes(z) [32, 8], z [32, 16])

Loss (swav's loop): for crop_id in (0, 1): with torch.no_grad(): q = distributed_sinkhorn(out
of that crop) (single process: Q = exp(out / 0.05).t() [K, B], 3 iterations of row / column
normalisation, Q *= B, .t()); subloss over the OTHER crops v (np.delete(arange(2), crop_id)):
-mean(sum(q * log_softmax(out_v / 0.1, dim=1), dim=1)); loss += subloss / (2 - 1); loss /= 2.
Optimizer: torch.optim.SGD(lr 0.05, momentum 0.9, weight_decay 5e-4), one group.
Data: the same two views as the paddle side (default_rng(3830 + step), same recipe).

PADIFF_BUG (this side only):
  torch_no_momentum -> SGD(lr, weight_decay=5e-4) without momentum=0.9: the porter took paddle's
              Momentum call, which relies on its default momentum 0.9, and torch's SGD default
              is 0
  torch_self_predict -> the sub-loss loops over ALL crops (np.delete forgotten): each crop also
              predicts its own codes, loss divided by (2 - 1) as before
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_no_momentum", "torch_self_predict"} | {"paddle_keep_prob"}  # the paddle side's, ignored here
N_CROPS, BATCH = 2, 16
TEMPERATURE, EPSILON, SINKHORN_ITERS = 0.1, 0.05, 3
LR, MOMENTUM, WEIGHT_DECAY = 0.05, 0.9, 5e-4


def make_crops(step):
    rng = np.random.default_rng(3830 + step)
    base = rng.standard_normal((BATCH, 12))
    crops = []
    for _ in range(N_CROPS):
        mult = 1.0 + 0.2 * rng.standard_normal((BATCH, 12))
        add = 0.1 * rng.standard_normal((BATCH, 12))
        crops.append(torch.from_numpy((base * mult + add).astype(np.float32)))
    return crops


class SwAVModel(nn.Module):
    def __init__(self, hidden=32, output_dim=16, nmb_prototypes=8, drop=0.1):
        super().__init__()
        self.feature_net = nn.Sequential(
            nn.Linear(12, hidden), nn.ReLU(), nn.Dropout(drop), nn.Linear(hidden, hidden), nn.ReLU())
        self.projection_head = nn.Sequential(
            nn.Linear(hidden, hidden, bias=False), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True),
            nn.Linear(hidden, output_dim))
        self.prototypes = nn.Linear(output_dim, nmb_prototypes, bias=False)

    def forward(self, *crops):
        if self.training:
            with torch.no_grad():
                w = self.prototypes.weight.data.clone()
                w = F.normalize(w, dim=1, p=2)
                self.prototypes.weight.copy_(w)
        x = torch.cat(crops)
        z = F.normalize(self.projection_head(self.feature_net(x)), dim=1, p=2)
        return self.prototypes(z), z


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = SwAVModel()
    m.train()
    return m


def inputs(step=0):
    return tuple(make_crops(step)), {}


@torch.no_grad()
def distributed_sinkhorn(out):
    Q = torch.exp(out / EPSILON).t()  # K x B
    B = Q.shape[1]
    K = Q.shape[0]
    sum_Q = torch.sum(Q)
    Q /= sum_Q
    for _ in range(SINKHORN_ITERS):
        sum_of_rows = torch.sum(Q, dim=1, keepdim=True)
        Q /= sum_of_rows
        Q /= K
        Q /= torch.sum(Q, dim=0, keepdim=True)
        Q /= B
    Q *= B
    return Q.t()


def loss(output_pair):
    output = output_pair[0]
    bs = BATCH
    total = 0
    for crop_id in range(N_CROPS):
        with torch.no_grad():
            out = output[bs * crop_id: bs * (crop_id + 1)].detach()
            q = distributed_sinkhorn(out)[-bs:]
        subloss = 0
        others = np.arange(N_CROPS) if bug(BUGS) == "torch_self_predict" else np.delete(np.arange(N_CROPS), crop_id)
        for v in others:
            x = output[bs * v: bs * (v + 1)] / TEMPERATURE
            subloss -= torch.mean(torch.sum(q * F.log_softmax(x, dim=1), dim=1))
        total += subloss / (N_CROPS - 1)
    return total / N_CROPS


def optimizer(model):
    if bug(BUGS) == "torch_no_momentum":
        return torch.optim.SGD(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    return torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)
