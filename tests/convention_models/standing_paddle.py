"""The last tensor standing, paddle side: three layers drawn as other classes on the torch side
(standing_torch.py), each the only trainable tensor left in its place, all of it correct:

* an ``Embedding`` ``[V, C]`` looked up by token id here against a pointwise ``Conv1d``
  ``[C, V, 1]`` over one-hot tokens there;
* a ``Linear`` ``[C, F*k*k]`` whose output is reshaped to ``[F, k, k]`` here against a
  ``ConvTranspose2d`` ``[C, F, k, k]`` on a 1x1 input there;
* a user layer's own weight ``[P, Q, R]`` used by einsum here against ``[Q, P, R]`` there;
* two score vectors ``[1, H, D]`` registered source first here against one ``[H, 2D]`` holding
  the target half first there: no name says which half is which; the values do.

PADIFF_BUG (this side): paddle_mix_axis -> the user layer contracts its weight over the wrong
axis pairing (its two first axes swapped in the einsum, square in neither: P != Q, so it uses
the transposed weight's elements as another shape); paddle_score_slope -> the scorer's
LeakyReLU left at paddle's default slope 0.01 instead of 0.2."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug
from paddle import nn

V, C, FM, K, B, T = 12, 6, 4, 3, 2, 5
P, Q, R = 3, 4, 2
H, D = 2, 2  # H * D == Q


class Mixer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([P, Q, R], default_initializer=nn.initializer.Normal(0.0, 0.5))

    def forward(self, x):  # x [N, P*R] -> [N, Q]
        x = x.reshape([x.shape[0], P, R])
        if bug() == "paddle_mix_axis":
            w = self.w.reshape([Q, P, R])
            return paddle.einsum("npr,qpr->nq", x, w)
        return paddle.einsum("npr,pqr->nq", x, self.w)


class Scorer(nn.Layer):
    def __init__(self):
        super().__init__()
        init = nn.initializer.Normal(0.0, 1.0)
        self.a_src = self.create_parameter([1, H, D], default_initializer=init)
        self.a_dst = self.create_parameter([1, H, D], default_initializer=init)
        self.act = nn.LeakyReLU() if bug() == "paddle_score_slope" else nn.LeakyReLU(0.2)

    def forward(self, x):  # [N, H*D] -> [N, H]
        h = x.reshape([x.shape[0], H, D])
        return self.act((h * self.a_dst).sum(-1)) - (h * self.a_src).sum(-1)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, C)
        self.up = nn.Linear(C, FM * K * K, bias_attr=False)
        self.conv = nn.Conv2D(FM, P * R, K)
        self.mixer = Mixer()
        self.score = Scorer()
        self.head = nn.Linear(H, 1)

    def forward(self, tokens):
        h = self.embed(tokens).reshape([B * T, C])
        img = F.relu(self.up(h).reshape([B * T, FM, K, K]))
        feat = F.relu(self.conv(img)).reshape([B * T, P * R])
        return self.head(self.score(F.tanh(self.mixer(feat)))).reshape([B, T])


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    tokens = np.random.default_rng(5).integers(0, V, size=(B, T)).astype("int64")
    return (paddle.to_tensor(tokens),), {}


def loss(out):
    return (out * out).mean()
