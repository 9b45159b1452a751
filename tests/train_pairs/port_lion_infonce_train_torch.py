"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_lion_infonce_train_paddle.py): a dual encoder for retrieval, CLIP-style symmetric
InfoNCE with a learnable temperature, and Lion written by hand the lion-pytorch way (torch ships
no Lion).

    DualEncoder: registers log_inv_tau (an nn.Parameter of shape [1]), q_embed, d_embed (nn.Embedding 64 x 16),
        q_head, d_head (Sequential(Dropout 0.1, Linear 16 -> 32, GELU, Dropout 0.2, Linear 32 -> 16,
        LayerNorm 16), .0-.5); masked mean pooling and L2 normalisation are functions of the root
    forward(q_ids, q_mask, d_ids, d_mask) -> logits [8, 8] = log_inv_tau.exp() * q @ d.t()

Data: the same pairs as the paddle side (default_rng(4400 + step), the same recipe).
Loss: labels = arange(8); (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2.
Optimizer: Lion(torch.optim.Optimizer) (lucidrains/lion-pytorch update): p.mul_(1 - lr * wd);
update = sign(exp_avg * beta1 + grad * (1 - beta1)); p.add_(update, alpha=-lr);
exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2); lr 1e-3, betas (0.9, 0.99); two parameter groups:
weight decay 0.1 for tensors with ndim >= 2 (embeddings, Linear weights), 0 for the rest (biases,
LayerNorm, the temperature).

PADIFF_BUG (this side only):
  torch_loss_one_way   -> only the query -> document direction, F.cross_entropy(logits, labels)
              (the DPR / SimCSE loss), not the symmetric CLIP loss the paddle side trains with
  torch_lion_no_beta2  -> the momentum is updated first with beta1 and its sign is the update
              (exp_avg.mul_(beta1).add_(grad, 1 - beta1); p -= lr * sign(exp_avg): Signum, beta2 unused)
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn
from torch.optim import Optimizer

BUGS = {"torch_loss_one_way", "torch_lion_no_beta2"} | {"paddle_drop_args_swapped"}  # paddle side's, ignored here
V, E, H, D = 64, 16, 32, 16
N, QL, DL, N_SHARED = 8, 6, 10, 3


def pair_batch(step):
    rng = np.random.default_rng(4400 + step)
    q_lengths = rng.integers(3, QL + 1, N)
    d_lengths = rng.integers(5, DL + 1, N)
    q = rng.integers(1, V, (N, QL))
    d = rng.integers(1, V, (N, DL))
    d[:, :N_SHARED] = q[:, :N_SHARED]
    q_mask = np.arange(QL)[None, :] < q_lengths[:, None]
    d_mask = np.arange(DL)[None, :] < d_lengths[:, None]
    q = np.where(q_mask, q, 0).astype(np.int64)
    d = np.where(d_mask, d, 0).astype(np.int64)
    return q, q_mask, d, d_mask


def mean_pool(tokens, mask):
    mask = mask.unsqueeze(-1).to(tokens.dtype)
    return (tokens * mask).sum(1) / mask.sum(1)


def head(p_emb=0.1, p_hidden=0.2):
    return nn.Sequential(nn.Dropout(p_emb), nn.Linear(E, H), nn.GELU(), nn.Dropout(p_hidden),
                         nn.Linear(H, D), nn.LayerNorm(D))


class DualEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_inv_tau = nn.Parameter(torch.tensor([math.log(1 / 0.07)]))
        self.q_embed = nn.Embedding(V, E)
        self.d_embed = nn.Embedding(V, E)
        self.q_head = head()
        self.d_head = head()

    def forward(self, q_ids, q_mask, d_ids, d_mask):
        q = F.normalize(self.q_head(mean_pool(self.q_embed(q_ids), q_mask)), dim=-1)
        d = F.normalize(self.d_head(mean_pool(self.d_embed(d_ids), d_mask)), dim=-1)
        return self.log_inv_tau.exp() * q @ d.t()


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, signum=False):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))
        self.signum = signum

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]
                p.mul_(1 - group["lr"] * group["weight_decay"])
                if self.signum:
                    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                    p.add_(exp_avg.sign(), alpha=-group["lr"])
                    continue
                update = exp_avg.clone().mul_(beta1).add(grad, alpha=1 - beta1).sign_()
                p.add_(update, alpha=-group["lr"])
                exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = DualEncoder()
    m.train()
    return m


def inputs(step=0):
    q, q_mask, d, d_mask = pair_batch(step)
    return (torch.from_numpy(q), torch.from_numpy(q_mask), torch.from_numpy(d), torch.from_numpy(d_mask)), {}


def loss(output):
    logits = output
    labels = torch.arange(logits.size(0))
    if bug(BUGS) == "torch_loss_one_way":
        return F.cross_entropy(logits, labels)
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
    return Lion(groups, lr=1e-3, betas=(0.9, 0.99), signum=(bug(BUGS) == "torch_lion_no_beta2"))
