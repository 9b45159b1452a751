"""Twin of order_paddle.py, torch side: the fields stacked [hour, user, item] (the numeric field
first), attention through ``nn.MultiheadAttention`` (batch first), the rest alike.
PADIFF_BUG=torch_norm_eps: the norm after the attention takes eps 1e-2, not the default 1e-5."""
import numpy as np
import torch
from _common import B, bug
from torch import nn

D, USERS, ITEMS = 16, 20, 30


class FieldEmbedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.hour = nn.Linear(1, D)
        self.user = nn.Embedding(USERS, D)
        self.item = nn.Embedding(ITEMS, D)

    def forward(self, user, item, hour):
        return torch.stack([self.hour(hour), self.user(user), self.item(item)], dim=1)  # [B, 3, D]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = FieldEmbedder()
        self.attn = nn.MultiheadAttention(D, 2, batch_first=True)
        self.norm = nn.LayerNorm(D, eps=1e-2 if bug() == "torch_norm_eps" else 1e-5)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.ReLU(), nn.Linear(2 * D, D))
        self.head = nn.Linear(D, 1)

    def forward(self, user, item, hour):
        x = self.embed(user, item, hour)
        x = self.norm(x + self.attn(x, x, x, need_weights=False)[0])
        x = x + self.mlp(x)
        return self.head(x.mean(dim=1))


def model():
    if bug() not in ("", "torch_norm_eps"):
        raise ValueError(f"order torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    rng = np.random.default_rng(0)
    user = torch.from_numpy(rng.integers(0, USERS, B).astype("int64"))
    item = torch.from_numpy(rng.integers(0, ITEMS, B).astype("int64"))
    hour = torch.from_numpy(rng.standard_normal((B, 1)).astype("float32"))
    return (user, item, hour), {}


def loss(out):
    return out.pow(2).mean()
