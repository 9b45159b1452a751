"""Hand-written port, torch side: a tiny DGCNN point-cloud classifier (written by "person B").

The same math as port_dgcnn_paddle.py, re-implemented by hand in the style of the reference
WangYueFt/dgcnn PyTorch code. Input: points [2, 3, 30] (positional; CHANNELS-FIRST, the
transpose of the paddle side's [B, N, 3] array, same numpy rng seed 70). Output: logits [2, 5].
k = 4 (each point's own index is among its neighbours), edge features [x_j - x_i, x_i].

Torch idioms on this side:
- `knn(x, k)` and `get_graph_feature(x, k)` are module-level functions (the reference code's):
  the negative squared distance -||x_i||^2 + 2 x_i.x_j - ||x_j||^2 from one matmul, topk, an
  index_base offset per cloud, a gather from the [B * N, C] table, and the edge tensor permuted
  to [B, 2C, N, k]. They are called inline in `EdgeConvBlock.forward` (no kNN module).
- root `DGCNN`: `edge_convs` nn.ModuleList of two `EdgeConvBlock`, then `conv5` nn.Sequential(
  nn.Conv1d(32, 32, 1, bias=False), nn.BatchNorm1d(32), nn.LeakyReLU(0.2)) on the concatenated
  [B, 32, N] map, F.adaptive_max_pool1d / F.adaptive_avg_pool1d inline, then `linear1`
  nn.Linear(64, 32, bias=False), `bn6` nn.BatchNorm1d(32), F.leaky_relu inline, `dp1`
  nn.Dropout(0.5), `linear2` nn.Linear(32, 5).
- `EdgeConvBlock`: `conv` = nn.Sequential(nn.Conv2d(2C, out, 1, bias=False),
  nn.BatchNorm2d(out), nn.LeakyReLU(0.2)) on the [B, 2C, N, k] edge map, then
  .max(dim=-1)[0]: [B, out, N].

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_knn_farthest -> knn() builds the POSITIVE squared distance (||x_i||^2 - 2 x_i.x_j +
                        ||x_j||^2) but keeps topk's largest=True, so every point takes its k
                        FARTHEST points as neighbours (both EdgeConv blocks)
  torch_bn5_eps      -> conv5's nn.BatchNorm1d is built with eps=1e-3 (a Keras default) instead
                        of 1e-5 (a precision-level difference)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

K_NEIGHBOURS, NUM_POINTS, BATCH, OUTPUT_CHANNELS = 4, 30, 2, 5
EMB_DIMS = 32
OWN_BUGS = {"torch_knn_farthest", "torch_bn5_eps"}
OTHER_BUGS = {"paddle_edge_feature_order", "paddle_leaky_default_slope"}


def knn(x, k, farthest=False):
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = torch.sum(x**2, dim=1, keepdim=True)
    if farthest:
        pairwise_distance = xx + inner + xx.transpose(2, 1)
    else:
        pairwise_distance = -xx - inner - xx.transpose(2, 1)
    idx = pairwise_distance.topk(k=k, dim=-1)[1]  # (batch_size, num_points, k)
    return idx


def get_graph_feature(x, k, farthest=False):
    batch_size, num_dims, num_points = x.size()
    idx = knn(x, k=k, farthest=farthest)
    idx_base = torch.arange(0, batch_size, device=x.device).view(-1, 1, 1) * num_points
    idx = (idx + idx_base).view(-1)
    x = x.transpose(2, 1).contiguous()  # (batch_size, num_points, num_dims)
    feature = x.view(batch_size * num_points, -1)[idx, :]
    feature = feature.view(batch_size, num_points, k, num_dims)
    x = x.view(batch_size, num_points, 1, num_dims).repeat(1, 1, k, 1)
    feature = torch.cat((feature - x, x), dim=3).permute(0, 3, 1, 2).contiguous()
    return feature  # (batch_size, 2 * num_dims, num_points, k)


class EdgeConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, k, farthest=False):
        super().__init__()
        self.k, self.farthest = k, farthest
        self.conv = nn.Sequential(
            nn.Conv2d(2 * in_channels, out_channels, kernel_size=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.LeakyReLU(negative_slope=0.2),
        )

    def forward(self, x):
        x = get_graph_feature(x, self.k, self.farthest)
        x = self.conv(x)
        return x.max(dim=-1, keepdim=False)[0]


class DGCNN(nn.Module):
    def __init__(self, farthest=False, bn5_eps=1e-5):
        super().__init__()
        self.edge_convs = nn.ModuleList([
            EdgeConvBlock(3, 16, K_NEIGHBOURS, farthest),
            EdgeConvBlock(16, 16, K_NEIGHBOURS, farthest),
        ])
        self.conv5 = nn.Sequential(
            nn.Conv1d(32, EMB_DIMS, kernel_size=1, bias=False),
            nn.BatchNorm1d(EMB_DIMS, eps=bn5_eps),
            nn.LeakyReLU(negative_slope=0.2),
        )
        self.linear1 = nn.Linear(EMB_DIMS * 2, 32, bias=False)
        self.bn6 = nn.BatchNorm1d(32)
        self.dp1 = nn.Dropout(p=0.5)
        self.linear2 = nn.Linear(32, OUTPUT_CHANNELS)

    def forward(self, x):
        batch_size = x.size(0)
        x1 = self.edge_convs[0](x)
        x2 = self.edge_convs[1](x1)
        x = self.conv5(torch.cat((x1, x2), dim=1))
        x1 = F.adaptive_max_pool1d(x, 1).view(batch_size, -1)
        x2 = F.adaptive_avg_pool1d(x, 1).view(batch_size, -1)
        x = torch.cat((x1, x2), 1)
        x = F.leaky_relu(self.bn6(self.linear1(x)), negative_slope=0.2)
        x = self.dp1(x)
        return self.linear2(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dgcnn torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DGCNN(farthest=bug == "torch_knn_farthest", bn5_eps=1e-3 if bug == "torch_bn5_eps" else 1e-5)
    return m.eval()


def _points():
    rng = np.random.default_rng(70)
    return rng.standard_normal((BATCH, NUM_POINTS, 3)).astype("float32")


def inputs():
    return (torch.from_numpy(np.ascontiguousarray(_points().transpose(0, 2, 1))),), {}


def loss(output):
    # logits [2, 5]
    return (output**2).mean()
