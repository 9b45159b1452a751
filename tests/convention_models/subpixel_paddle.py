"""A sub-pixel upsampler: a convolution to ``C * r * r`` channels and ``nn.PixelShuffle`` (channel
``c * r * r + i * r + j`` fills sub-pixel (i, j) of output channel c), against a hand-written
depth-to-space in TensorFlow's order (subpixel_torch.py: channel ``(i * r + j) * C + c``). The
same picture once the convolution's output channels are permuted.

PADIFF_BUG (this side): paddle_tail_offset -> 0.5 is added after the last convolution."""
import paddle
from _common import bug, image
from paddle import nn

C, R = 3, 2


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, C, 3, padding=1)
        self.up = nn.Sequential(nn.Conv2D(C, C * R * R, 3, padding=1), nn.PixelShuffle(R))
        self.tail = nn.Conv2D(C, 2, 3, padding=1)

    def forward(self, x):
        y = self.tail(self.up(self.stem(x)))
        return y + 0.5 if bug() == "paddle_tail_offset" else y


def model():
    if bug() not in ("", "paddle_tail_offset", "torch_ij_swapped"):
        raise ValueError(f"subpixel paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()
