"""Learned query vectors joined to the text the way paddlenlp's BLIP-2 does it: the text ids
are embedded, then the queries are concatenated (here after them; the other side embeds ids
that hold placeholders for the queries and overwrites their rows, as HF's BLIP-2 does).
PADIFF_BUG=paddle_act: ReLU instead of GELU in the feed-forward."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import B, D, V, bug, ids
from paddle import nn

Q = 3


class FFN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(D, 2 * D)
        self.down = nn.Linear(2 * D, D)
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        act = F.relu if bug() == "paddle_act" else F.gelu
        return self.norm(x + self.down(act(self.up(x))))


class Model(nn.Layer):
    def __init__(self):
        super().__init__()
        self.query_tokens = self.create_parameter([1, Q, D])
        self.embed = nn.Embedding(V + 1, D)
        self.ffn = FFN()

    def forward(self, input_ids):
        return self.ffn(paddle.concat([self.embed(input_ids), self.query_tokens.expand([B, Q, D])], axis=1))


def model():
    paddle.seed(0)
    m = Model()
    m.query_tokens.set_value(np.random.default_rng(1).standard_normal((1, Q, D)).astype("float32"))
    return m.eval()


def inputs():
    return paddle.to_tensor(ids())


def loss(out):
    return (out[..., : D // 2] ** 2).mean()
