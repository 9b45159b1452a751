"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_triplet_train_paddle.py) the reid-strong-baseline way.

    ReIDNet: registers features = Sequential(Conv2d(3, 8, bias=False), BatchNorm2d, ReLU,
        Conv2d(8, 16, stride 2, bias=False), BatchNorm2d, ReLU) (.0-.5), neck = Sequential(Dropout(0.0),
        Linear 16 -> 16) (.0 .1); global average pooling (x.mean((2, 3))) and the L2 normalisation
        (x / x.norm(dim=1, keepdim=True).clamp_min(1e-12)) are inline in forward()
    forward(x [16, 3, 12, 12]) -> unit-norm embeddings [16, 16]

Data: the same P x K batches as the paddle side (default_rng(7280 + step), same recipe).
Loss (reid-strong-baseline's TripletLoss): euclidean_dist: xx + yy - 2 x y^T (addmm), clamp(min=1e-12),
sqrt; hard_example_mining: dist[is_pos].view(N, -1).max(1) and dist[is_neg].view(N, -1).min(1)
(every anchor has K = 4 positives, itself included, and 12 negatives); nn.MarginRankingLoss(margin
0.3)(dist_an, dist_ap, y = 1) = mean(max(0, dist_ap - dist_an + 0.3)).
Optimizer: SGD(lr 0.05, momentum 0.9, dampening 0, weight_decay 5e-4) over all parameters.

PADIFF_BUG (this side only):
  torch_no_sqrt   -> euclidean_dist returns the SQUARED distances (the .sqrt() after the clamp
              forgotten): the same triplets are mined (monotone), the hinge works on squared
              distances
  torch_dampening -> SGD(..., dampening=0.9): the Lua-torch optim.sgd habit (dampening defaults to
              the momentum there); torch applies no dampening to the first step (the buffer starts
              as the gradient), so update 1 is unchanged and the updates differ from update 2 on
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"torch_no_sqrt", "torch_dampening"} | {"paddle_drop_key"}  # the paddle side's, ignored here

NUM_INSTANCES, NUM_IDS_PER_BATCH, NUM_IDENTITIES, SIZE = 4, 4, 8, 12
EMBED_DIM, MARGIN = 16, 0.3
BASE_LR, MOMENTUM, WEIGHT_DECAY = 0.05, 0.9, 5e-4

_TARGETS = {}


def sample_batch(step):
    protos = np.random.default_rng(728).standard_normal((NUM_IDENTITIES, 3, SIZE, SIZE))
    rng = np.random.default_rng(7280 + step)
    pids = rng.choice(NUM_IDENTITIES, NUM_IDS_PER_BATCH, replace=False)
    targets = np.repeat(pids, NUM_INSTANCES)
    imgs = protos[targets] + 0.7 * rng.standard_normal((NUM_IDS_PER_BATCH * NUM_INSTANCES, 3, SIZE, SIZE))
    perm = rng.permutation(NUM_IDS_PER_BATCH * NUM_INSTANCES)
    return imgs[perm].astype(np.float32), targets[perm].astype(np.int64)


class ReIDNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
        )
        self.neck = nn.Sequential(nn.Dropout(0.0), nn.Linear(16, EMBED_DIM))

    def forward(self, x):
        feat = self.features(x).mean((2, 3))
        emb = self.neck(feat)
        return emb / emb.norm(dim=1, keepdim=True).clamp_min(1e-12)


def euclidean_dist(x, y):
    m, n = x.size(0), y.size(0)
    xx = torch.pow(x, 2).sum(1, keepdim=True).expand(m, n)
    yy = torch.pow(y, 2).sum(1, keepdim=True).expand(n, m).t()
    dist = (xx + yy).addmm(x, y.t(), beta=1, alpha=-2)
    dist = dist.clamp(min=1e-12)
    if bug(BUGS) == "torch_no_sqrt":
        return dist
    return dist.sqrt()


def hard_example_mining(dist_mat, labels):
    N = dist_mat.size(0)
    is_pos = labels.expand(N, N).eq(labels.expand(N, N).t())
    is_neg = labels.expand(N, N).ne(labels.expand(N, N).t())
    dist_ap, _ = torch.max(dist_mat[is_pos].contiguous().view(N, -1), 1, keepdim=True)
    dist_an, _ = torch.min(dist_mat[is_neg].contiguous().view(N, -1), 1, keepdim=True)
    return dist_ap.squeeze(1), dist_an.squeeze(1)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = ReIDNet()
    m.train()
    return m


def inputs(step=0):
    imgs, targets = sample_batch(step)
    _TARGETS["labels"] = torch.from_numpy(targets)
    return (torch.from_numpy(imgs),), {}


def loss(output):
    dist_mat = euclidean_dist(output, output)
    dist_ap, dist_an = hard_example_mining(dist_mat, _TARGETS["labels"])
    y = torch.ones_like(dist_an)
    return nn.MarginRankingLoss(margin=MARGIN)(dist_an, dist_ap, y)


def optimizer(model):
    dampening = 0.9 if bug(BUGS) == "torch_dampening" else 0.0
    return torch.optim.SGD(model.parameters(), lr=BASE_LR, momentum=MOMENTUM, dampening=dampening,
                           weight_decay=WEIGHT_DECAY)
