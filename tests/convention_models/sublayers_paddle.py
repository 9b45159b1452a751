"""A decoder block whose two ports fuse different projections: this side keeps q, k and v apart
and fuses the feed-forward's gate|up (``gate_up_proj``); the torch side (sublayers_torch.py)
fuses ``Wqkv`` and keeps ``w1``/``w3`` apart. Both fused weights are [3d, d] here (the feed-forward 1.5 d wide) and one
class of Linear: only what the names say (an attention's roles against a feed-forward's) keeps
them apart. The per-head q/k LayerNorms are a list of one norm per head (``q_layernorm.norms.i``)
against one [heads, head_dim] weight (``q_norm``); rotary embeddings turn the first 8 of each
head's 16 features, split in halves here and interleaved on the torch side.

PADIFF_BUG: torch_ffn_gelu (the torch side's: GELU in place of SiLU in the feed-forward)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug
from paddle import nn

D, HEADS, HD, ROT, FF, N = 32, 2, 16, 8, 48, 2
S = 8
BUGS = ("", "torch_ffn_gelu")


class Rotary(nn.Layer):
    def __init__(self):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / 10000.0 ** (paddle.arange(0, ROT, 2, dtype="float32") / ROT), persistable=False)

    def forward(self, seq_len):
        freqs = paddle.outer(paddle.arange(seq_len, dtype="float32"), self.inv_freq)
        emb = paddle.concat([freqs, freqs], axis=-1)
        return emb.cos(), emb.sin()


class HeadNorms(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norms = nn.LayerList([nn.LayerNorm(HD, bias_attr=False) for _ in range(HEADS)])

    def forward(self, x):  # [B, H, S, HD]
        return paddle.stack([norm(x[:, i]) for i, norm in enumerate(self.norms)], axis=1)


def rotate(x, cos, sin):
    x_rot, x_pass = x[..., :ROT], x[..., ROT:]
    x1, x2 = x_rot.chunk(2, axis=-1)
    x_rot = x_rot * cos + paddle.concat([-x2, x1], axis=-1) * sin
    return paddle.concat([x_rot, x_pass], axis=-1)


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, D)
        self.k_proj = nn.Linear(D, D)
        self.v_proj = nn.Linear(D, D)
        self.q_layernorm = HeadNorms()
        self.k_layernorm = HeadNorms()
        self.o_proj = nn.Linear(D, D, bias_attr=False)
        self.rotary_emb = Rotary()

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (p(x).reshape([b, s, HEADS, HD]).transpose([0, 2, 1, 3]) for p in (self.q_proj, self.k_proj, self.v_proj))
        q, k = self.q_layernorm(q), self.k_layernorm(k)
        cos, sin = self.rotary_emb(s)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        scores = paddle.matmul(q, k, transpose_y=True) / HD ** 0.5
        causal = paddle.triu(paddle.full([s, s], -1e9, dtype="float32"), diagonal=1)
        out = paddle.matmul(F.softmax(scores + causal, axis=-1), v)
        return self.o_proj(out.transpose([0, 2, 1, 3]).reshape([b, s, D]))


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_up_proj = nn.Linear(D, 2 * FF, bias_attr=False)
        self.down_proj = nn.Linear(FF, D, bias_attr=False)

    def forward(self, x):
        gate, up = self.gate_up_proj(x).chunk(2, axis=-1)
        return self.down_proj(F.silu(gate) * up)


class Layer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(D)
        self.self_attn = Attention()
        self.mlp = MLP()

    def forward(self, x):
        h = self.input_layernorm(x)
        return x + self.self_attn(h) + self.mlp(h)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = nn.LayerList([Layer() for _ in range(N)])
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def model():
    if bug() not in BUGS:
        raise ValueError(f"sublayers paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(7)
    for layer in net.layers:
        layer.input_layernorm.weight.set_value(rng.uniform(0.5, 1.5, D).astype("float32"))
        for norms in (layer.self_attn.q_layernorm, layer.self_attn.k_layernorm):
            for norm in norms.norms:
                norm.weight.set_value(rng.uniform(0.5, 1.5, HD).astype("float32"))
    return net.eval()


def inputs():
    x = np.random.default_rng(0).standard_normal((2, S, D)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(out):
    return out.pow(2).mean()


