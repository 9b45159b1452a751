"""Features of an image with a learned projection of a fixed sine/cosine grid added: here the
grid is built in the forward for every image of the batch, ``[b, 2f, h, w]``, and projected by a
1x1 Conv2D; the torch side (posmap_torch.py) builds it once, ``[h * w, 2f]``, and projects it
with a Linear. The same value, computed once on one side and per batch item on the other.

PADIFF_BUG: torch_grid_cos_first (the torch side's)."""
import numpy as np
import paddle
from _common import bug, image
from paddle import nn

F, D, H, W = 3, 12, 8, 8


def grid() -> np.ndarray:
    ys, xs = np.meshgrid(np.arange(H) / H, np.arange(W) / W, indexing="ij")
    freqs = 2.0 ** np.arange(F)
    parts = [f(np.pi * k * (ys + 2 * xs)) for f in (np.sin, np.cos) for k in freqs]
    return np.stack(parts).astype("float32")  # [2F, H, W]


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(3, D, 3, padding=1)
        self.pos = nn.Conv2D(2 * F, D, 1)
        self.head = nn.Linear(D, 5)

    def forward(self, x):
        feats = self.conv(x)
        g = paddle.to_tensor(grid()).unsqueeze(0).expand([x.shape[0], 2 * F, H, W])
        out = (feats + self.pos(g)).flatten(2).transpose([0, 2, 1])
        return self.head(out)


def model():
    if bug() not in ("", "torch_grid_cos_first"):
        raise ValueError(f"posmap paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()
