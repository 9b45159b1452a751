"""A patch embedding written as a Linear over patches flattened in (row, column, channel) order
here, as a strided convolution in torch's port (patchrows_torch.py): the Linear's weight
``[p * p * C, D]`` holds the conv's ``[D, C, p, p]`` with the channel axis last.

PADIFF_BUG (this side): paddle_patch_cols_rows -> the patches are flattened (column, row,
channel): the Linear sees the pixels of each patch transposed."""
import paddle
from _common import bug, image
from paddle import nn

P, C, D = 4, 3, 16


class PatchRows(nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(P * P * C, D)

    def forward(self, x):
        b, c, h, w = x.shape
        x = x.reshape([b, c, h // P, P, w // P, P])
        order = [0, 2, 4, 5, 3, 1] if bug() == "paddle_patch_cols_rows" else [0, 2, 4, 3, 5, 1]
        x = x.transpose(order).reshape([b, (h // P) * (w // P), P * P * c])
        return self.proj(x)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.patches = PatchRows()
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, 5)

    def forward(self, x):
        return self.head(self.norm(self.patches(x)).mean(1))


def model():
    if bug() not in ("", "paddle_patch_cols_rows"):
        raise ValueError(f"patchrows paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()
