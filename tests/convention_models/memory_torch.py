"""Torch side of memory_paddle.py: the memory as root buffers ``queue [D, K]`` (codes as
columns) and ``queue_ptr``."""
import torch
import torch.nn.functional as F
from _common import bug, hidden
from torch import nn

D, K = 16, 24


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(D, D)
        self.register_buffer("queue", F.normalize(torch.randn(D, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _enqueue(self, keys):
        n, at = keys.shape[0], int(self.queue_ptr)
        self.queue[:, at:at + n] = keys.T
        self.queue_ptr[0] = (at + n) % K

    def forward(self, x):
        q = F.normalize(self.encoder(x.mean(dim=1)), dim=1)
        logits = q @ self.queue.clone().detach()
        self._enqueue(q.detach())
        return logits


def model():
    if bug() not in ("", "paddle_write_before_read"):
        raise ValueError(f"memory torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
