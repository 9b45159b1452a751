"""A small decoder written the way one library writes it: separate ``q_proj``/``k_proj``/``v_proj``
with rotary embeddings in the half-split layout (feature j rotated with j + d/2) whose angles
each attention computes in its own forward (no table kept anywhere), and an output head of its
own (built as a copy of the embedding). The torch side (cisrope_torch.py) passes a complex ``freqs_cis`` table to every attention
(interleaved layout: features 2j and 2j + 1 rotated together) and ties its head to the
embedding.

PADIFF_BUG: paddle_mlp_relu (this side: the second block's feed-forward uses ReLU, not SiLU)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import B, S, V, bug
from paddle import nn

D, H, N = 16, 2, 2
HD = D // H


def rotate(x, n):
    inv = 1.0 / (10000 ** (paddle.arange(0, HD, 2, dtype="float32") / HD))
    f = paddle.arange(n, dtype="float32").unsqueeze(1) * inv.unsqueeze(0)  # [S, HD/2]
    emb = paddle.concat([f, f], axis=-1)
    x1, x2 = x[..., : HD // 2], x[..., HD // 2:]
    return x * emb.cos() + paddle.concat([-x2, x1], axis=-1) * emb.sin()


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, D, bias_attr=False)
        self.k_proj = nn.Linear(D, D, bias_attr=False)
        self.v_proj = nn.Linear(D, D, bias_attr=False)
        self.o_proj = nn.Linear(D, D, bias_attr=False)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (p(x).reshape([b, s, H, HD]).transpose([0, 2, 1, 3]) for p in (self.q_proj, self.k_proj, self.v_proj))
        q, k = rotate(q, s), rotate(k, s)
        w = paddle.matmul(q, k, transpose_y=True) / HD ** 0.5
        w = w + paddle.triu(paddle.full([s, s], -1e9), 1)
        y = paddle.matmul(F.softmax(w, axis=-1), v)
        return self.o_proj(y.transpose([0, 2, 1, 3]).reshape([b, s, D]))


class MLP(nn.Layer):
    def __init__(self, relu=False):
        super().__init__()
        self.gate_proj = nn.Linear(D, 2 * D, bias_attr=False)
        self.up_proj = nn.Linear(D, 2 * D, bias_attr=False)
        self.down_proj = nn.Linear(2 * D, D, bias_attr=False)
        self.relu = relu

    def forward(self, x):
        g = self.gate_proj(x)
        return self.down_proj((F.relu(g) if self.relu else F.silu(g)) * self.up_proj(x))


class Block(nn.Layer):
    def __init__(self, relu=False):
        super().__init__()
        self.input_norm = nn.LayerNorm(D)
        self.self_attn = Attention()
        self.post_norm = nn.LayerNorm(D)
        self.mlp = MLP(relu)

    def forward(self, x):
        x = x + self.self_attn(self.input_norm(x))
        return x + self.mlp(self.post_norm(x))


class Decoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(V, D)
        self.layers = nn.LayerList([Block(relu=bug() == "paddle_mlp_relu" and i == 1) for i in range(N)])
        self.norm = nn.LayerNorm(D)
        self.lm_head = nn.Linear(D, V, bias_attr=False)

    def forward(self, ids):
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def model():
    if bug() not in ("", "paddle_mlp_relu"):
        raise ValueError(f"cisrope paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Decoder()
    net.lm_head.weight.set_value(net.embed_tokens.weight.numpy().T)  # the port of a tied model: a copy
    return net


def inputs():
    ids = np.random.default_rng(0).integers(1, V, size=(B, S)).astype("int64")
    return (paddle.to_tensor(ids),), {}


def loss(out):
    return out.pow(2).mean()
