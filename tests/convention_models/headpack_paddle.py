"""A small gated-attention LM whose head has as many rows (a vocabulary of 2d) as a block's
gate and output projections together, and as its MLP's gate and up projections each: here
every projection is a Linear of its own (q, k, v, g, o; gate, up, down), each sub-layer in a
module of its own with a norm inside the attention; the torch side (headpack_torch.py) packs
q|k|v in one Linear and gate|up in another. The LM head is no pack of one block's g and o:
every block has such a pair, and one tensor outside the blocks cannot hold them all.

PADIFF_BUG: paddle_gate_sigmoid_missing (this side: the output gate is used without its
sigmoid, inline in block 1's attention), torch_gate_tanh (the torch side's: block 0 squashes
the output gate with tanh)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import V, bug, ids
from paddle import nn

D = 16
BUGS = ("", "paddle_gate_sigmoid_missing", "torch_gate_tanh")


class Attention(nn.Layer):
    def __init__(self, index):
        super().__init__()
        self.index = index
        self.q_proj = nn.Linear(D, D)
        self.k_proj = nn.Linear(D, D)
        self.v_proj = nn.Linear(D, D)
        self.g_proj = nn.Linear(D, D)
        self.o_norm = nn.LayerNorm(D)
        self.o_proj = nn.Linear(D, D)

    def forward(self, h):
        s = self.q_proj(h) @ self.k_proj(h).transpose([0, 2, 1]) * D ** -0.5
        a = self.o_norm(F.softmax(s, axis=-1) @ self.v_proj(h))
        g = self.g_proj(h)
        if not (bug() == "paddle_gate_sigmoid_missing" and self.index == 1):
            g = F.sigmoid(g)
        return self.o_proj(a * g)


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(D, 2 * D)
        self.up_proj = nn.Linear(D, 2 * D)
        self.down_proj = nn.Linear(2 * D, D)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Layer):
    def __init__(self, index):
        super().__init__()
        self.attn_norm = nn.LayerNorm(D)
        self.attn = Attention(index)
        self.mlp_norm = nn.LayerNorm(D)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.layers = nn.LayerList([Block(i) for i in range(2)])
        self.lm_head = nn.Linear(D, 2 * D)

    def forward(self, tok):
        x = self.embed(tok)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(x)


def model():
    if bug() not in BUGS:
        raise ValueError(f"headpack paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(6)
    for layer in net.layers:
        for norm in (layer.attn_norm, layer.attn.o_norm, layer.mlp_norm):
            norm.weight.set_value(rng.uniform(0.5, 1.5, D).astype("float32"))
            norm.bias.set_value(rng.normal(0.0, 0.3, D).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(ids()),), {}


def loss(out):
    return out.pow(2).mean()
