"""Hand-written port, torch side: a tiny LambdaNetwork (LambdaResNet-style) classifier (written by "person B").

The same math as port_lambda_net_paddle.py, re-implemented by hand: input [2, 3, 8, 8]
(positional), stem conv 3x3 + BN + ReLU (16 channels), two lambda bottlenecks (the first with a
lambda conv r = 3 and intra-depth u = 2, the second with 2-D relative position embeddings over
the 8 x 8 map and u = 1), heads 4, dim_k 8, dim_v 4, global mean, Linear(16, 10): logits [2, 10].

Torch idioms on this side ("[b, n, k]" layouts, positions first):
- root `LambdaNet`: `stem` (nn.Sequential conv, BN, ReLU), `stages` (nn.Sequential of the two
  Bottlenecks, called once), `fc` nn.Linear(16, 10); the global pool is an inline mean.
- `Bottleneck` registers `lam` (LambdaConv) FIRST, then `reduce` = nn.Sequential(Conv2d 1x1,
  BatchNorm2d, ReLU) and `post` = nn.Sequential(BatchNorm2d, ReLU, Conv2d 1x1, BatchNorm2d), and
  `act` (nn.ReLU) after the residual sum.
- `LambdaConv`: ONE fused `qkv` 1x1 Conv2d (no bias), output channels [q (h k) | k (u k) |
  v (u v)], split on dim 1; `bn_q`, `bn_v` BatchNorm2d on the q / v parts; then everything is
  flattened to positions-first [b, n, h, k] / [b, n, u, k] / [b, n, u, v]; keys softmax over
  dim 1 (positions).
  * local context: `lambda_conv` = nn.Conv2d(u, k, 3, padding 1) applied to v folded as
    [b * v, u, H, W] (a 3-D conv with depth kernel 1 is a 2-D conv over the folded batch);
  * global context: `rel_emb` parameter [k, u, 15, 15] and a non-persistent buffer `rel_pos`
    [64, 64, 2] (per (query n, key m) the 2-D offset pos_m - pos_n + 7), gathered in forward.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_key_softmax_dim -> the keys are softmax-normalised over dim -1 (the key depth k, last in
                           this positions-first layout) instead of dim 1 (the positions)
  torch_keys_bf16       -> the key softmax is computed in bfloat16 and cast back to float32
                           (a leftover of mixed-precision training code; precision-level)
"""
import os

import numpy as np
import torch
from torch import nn

BATCH, IMG, DIM, NUM_CLASSES = 2, 8, 16, 10
OWN_BUGS = {"torch_key_softmax_dim", "torch_keys_bf16"}
OTHER_BUGS = {"paddle_relpos_sign", "paddle_heads_inner"}


def calc_rel_pos(n):
    pos = torch.stack(torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij"))  # [2, n, n]
    pos = pos.flatten(1).t()  # [n*n, 2]
    rel = pos[None, :, :] - pos[:, None, :]  # [n, m, 2] = pos_m - pos_n
    return rel + (n - 1)


class LambdaConv(nn.Module):
    def __init__(self, in_ch, out_ch, heads=4, k=8, u=1, m=None, local_r=None, softmax_dim=1,
                 keys_bf16=False):
        super().__init__()
        self.heads, self.kk, self.uu = heads, k, u
        self.vv = out_ch // heads
        self.softmax_dim, self.keys_bf16 = softmax_dim, keys_bf16
        self.split = [k * heads, k * u, self.vv * u]
        self.qkv = nn.Conv2d(in_ch, sum(self.split), 1, bias=False)
        self.bn_q = nn.BatchNorm2d(k * heads)
        self.bn_v = nn.BatchNorm2d(self.vv * u)
        self.local_r = local_r
        if local_r is not None:
            self.lambda_conv = nn.Conv2d(u, k, local_r, padding=local_r // 2)
        else:
            self.rel_emb = nn.Parameter(torch.randn(k, u, 2 * m - 1, 2 * m - 1))
            self.register_buffer("rel_pos", calc_rel_pos(m), persistent=False)

    def forward(self, x):
        b, _, H, W = x.shape
        n = H * W
        q, k, v = torch.split(self.qkv(x), self.split, dim=1)
        q, v = self.bn_q(q), self.bn_v(v)
        q = q.flatten(2).transpose(1, 2).reshape(b, n, self.heads, self.kk)  # [b, n, h, k]
        k = k.flatten(2).transpose(1, 2).reshape(b, n, self.uu, self.kk)  # [b, n, u, k]
        v = v.flatten(2).transpose(1, 2).reshape(b, n, self.uu, self.vv)  # [b, n, u, v]
        if self.keys_bf16:
            k = k.to(torch.bfloat16).softmax(dim=self.softmax_dim).float()
        else:
            k = k.softmax(dim=self.softmax_dim)
        lam_c = torch.einsum("bnuk,bnuv->bkv", k, v)
        y_c = torch.einsum("bnhk,bkv->bnhv", q, lam_c)
        if self.local_r is not None:
            v_img = v.permute(0, 3, 2, 1).reshape(b * self.vv, self.uu, H, W)  # [b*v, u, H, W]
            lam_p = self.lambda_conv(v_img).reshape(b, self.vv, self.kk, n)  # [b, v, k, n]
            y_p = torch.einsum("bnhk,bvkn->bnhv", q, lam_p)
        else:
            i, j = self.rel_pos.unbind(dim=-1)
            emb = self.rel_emb[:, :, i, j]  # [k, u, n, m]
            lam_p = torch.einsum("kunm,bmuv->bnkv", emb, v)
            y_p = torch.einsum("bnhk,bnkv->bnhv", q, lam_p)
        y = (y_c + y_p).reshape(b, n, self.heads * self.vv)
        return y.transpose(1, 2).reshape(b, -1, H, W)


class Bottleneck(nn.Module):
    def __init__(self, planes, lam_kw):
        super().__init__()
        self.lam = LambdaConv(planes, planes, **lam_kw)
        self.reduce = nn.Sequential(nn.Conv2d(planes, planes, 1, bias=False), nn.BatchNorm2d(planes), nn.ReLU())
        self.post = nn.Sequential(nn.BatchNorm2d(planes), nn.ReLU(), nn.Conv2d(planes, planes, 1, bias=False),
                                  nn.BatchNorm2d(planes))
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(x + self.post(self.lam(self.reduce(x))))


class LambdaNet(nn.Module):
    def __init__(self, softmax_dim=1, keys_bf16=False):
        super().__init__()
        kw = {"heads": 4, "k": 8, "softmax_dim": softmax_dim, "keys_bf16": keys_bf16}
        self.stem = nn.Sequential(nn.Conv2d(3, DIM, 3, padding=1, bias=False), nn.BatchNorm2d(DIM), nn.ReLU())
        self.stages = nn.Sequential(
            Bottleneck(DIM, dict(kw, u=2, local_r=3)),
            Bottleneck(DIM, dict(kw, u=1, m=IMG)),
        )
        self.fc = nn.Linear(DIM, NUM_CLASSES)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(x.mean(dim=(2, 3)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_lambda_net torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = LambdaNet(softmax_dim=-1 if bug == "torch_key_softmax_dim" else 1, keys_bf16=bug == "torch_keys_bf16")
    return m.eval()


def _image():
    rng = np.random.default_rng(36)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
