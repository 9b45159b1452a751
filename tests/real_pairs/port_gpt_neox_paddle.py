"""Hand-written port, paddle side: a tiny GPT-NeoX-style decoder (written by "person A").

Input: positional `input_ids` [2, 10] int64 (numpy rng seed 104). Output: logits [2, 10, 64].

Sizes: vocab 64, width 64, 4 heads of 16, MLP 256 (exact GELU), 2 layers, LayerNorm eps 1e-5.
One layer is a PARALLEL residual block (GPT-NeoX / GPT-J style):
    x = x + attn(ln_attn(x)) + mlp(ln_mlp(x))
The attention uses PARTIAL rotary embeddings: rotary_pct 0.25, so only the first 4 of each
head's 16 dims are rotated (NeoX rotate-half convention: the pairs are (t, t + 2) of those 4
dims, inv_freq = 1 / 10000^(arange(0, 4, 2) / 4)); the other 12 pass through. Causal softmax
attention with scale 1 / sqrt(16). Then a final LayerNorm and an UNTIED `lm_head`.

Paddle idioms on this side:
- root `NeoXLM`: `tok_emb` nn.Embedding(64, 64), `blocks` (LayerList of `NeoXBlock`, iterated),
  `ln_f` nn.LayerNorm, `lm_head` nn.Linear(64, 64, bias_attr=False).
- `NeoXBlock` registers `attn`, `ffn` first, then `ln_attn`, `ln_mlp`.
- `NeoXAttention`: SEPARATE `q_proj`, `k_proj`, `v_proj` nn.Linear(64, 64) (with bias) and
  `out_proj`. The rotary tables are computed inline in every forward by the module-level helper
  `rope_cos_sin`, and applied by `apply_partial_rope` (also module-level); the causal mask is
  built inline (paddle.tril + paddle.where with -inf).
- `NeoXMLP`: `fc_in` nn.Linear(64, 256), `fc_out` nn.Linear(256, 64), GELU inline (F.gelu).
- model() gives the LayerNorms, the Linear biases and the embedding trained-looking values
  (seeded).

The torch side (port_gpt_neox_torch.py) was written independently in the style of the Hugging
Face GPTNeoX code: one fused `query_key_value` Linear packed per head [h, 3, d], a model-level
rotary module, an nn.GELU module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rope_interleaved -> apply_partial_rope rotates adjacent pairs (t, t + 1) (GPT-J
                             convention, cos / sin repeated element-wise) instead of NeoX's
                             rotate-half pairs (t, t + 2)
  paddle_gelu_tanh        -> NeoXMLP uses F.gelu(approximate=True) (tanh approximation) instead of
                             the exact erf GELU (precision-level)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, WIDTH, HEADS, N_LAYERS = 64, 64, 4, 2
HEAD_DIM = WIDTH // HEADS
ROTARY_PCT = 0.25
ROT_DIM = int(HEAD_DIM * ROTARY_PCT)  # 4
ROPE_BASE = 10000.0
FFN = 4 * WIDTH
LN_EPS = 1e-5
BATCH, SEQ = 2, 10
OWN_BUGS = {"paddle_rope_interleaved", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_rope_freq_head_dim", "torch_mlp_reuses_ln1"}


def rope_cos_sin(seq_len, rot_dim, interleaved=False):
    inv_freq = 1.0 / (ROPE_BASE ** (paddle.arange(0, rot_dim, 2, dtype="float32") / rot_dim))
    pos = paddle.arange(seq_len, dtype="float32")
    freqs = pos.unsqueeze(1) * inv_freq.unsqueeze(0)  # [L, rot/2]
    if interleaved:
        emb = paddle.repeat_interleave(freqs, 2, axis=-1)  # f0 f0 f1 f1
    else:
        emb = paddle.concat([freqs, freqs], axis=-1)  # f0 f1 f0 f1
    return paddle.cos(emb), paddle.sin(emb)  # [L, rot]


def apply_partial_rope(x, cos, sin, rot_dim, interleaved=False):
    """x [B, H, L, D]; rotates x[..., :rot_dim], passes the rest through."""
    x_rot, x_pass = x[..., :rot_dim], x[..., rot_dim:]
    if interleaved:
        even, odd = x_rot[..., 0::2], x_rot[..., 1::2]
        rotated = paddle.stack([-odd, even], axis=-1).flatten(start_axis=-2)
    else:
        half = rot_dim // 2
        rotated = paddle.concat([-x_rot[..., half:], x_rot[..., :half]], axis=-1)
    return paddle.concat([x_rot * cos + rotated * sin, x_pass], axis=-1)


class NeoXAttention(nn.Layer):
    def __init__(self, interleaved=False):
        super().__init__()
        self.interleaved = interleaved
        self.q_proj = nn.Linear(WIDTH, WIDTH)
        self.k_proj = nn.Linear(WIDTH, WIDTH)
        self.v_proj = nn.Linear(WIDTH, WIDTH)
        self.out_proj = nn.Linear(WIDTH, WIDTH)

    def _heads(self, t):
        b, seq, _ = t.shape
        return t.reshape([b, seq, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, seq, _ = x.shape
        q, k, v = self._heads(self.q_proj(x)), self._heads(self.k_proj(x)), self._heads(self.v_proj(x))
        cos, sin = rope_cos_sin(seq, ROT_DIM, self.interleaved)
        q = apply_partial_rope(q, cos, sin, ROT_DIM, self.interleaved)
        k = apply_partial_rope(k, cos, sin, ROT_DIM, self.interleaved)
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HEAD_DIM)
        causal = paddle.tril(paddle.ones([seq, seq], dtype="bool"))
        scores = paddle.where(causal, scores, paddle.full_like(scores, float("-inf")))
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, seq, WIDTH])
        return self.out_proj(out)


class NeoXMLP(nn.Layer):
    def __init__(self, gelu_tanh=False):
        super().__init__()
        self.gelu_tanh = gelu_tanh
        self.fc_in = nn.Linear(WIDTH, FFN)
        self.fc_out = nn.Linear(FFN, WIDTH)

    def forward(self, x):
        return self.fc_out(F.gelu(self.fc_in(x), approximate=self.gelu_tanh))


class NeoXBlock(nn.Layer):
    def __init__(self, interleaved=False, gelu_tanh=False):
        super().__init__()
        self.attn = NeoXAttention(interleaved)
        self.ffn = NeoXMLP(gelu_tanh)
        self.ln_attn = nn.LayerNorm(WIDTH, epsilon=LN_EPS)
        self.ln_mlp = nn.LayerNorm(WIDTH, epsilon=LN_EPS)

    def forward(self, x):
        return x + self.attn(self.ln_attn(x)) + self.ffn(self.ln_mlp(x))


class NeoXLM(nn.Layer):
    def __init__(self, interleaved=False, gelu_tanh=False):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, WIDTH)
        self.blocks = nn.LayerList([NeoXBlock(interleaved, gelu_tanh) for _ in range(N_LAYERS)])
        self.ln_f = nn.LayerNorm(WIDTH, epsilon=LN_EPS)
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        h = self.tok_emb(input_ids)
        for block in self.blocks:
            h = block(h)
        return self.lm_head(self.ln_f(h))


def _trained_look(m):
    rng = np.random.default_rng(104)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.normal(1.0, 0.1, WIDTH).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, WIDTH).astype("float32"))
        elif isinstance(layer, nn.Linear) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
        elif isinstance(layer, nn.Embedding):
            layer.weight.set_value(rng.normal(0.0, 0.5, layer.weight.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gpt_neox paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = NeoXLM(interleaved=bug == "paddle_rope_interleaved", gelu_tanh=bug == "paddle_gelu_tanh")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(104)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 10, 64]
    return (output**2).mean()
