"""The decoder of cisrope_paddle.py with its rotary angles computed once at the root and handed
to every layer as a (cos, sin) pair; the torch side (cistable_torch.py) hands a complex
``freqs_cis`` instead (the same angles as cis).

Only the tables' path differs from cisrope_paddle.py, whose feed-forward, inputs and loss it uses.

PADIFF_BUG: paddle_scale_by_dim (this side: every attention scales its scores by 1/head_dim, not
1/sqrt(head_dim): a bug in every attention, so no call of one confirms the rotary pairing)."""
import paddle
import paddle.nn.functional as F
from _common import V, bug
from cisrope_paddle import MLP, inputs, loss  # the same feed-forward, inputs and loss
from paddle import nn

__all__ = ["inputs", "loss", "model"]

D, H, N = 16, 2, 2
HD = D // H


def angles(n):
    inv = 1.0 / (10000 ** (paddle.arange(0, HD, 2, dtype="float32") / HD))
    f = paddle.arange(n, dtype="float32").unsqueeze(1) * inv.unsqueeze(0)  # [S, HD/2]
    return f.cos(), f.sin()


def rotate(x, cos, sin):
    cos, sin = paddle.concat([cos, cos], axis=-1), paddle.concat([sin, sin], axis=-1)
    x1, x2 = x[..., : HD // 2], x[..., HD // 2:]
    return x * cos + paddle.concat([-x2, x1], axis=-1) * sin


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, D, bias_attr=False)
        self.k_proj = nn.Linear(D, D, bias_attr=False)
        self.v_proj = nn.Linear(D, D, bias_attr=False)
        self.o_proj = nn.Linear(D, D, bias_attr=False)

    def forward(self, x, table):
        b, s, _ = x.shape
        q, k, v = (p(x).reshape([b, s, H, HD]).transpose([0, 2, 1, 3]) for p in (self.q_proj, self.k_proj, self.v_proj))
        q, k = rotate(q, *table), rotate(k, *table)
        w = paddle.matmul(q, k, transpose_y=True) / (HD if bug() == "paddle_scale_by_dim" else HD ** 0.5)
        w = w + paddle.triu(paddle.full([s, s], -1e9), 1)
        y = paddle.matmul(F.softmax(w, axis=-1), v)
        return self.o_proj(y.transpose([0, 2, 1, 3]).reshape([b, s, D]))


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.input_norm = nn.LayerNorm(D)
        self.self_attn = Attention()
        self.post_norm = nn.LayerNorm(D)
        self.mlp = MLP()

    def forward(self, x, table):
        x = x + self.self_attn(self.input_norm(x), table)
        return x + self.mlp(self.post_norm(x))


class Decoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(V, D)
        self.layers = nn.LayerList([Block() for _ in range(N)])
        self.norm = nn.LayerNorm(D)
        self.lm_head = nn.Linear(D, V, bias_attr=False)

    def forward(self, ids):
        x = self.embed_tokens(ids)
        table = angles(ids.shape[1])
        for layer in self.layers:
            x = layer(x, table)
        return self.lm_head(self.norm(x))


def model():
    if bug() not in ("", "paddle_scale_by_dim"):
        raise ValueError(f"cistable paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Decoder()
    net.lm_head.weight.set_value(net.embed_tokens.weight.numpy().T)  # the port of a tied model: a copy
    return net

