"""A VGG-style Sequential, paddle side: numbered slots (features.0 ... features.6) that the
torch side numbers the same way."""
import paddle
from _common import image
from paddle import nn


def model():
    paddle.seed(0)
    m = nn.Sequential(
        nn.Conv2D(3, 8, 3, padding=1), nn.BatchNorm2D(8), nn.ReLU(),
        nn.Conv2D(8, 8, 3, padding=1), nn.BatchNorm2D(8), nn.ReLU(),
        nn.AdaptiveAvgPool2D(1),
    )
    m.eval()
    return m


def inputs():
    return paddle.to_tensor(image())


def loss(out):
    return (out**2).mean()
