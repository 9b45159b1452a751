"""Learned output tokens read by an attention, a score head and one MLP per token, paddle side:
the tokens are two bare parameters (one ``cls_token`` [1, D], ``item_tokens`` [M, D]), the
attention has ``q_proj``/``k_proj``/``v_proj`` Linears to an inner width D / 2, the score head and
the per-token MLPs are lists of Linears. The torch side keeps the tokens in one Embedding, the
projections in a bare ``in_proj_weight`` of its own attention class, and the per-token MLPs as
stacks ``w1``, ``w2`` [M, D, D] and ``w3`` [M, D, K] used as ``x @ w[i]``.

PADIFF_BUG (this side): paddle_attn_scale -> the attention scales by the model width's head size
instead of the inner width's."""
import math

import paddle
from _common import D, bug, hidden
from paddle import nn

M, K, HEADS = 3, 4, 2
INNER = D // 2


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj = nn.Linear(D, INNER), nn.Linear(D, INNER), nn.Linear(D, INNER)
        self.out_proj = nn.Linear(INNER, D)

    def _heads(self, x):
        return x.reshape([x.shape[0], x.shape[1], HEADS, -1]).transpose([0, 2, 1, 3])

    def forward(self, q, k, v):
        q, k, v = self._heads(self.q_proj(q)), self._heads(self.k_proj(k)), self._heads(self.v_proj(v))
        per_head = (D if bug() == "paddle_attn_scale" else INNER) // HEADS
        w = nn.functional.softmax(paddle.matmul(q, k, transpose_y=True) / math.sqrt(per_head), axis=-1)
        out = paddle.matmul(w, v).transpose([0, 2, 1, 3])
        return self.out_proj(out.reshape([out.shape[0], out.shape[1], INNER]))


class MLP(nn.Layer):
    def __init__(self, out):
        super().__init__()
        self.layers = nn.LayerList([nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, out)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            x = nn.functional.relu(x) if i < len(self.layers) - 1 else x
        return x


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cls_token = self.create_parameter([1, D], default_initializer=nn.initializer.Normal())
        self.item_tokens = self.create_parameter([M, D], default_initializer=nn.initializer.Normal())
        self.attn = Attention()
        self.score_head = MLP(1)
        self.token_mlps = nn.LayerList([MLP(K) for _ in range(M)])

    def forward(self, x):
        tokens = paddle.concat([self.cls_token, self.item_tokens], axis=0).unsqueeze(0).expand([x.shape[0], 1 + M, D])
        t = tokens + self.attn(tokens, x, x)
        score = self.score_head(t[:, 0])
        items = paddle.stack([self.token_mlps[i](t[:, 1 + i]) for i in range(M)], axis=1)
        return score, items


def model():
    if bug() not in ("", "paddle_attn_scale"):
        raise ValueError(f"outtokens paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return paddle.to_tensor(hidden())


def loss(out):
    return (out[0] ** 2).mean() + (out[1] ** 2).mean()



