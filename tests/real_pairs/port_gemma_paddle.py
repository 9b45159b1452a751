"""Hand-written port, paddle side: a tiny Gemma-style decoder LM (written by "person A").

Inputs: positional `input_ids` [2, 12] int64 (numpy rng seed 31). Output: logits [2, 12, 64].

Shared sizes: vocab 64, hidden 32, 2 layers, 4 query heads and 2 key / value heads (grouped-query
attention, 2 query heads per kv head), head_dim 16 (so the attention is 64 wide, NOT the hidden
32: Gemma's head_dim is independent of hidden / heads), GeGLU hidden 64, RMSNorm eps 1e-6,
rotary base 10000 (half-split "rotate_half" convention), causal, pre-norm blocks, a final norm
and a head tied to the embedding.

One block:  h = x + attn(norm_a(x));  out = h + ffn(norm_f(h))
  RMSNorm:  x / sqrt(mean(x^2) + 1e-6) * (1 + w)
  attn:     q = rope(x Wq), k = rope(x Wk), v = x Wv; kv head g serves query heads 2g, 2g+1;
            softmax(q k^T / sqrt(16) + causal) v, then Wo
  ffn:      down(gelu_tanh(x Wgate) * (x Wup))
The embedding output is multiplied by sqrt(hidden) = sqrt(32) before the first block; the logits
are final_norm(h) @ E^T with the UNSCALED embedding table E.

Paddle idioms on this side:
- root `GemmaLM`: `embedder` = `ScaledEmbedding`, a wrapper module whose child `table`
  (nn.Embedding) is looked up and whose forward multiplies by sqrt(hidden); `blocks` = LayerList
  of `GemmaBlock` (iterated, never called); `final_norm`. The tied head is an inline
  `paddle.matmul(h, self.embedder.table.weight, transpose_y=True)` (no head module).
- `GemmaRMSNorm` stores its weight AS THE OFFSET FROM ONE (Gemma checkpoint convention):
  parameter `weight`, created zero-initialised, applied as (1 + weight).
- `GemmaBlock` registers `attn_norm`, `attn`, `ffn_norm`, `ffn`.
- `GemmaAttention`: separate `wq` Linear(32, 64), `wk` Linear(32, 32), `wv` Linear(32, 32),
  `wo` Linear(64, 32), no biases ([in, out] weights); the rotary cos / sin tables are computed
  inline in every forward; the kv heads are expanded with unsqueeze + expand + reshape; the
  causal mask is paddle.where(..., -inf) on a tril built in the forward; scores divided by
  sqrt(head_dim).
- `GemmaFFN`: ONE packed `gate_up` Linear(32, 128) (columns 0:64 = gate, 64:128 = up), an
  activation module `act_fn` = nn.GELU(approximate=True), then `down` Linear(64, 32).
- model() gives the norm offsets, embedding and projections trained-looking seeded values.

The torch side (port_gemma_torch.py) was written independently (HF / gemma_pytorch style): a
`model` body that scales the embedding inline, RMSNorm storing the FULL scale, one packed
qkv_proj, separate gate_proj / up_proj, a complex `freqs_cis` buffer, and an lm_head Linear whose
weight IS the embedding parameter.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_embed_scale_head_dim   -> the embedding wrapper is built with scale sqrt(head_dim) =
                                   sqrt(16) = 4 instead of sqrt(hidden) = sqrt(32) = 5.657
  paddle_attn_scale_hidden_heads -> the attention divides the scores by sqrt(hidden / heads) =
                                   sqrt(8) instead of sqrt(head_dim) = sqrt(16) (the Llama
                                   habit; in Gemma head_dim != hidden / heads)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, N_LAYERS = 64, 32, 2
N_HEADS, N_KV_HEADS, HEAD_DIM = 4, 2, 16
FFN_HIDDEN = 64
RMS_EPS, ROPE_BASE = 1e-6, 10000.0
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_embed_scale_head_dim", "paddle_attn_scale_hidden_heads"}
OTHER_BUGS = {"torch_norm_plus_one_full_scale", "torch_gelu_exact"}


class ScaledEmbedding(nn.Layer):
    def __init__(self, vocab, dim, scale):
        super().__init__()
        self.scale = scale
        self.table = nn.Embedding(vocab, dim)

    def forward(self, ids):
        return self.table(ids) * self.scale


class GemmaRMSNorm(nn.Layer):
    def __init__(self, dim, eps=RMS_EPS):
        super().__init__()
        self.eps = eps
        self.weight = self.create_parameter([dim], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):
        var = paddle.mean(x * x, axis=-1, keepdim=True)
        return x * paddle.rsqrt(var + self.eps) * (1.0 + self.weight)


def _rope_tables(seq_len, dim):
    inv_freq = 1.0 / (ROPE_BASE ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
    t = paddle.arange(seq_len, dtype="float32")
    freqs = paddle.outer(t, inv_freq)  # [L, dim / 2]
    emb = paddle.concat([freqs, freqs], axis=-1)  # [L, dim]
    return paddle.cos(emb), paddle.sin(emb)


def _rotate_half(x):
    half = x.shape[-1] // 2
    return paddle.concat([-x[..., half:], x[..., :half]], axis=-1)


class GemmaAttention(nn.Layer):
    def __init__(self, score_dim):
        super().__init__()
        self.score_dim = score_dim
        self.wq = nn.Linear(HIDDEN, N_HEADS * HEAD_DIM, bias_attr=False)
        self.wk = nn.Linear(HIDDEN, N_KV_HEADS * HEAD_DIM, bias_attr=False)
        self.wv = nn.Linear(HIDDEN, N_KV_HEADS * HEAD_DIM, bias_attr=False)
        self.wo = nn.Linear(N_HEADS * HEAD_DIM, HIDDEN, bias_attr=False)

    def forward(self, x):
        b, seq = x.shape[0], x.shape[1]
        q = self.wq(x).reshape([b, seq, N_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        k = self.wk(x).reshape([b, seq, N_KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        v = self.wv(x).reshape([b, seq, N_KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        cos, sin = _rope_tables(seq, HEAD_DIM)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        groups = N_HEADS // N_KV_HEADS
        k = k.unsqueeze(2).expand([b, N_KV_HEADS, groups, seq, HEAD_DIM]).reshape([b, N_HEADS, seq, HEAD_DIM])
        v = v.unsqueeze(2).expand([b, N_KV_HEADS, groups, seq, HEAD_DIM]).reshape([b, N_HEADS, seq, HEAD_DIM])
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(self.score_dim)
        causal = paddle.tril(paddle.ones([seq, seq], dtype="bool"))
        scores = paddle.where(causal, scores, paddle.full_like(scores, float("-inf")))
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, seq, N_HEADS * HEAD_DIM])
        return self.wo(out)


class GemmaFFN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_up = nn.Linear(HIDDEN, 2 * FFN_HIDDEN, bias_attr=False)
        self.act_fn = nn.GELU(approximate=True)
        self.down = nn.Linear(FFN_HIDDEN, HIDDEN, bias_attr=False)

    def forward(self, x):
        gate, up = paddle.split(self.gate_up(x), 2, axis=-1)
        return self.down(self.act_fn(gate) * up)


class GemmaBlock(nn.Layer):
    def __init__(self, score_dim):
        super().__init__()
        self.attn_norm = GemmaRMSNorm(HIDDEN)
        self.attn = GemmaAttention(score_dim)
        self.ffn_norm = GemmaRMSNorm(HIDDEN)
        self.ffn = GemmaFFN()

    def forward(self, x):
        h = x + self.attn(self.attn_norm(x))
        return h + self.ffn(self.ffn_norm(h))


class GemmaLM(nn.Layer):
    def __init__(self, embed_scale=None, score_dim=HEAD_DIM):
        super().__init__()
        if embed_scale is None:
            embed_scale = math.sqrt(HIDDEN)
        self.embedder = ScaledEmbedding(VOCAB, HIDDEN, embed_scale)
        self.blocks = nn.LayerList([GemmaBlock(score_dim) for _ in range(N_LAYERS)])
        self.final_norm = GemmaRMSNorm(HIDDEN)

    def forward(self, input_ids):
        h = self.embedder(input_ids)
        for block in self.blocks:
            h = block(h)
        h = self.final_norm(h)
        return paddle.matmul(h, self.embedder.table.weight, transpose_y=True)


def _trained_look(m):
    rng = np.random.default_rng(41)
    m.embedder.table.weight.set_value(rng.normal(0.0, 0.1, (VOCAB, HIDDEN)).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, GemmaRMSNorm):
            # offsets from one: the applied scale 1 + w lies around 0.6 .. 1.6
            layer.weight.set_value(rng.normal(0.1, 0.25, HIDDEN).astype("float32"))
        elif isinstance(layer, nn.Linear):
            fan_in = layer.weight.shape[0]
            layer.weight.set_value(rng.normal(0.0, 1.0 / math.sqrt(fan_in), layer.weight.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gemma paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    embed_scale = math.sqrt(HEAD_DIM) if bug == "paddle_embed_scale_head_dim" else math.sqrt(HIDDEN)
    score_dim = HIDDEN // N_HEADS if bug == "paddle_attn_scale_hidden_heads" else HEAD_DIM
    m = GemmaLM(embed_scale=embed_scale, score_dim=score_dim)
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(31)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
