"""Two ports of a style-modulated generator that nest the same layers differently (StyleGAN2's
official layout here, a rewrite's in styled_torch.py), with user classes on both sides:

* here a layer holds its convolution weight ``[C, C, 3, 3]``, bias and noise strength itself,
  with an ``affine`` child; torch's splits them over ``conv`` (weight ``[1, C, C, 3, 3]``, with a
  ``modulation`` child), ``noise`` and ``activate``: no name, type or index relates them, the
  subtrees hold the same tensors (unit by unit pairing);
* the fully connected class stores ``[in, out]`` here and ``[out, in]`` there: the non-square
  matrices show it, and the square one (``[16, 16]``) is turned the same way.

PADIFF_BUG (this side): paddle_noise_unscaled -> the second layer adds its noise unscaled."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug
from paddle import nn

C, W = 8, 16


class FC(nn.Layer):
    def __init__(self, d_in: int, d_out: int, bias_init: float = 0.0):
        super().__init__()
        self.weight = self.create_parameter([d_in, d_out], default_initializer=nn.initializer.Normal(0.0, d_in ** -0.5))
        self.bias = self.create_parameter([d_out], default_initializer=nn.initializer.Constant(bias_init))

    def forward(self, x):
        return paddle.matmul(x, self.weight) + self.bias


class StyledLayer(nn.Layer):
    def __init__(self, index: int):
        super().__init__()
        self.index = index
        self.weight = self.create_parameter([C, C, 3, 3], default_initializer=nn.initializer.Normal(0.0, 0.2))
        self.noise_strength = self.create_parameter([1], default_initializer=nn.initializer.Constant(0.3))
        self.bias = self.create_parameter([C], default_initializer=nn.initializer.Normal(0.0, 0.5))
        self.affine = FC(W, C, bias_init=1.0)
        noise = np.random.default_rng(index).standard_normal((1, 1, 4, 4)).astype("float32")
        self.register_buffer("noise_const", paddle.to_tensor(noise), persistable=False)

    def forward(self, x, w):
        s = self.affine(w)
        y = F.conv2d(x * s.unsqueeze(-1).unsqueeze(-1), self.weight, padding=1)
        gain = 1.0 if (bug() == "paddle_noise_unscaled" and self.index == 1) else self.noise_strength
        y = y + self.noise_const * gain
        return F.leaky_relu(y + self.bias.reshape([1, -1, 1, 1]), 0.2)


class Mapping(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc0 = FC(8, W)
        self.fc1 = FC(W, W)

    def forward(self, z):
        return self.fc1(F.leaky_relu(self.fc0(z), 0.2))


class Synthesis(nn.Layer):
    def __init__(self):
        super().__init__()
        self.const = self.create_parameter([C, 4, 4], default_initializer=nn.initializer.Normal(0.0, 1.0))
        self.l0 = StyledLayer(0)
        self.l1 = StyledLayer(1)

    def forward(self, w):
        x = self.const.unsqueeze(0).tile([w.shape[0], 1, 1, 1])
        return self.l1(self.l0(x, w), w)


class Generator(nn.Layer):
    def __init__(self):
        super().__init__()
        self.synthesis = Synthesis()
        self.mapping = Mapping()

    def forward(self, z):
        return self.synthesis(self.mapping(z))


def latent() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((2, 8)).astype("float32")


def model():
    paddle.seed(0)
    return Generator().eval()


def inputs():
    return (paddle.to_tensor(latent()),), {}


def loss(out):
    return out.mean()
