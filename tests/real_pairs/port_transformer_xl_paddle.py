"""Hand-written port, paddle side: a tiny Transformer-XL decoder with relative positional
attention and a segment memory (written by "person A", batch-major).

Sizes: vocab 40, hidden 32, 4 heads of 8, feed-forward 64, 2 layers, segment length 6, memory
length 5 (klen 11), batch 2. Post-LN layers (Transformer-XL's default pre_lnorm=False), LayerNorm
eps 1e-5, word embeddings scaled by sqrt(32), sinusoid RELATIVE position embeddings [sin | cos]
for the distances klen-1 .. 0, untied (per layer) r_w_bias / r_r_bias [4, 8]. No dropout.

Inputs: `input_ids` [2, 6] int64 and `mems` [2 layers, batch 2, mlen 5, 32] float32 (the hidden
states of the previous segment that enter each layer, BATCH-major). Output: `(logits [2, 6, 40],
new_mems [2, 2, 5, 32])`; new_mems[i] = the last 5 steps of concat(mems[i], input of layer i).

Paddle idioms on this side:
- root `TransfoXL`: `word_emb` (`ScaledEmbedding`, a subclass of nn.Embedding whose forward
  multiplies the lookup by sqrt(32); no child layer), `layers`
  (LayerList of `RelDecoderLayer`), `pos_enc` (`SinusoidRelEmbedding`, registered after the
  layers, called before them), `lm_head`. The causal mask [qlen, klen] (True = masked, a query
  at step i sees the memory and steps <= i) is built inline and passed down.
- `SinusoidRelEmbedding`: forward(pos_seq) -> [klen, 32] = concat(sin(pos * inv_freq),
  cos(pos * inv_freq)), inv_freq = exp(-ln(10000) * 2k / 32) (a non-persistable buffer).
- `RelDecoderLayer`: `attn`, `ff`, `norm1`, `norm2`; x = norm1(x + attn(x, r, mem, mask)),
  x = norm2(x + ff(x)).
- `RelMultiHeadAttention`: `r_w_bias`, `r_r_bias` [4, 8] (create_parameter), FIVE bias-free
  Linears `q_proj` (current segment only), `k_proj`, `v_proj` (memory + segment), `r_proj`
  (relative embeddings), `out_proj`. Scores [B, H, qlen, klen] by matmul:
  AC = (q + r_w_bias) k^T, BD_raw = (q + r_r_bias) r^T, and the "rel shift" is a GATHER:
  BD[i, j] = BD_raw[i, qlen - 1 - i + j] (the r row of distance mlen + i - j; indices clipped
  into range for the masked future positions), scale d_head ** -0.5, masked with -inf,
  F.softmax.
- `FeedForward`: `fc1`, F.relu inline, `fc2`.

The torch side (port_transformer_xl_torch.py) follows the original kimiyoung/transformer-xl code:
time-major tensors, a packed qkv_net, einsums, the pad + reshape _rel_shift, LayerNorms inside
the attention and feed-forward modules.

Planted bugs (PADIFF_BUG), see port_transformer_xl_truth.json; the torch side's bug name is
accepted and ignored, any other name raises ValueError:
  paddle_rel_shift_direction -> the gather reads BD_raw[i, mlen + i - j] (the distance itself,
                                as if the r rows ran 0 .. klen-1) instead of
                                BD_raw[i, klen - 1 - (mlen + i - j)]
  paddle_pos_interleaved     -> the sinusoid is built interleaved (sin, cos, sin, cos, ...) by
                                stack + reshape instead of [sin | cos]
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, D, HEADS, D_INNER, LAYERS = 40, 32, 4, 64, 2
D_HEAD = D // HEADS
QLEN, MLEN, BATCH = 6, 5, 2
EPS = 1e-5
OWN_BUGS = {"paddle_rel_shift_direction", "paddle_pos_interleaved"}
OTHER_BUGS = {"torch_bias_swapped"}


class ScaledEmbedding(nn.Embedding):
    """nn.Embedding whose lookup is multiplied by sqrt(dim) (no child layer)."""

    def __init__(self, num, dim, **kw):
        super().__init__(num, dim, **kw)
        self.scale = dim ** 0.5

    def forward(self, ids):
        return super().forward(ids) * self.scale


class SinusoidRelEmbedding(nn.Layer):
    def __init__(self, dim, interleaved=False):
        super().__init__()
        self.interleaved = interleaved
        inv_freq = np.exp(-math.log(10000.0) * np.arange(0, dim, 2, dtype="float64") / dim).astype("float32")
        self.register_buffer("inv_freq", paddle.to_tensor(inv_freq), persistable=False)

    def forward(self, pos_seq):
        angles = pos_seq.unsqueeze(-1) * self.inv_freq.unsqueeze(0)  # [klen, dim / 2]
        if self.interleaved:
            return paddle.stack([paddle.sin(angles), paddle.cos(angles)], axis=-1).reshape([pos_seq.shape[0], -1])
        return paddle.concat([paddle.sin(angles), paddle.cos(angles)], axis=-1)


class RelMultiHeadAttention(nn.Layer):
    def __init__(self, shift_reversed=False):
        super().__init__()
        self.shift_reversed = shift_reversed
        self.r_w_bias = self.create_parameter([HEADS, D_HEAD], default_initializer=nn.initializer.Normal(0.0, 0.5))
        self.r_r_bias = self.create_parameter([HEADS, D_HEAD], default_initializer=nn.initializer.Normal(0.0, 0.5))
        self.q_proj = nn.Linear(D, D, bias_attr=False)
        self.k_proj = nn.Linear(D, D, bias_attr=False)
        self.v_proj = nn.Linear(D, D, bias_attr=False)
        self.r_proj = nn.Linear(D, D, bias_attr=False)
        self.out_proj = nn.Linear(D, D, bias_attr=False)
        self.scale = D_HEAD ** -0.5

    @staticmethod
    def _heads(t):
        b, n, _ = t.shape
        return t.reshape([b, n, HEADS, D_HEAD]).transpose([0, 2, 1, 3])  # [B, H, n, dh]

    def forward(self, x, pos_emb, mem, attn_mask):
        b, qlen, _ = x.shape
        cat = paddle.concat([mem, x], axis=1)
        klen = cat.shape[1]
        mlen = klen - qlen
        q = self._heads(self.q_proj(x))
        k = self._heads(self.k_proj(cat))
        v = self._heads(self.v_proj(cat))
        r = self.r_proj(pos_emb).reshape([klen, HEADS, D_HEAD]).transpose([1, 0, 2])  # [H, klen, dh]
        ac = paddle.matmul(q + self.r_w_bias.unsqueeze(1), k, transpose_y=True)  # [B, H, qlen, klen]
        bd_raw = paddle.matmul(q + self.r_r_bias.unsqueeze(1), r.unsqueeze(0), transpose_y=True)
        i = paddle.arange(qlen, dtype="int64").unsqueeze(1)
        j = paddle.arange(klen, dtype="int64").unsqueeze(0)
        if self.shift_reversed:
            idx = mlen + i - j
        else:
            idx = qlen - 1 - i + j
        idx = paddle.clip(idx, 0, klen - 1).expand([b, HEADS, qlen, klen])
        bd = paddle.take_along_axis(bd_raw, idx, axis=-1)
        score = (ac + bd) * self.scale
        score = paddle.where(attn_mask, paddle.full_like(score, float("-inf")), score)
        prob = F.softmax(score, axis=-1)
        out = paddle.matmul(prob, v).transpose([0, 2, 1, 3]).reshape([b, qlen, D])
        return self.out_proj(out)


class FeedForward(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D, D_INNER)
        self.fc2 = nn.Linear(D_INNER, D)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class RelDecoderLayer(nn.Layer):
    def __init__(self, shift_reversed=False):
        super().__init__()
        self.attn = RelMultiHeadAttention(shift_reversed)
        self.ff = FeedForward()
        self.norm1 = nn.LayerNorm(D, epsilon=EPS)
        self.norm2 = nn.LayerNorm(D, epsilon=EPS)

    def forward(self, x, pos_emb, mem, attn_mask):
        x = self.norm1(x + self.attn(x, pos_emb, mem, attn_mask))
        return self.norm2(x + self.ff(x))


class TransfoXL(nn.Layer):
    def __init__(self, shift_reversed=False, interleaved=False):
        super().__init__()
        self.word_emb = ScaledEmbedding(VOCAB, D, weight_attr=nn.initializer.Normal(0.0, 0.2))
        self.layers = nn.LayerList([RelDecoderLayer(shift_reversed) for _ in range(LAYERS)])
        self.pos_enc = SinusoidRelEmbedding(D, interleaved)
        self.lm_head = nn.Linear(D, VOCAB)

    def forward(self, input_ids, mems):
        qlen = input_ids.shape[1]
        mlen = mems.shape[2]
        klen = mlen + qlen
        x = self.word_emb(input_ids)
        pos_seq = paddle.arange(klen - 1, -1, -1, dtype="float32")
        pos_emb = self.pos_enc(pos_seq)
        i = paddle.arange(qlen).unsqueeze(1)
        j = paddle.arange(klen).unsqueeze(0)
        attn_mask = j > i + mlen  # True = masked (future step)
        new_mems = []
        for li, layer in enumerate(self.layers):
            new_mems.append(paddle.concat([mems[li], x], axis=1)[:, -MLEN:].detach())
            x = layer(x, pos_emb, mems[li], attn_mask)
        return self.lm_head(x), paddle.stack(new_mems)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_transformer_xl paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = TransfoXL(shift_reversed=bug == "paddle_rel_shift_direction", interleaved=bug == "paddle_pos_interleaved")
    m.eval()
    return m


def _data():
    rng = np.random.default_rng(5)
    ids = rng.integers(0, VOCAB, (BATCH, QLEN)).astype("int64")
    mems = rng.standard_normal((LAYERS, BATCH, MLEN, D)).astype("float32")  # batch-major
    return ids, mems


def inputs():
    ids, mems = _data()
    return (paddle.to_tensor(ids), paddle.to_tensor(mems)), {}


def loss(output):
    # output = (logits [2, 6, 40], new_mems); the memory carries no gradient
    return (output[0] ** 2).mean()
