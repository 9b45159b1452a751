"""codebook: a vector quantizer whose codebook the forward rewrites (a moving average), trained
two steps with SGD. This side keeps the codebook and its running sums as two buffers ``[K, D]``,
takes the feature map channels-first and moves it to channels-last itself, returns
``(beta * commitment, quantized, perplexity)``, and the model returns the scaled term.
The torch side (codebook_torch.py) keeps them as a frozen parameter and a buffer ``[D, K]``,
is handed channels-last by its caller, returns ``(quantized, commitment, indices)`` and leaves
``beta`` to the loss function: two correct ports of one model."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

K, D, BETA, DECAY = 6, 4, 0.25, 0.9


class Quantizer(nn.Layer):
    def __init__(self):
        super().__init__()
        codes = np.random.default_rng(1).standard_normal((K, D)).astype("float32")
        self.register_buffer("_codes", paddle.to_tensor(codes))
        self.register_buffer("_sums", paddle.to_tensor(codes.copy()))

    def forward(self, x):
        z = x.transpose([0, 2, 3, 1])
        flat = z.reshape([-1, D])
        dist = (flat**2).sum(1, keepdim=True) - 2 * flat @ self._codes.T + (self._codes**2).sum(1)
        onehot = F.one_hot(dist.argmin(1), K).astype("float32")
        q = (onehot @ self._codes).reshape(z.shape)
        if self.training:
            with paddle.no_grad():
                self._sums = self._sums * DECAY + (1 - DECAY) * (onehot.T @ flat)
                self._codes = 0.5 * self._codes + 0.5 * self._sums
        commitment = F.mse_loss(q.detach(), z)
        q = z + (q - z).detach()
        probs = onehot.mean(0)
        perplexity = paddle.exp(-(probs * paddle.log(probs + 1e-10)).sum())
        return BETA * commitment, q.transpose([0, 3, 1, 2]), perplexity


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2D(3, D, 3, stride=2, padding=1)
        self.quant = Quantizer()
        self.dec = nn.Conv2D(D, 3, 1)

    def forward(self, x):
        term, q, _ = self.quant(self.enc(x))
        return self.dec(q), term


def model():
    if bug() not in ("", "torch_decay"):
        raise ValueError(f"codebook paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    m = Net()
    m.train()
    return m


def inputs():
    return paddle.to_tensor(image())


def loss(out):
    return (out[0] ** 2).mean() + out[1]


def optimizer(m):
    return paddle.optimizer.SGD(learning_rate=0.1, parameters=m.parameters())
