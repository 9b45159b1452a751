"""Hand-written port, paddle side: a tiny Cohere (Command-R)-style decoder-only LM (written by "person A").

Sizes: vocab 64, width 32, 4 heads of 8, SwiGLU hidden 64, 2 layers, sequence length 12, batch 2,
LayerNorm eps 1e-5 WITHOUT bias, rope theta 10000 on the full head dim, logit_scale 0.25.

One block is a PARALLEL residual block with a single norm:
    h = ln(x);  out = x + attn(h) + mlp(h)
Rotary is INTERLEAVED (GPT-J / Cohere layout): the pairs are (0, 1), (2, 3), (4, 5), (6, 7) of
each head, pair i turning with inverse frequency theta^(-2i / 8). The LM head is TIED to the
token embedding and its logits are multiplied by logit_scale.

Person A wrote this in a Meta-LLaMA-like style with complex numbers:
- root `CommandRLM`: registers a non-persistable complex64 buffer `freqs_cis` [16, 4] FIRST
  (polar(1, t * inv_freq), precomputed in __init__), then `embedding` (nn.Embedding 64x32,
  Normal(0, 0.2)), `blocks` = LayerList of `ParallelBlock`, `final_norm` (nn.LayerNorm(32,
  epsilon=1e-5, bias_attr=False)). The root slices freqs_cis[:T] and passes it to every block.
  The tied head is inline: matmul(h, embedding.weight, transpose_y=True) * logit_scale (a plain
  float attribute). No head module.
- `ParallelBlock`: `ln` (nn.LayerNorm, weight only), `attn`, `ffn`; forward(x, freqs_cis).
- `Attention`: ONE fused `qkv` Linear(32, 96, no bias) whose output columns are q 0:32 |
  k 32:64 | v 64:96 (paddle.split into three), `out` Linear(32, 32, no bias). The rotation is a
  module-level helper `apply_rotary_complex`: adjacent pairs viewed as complex numbers
  (paddle.as_complex on [..., 4, 2]), multiplied by freqs_cis, back with paddle.as_real. The
  causal mask is a bool tril used with paddle.where(-inf); F.softmax.
- `SwiGLU`: ONE fused `w_gate_up` Linear(32, 128, no bias) (gate columns 0:64 | up 64:128),
  F.silu inline, `w_down` Linear(64, 32, no bias).
- model() gives the LayerNorm weights trained-looking values (seeded U(0.6, 1.4)).

The torch side (port_cohere_torch.py) was written independently in the HF Cohere style:
separate q / k / v and gate / up projections, a root rotary module whose cos / sin are
repeat_interleave'd and applied with a stack-based rotate_half, a hand-written CohereLayerNorm,
an nn.SiLU module, a tied lm_head module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rope_half_split -> `apply_rotary_complex` builds the complex pairs from the two HALVES
                            of each head (element i with i + 4, the LLaMA / NeoX layout) instead
                            of adjacent elements (2i, 2i + 1)
  paddle_swiglu_bf16     -> SwiGLU rounds the gated product silu(gate) * up to bfloat16 (an
                            autocast leftover) before w_down (precision-level)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, DIM, N_HEADS, HEAD_DIM, FFN_DIM, N_LAYERS, MAX_SEQ = 64, 32, 4, 8, 64, 2, 16
LN_EPS, ROPE_THETA, LOGIT_SCALE = 1e-5, 10000.0, 0.25
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_rope_half_split", "paddle_swiglu_bf16"}
OTHER_BUGS = {"torch_ln_unbiased_var", "torch_mlp_unnormed"}


def precompute_freqs_cis(dim, end, theta=ROPE_THETA):
    freqs = 1.0 / (theta ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
    t = paddle.arange(end, dtype="float32")
    angles = paddle.outer(t, freqs)  # [end, dim // 2]
    return paddle.polar(paddle.ones_like(angles), angles)  # complex64


def apply_rotary_complex(x, freqs_cis, half_split=False):
    """x [B, T, H, D] float32; freqs_cis [T, D // 2] complex64."""
    b, t, h, d = x.shape
    if half_split:
        pairs = x.reshape([b, t, h, 2, d // 2]).transpose([0, 1, 2, 4, 3]).contiguous()
    else:
        pairs = x.reshape([b, t, h, d // 2, 2])
    xc = paddle.as_complex(pairs)
    rotated = paddle.as_real(xc * freqs_cis.reshape([1, t, 1, d // 2]))  # [B, T, H, D/2, 2]
    if half_split:
        rotated = rotated.transpose([0, 1, 2, 4, 3])
    return rotated.reshape([b, t, h, d])


class Attention(nn.Layer):
    def __init__(self, half_split=False):
        super().__init__()
        self.half_split = half_split
        self.qkv = nn.Linear(DIM, 3 * DIM, bias_attr=False)
        self.out = nn.Linear(DIM, DIM, bias_attr=False)

    def forward(self, x, freqs_cis):
        b, t, _ = x.shape
        q, k, v = paddle.split(self.qkv(x), 3, axis=-1)
        q = apply_rotary_complex(q.reshape([b, t, N_HEADS, HEAD_DIM]), freqs_cis, self.half_split)
        k = apply_rotary_complex(k.reshape([b, t, N_HEADS, HEAD_DIM]), freqs_cis, self.half_split)
        v = v.reshape([b, t, N_HEADS, HEAD_DIM])
        q, k, v = (z.transpose([0, 2, 1, 3]) for z in (q, k, v))
        scores = paddle.matmul(q, k, transpose_y=True) * (1.0 / math.sqrt(HEAD_DIM))
        allowed = paddle.tril(paddle.ones([t, t], dtype="int32")).astype("bool")
        scores = paddle.where(allowed, scores, paddle.full_like(scores, float("-inf")))
        probs = F.softmax(scores, axis=-1)
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, t, DIM])
        return self.out(ctx)


class SwiGLU(nn.Layer):
    def __init__(self, bf16_product=False):
        super().__init__()
        self.bf16_product = bf16_product
        self.w_gate_up = nn.Linear(DIM, 2 * FFN_DIM, bias_attr=False)
        self.w_down = nn.Linear(FFN_DIM, DIM, bias_attr=False)

    def forward(self, x):
        gate, up = paddle.chunk(self.w_gate_up(x), 2, axis=-1)
        prod = F.silu(gate) * up
        if self.bf16_product:
            prod = prod.astype("bfloat16").astype("float32")
        return self.w_down(prod)


class ParallelBlock(nn.Layer):
    def __init__(self, half_split=False, bf16_product=False):
        super().__init__()
        self.ln = nn.LayerNorm(DIM, epsilon=LN_EPS, bias_attr=False)
        self.attn = Attention(half_split)
        self.ffn = SwiGLU(bf16_product)

    def forward(self, x, freqs_cis):
        h = self.ln(x)
        return x + self.attn(h, freqs_cis) + self.ffn(h)


class CommandRLM(nn.Layer):
    def __init__(self, half_split=False, bf16_product=False):
        super().__init__()
        self.register_buffer("freqs_cis", precompute_freqs_cis(HEAD_DIM, MAX_SEQ), persistable=False)
        self.embedding = nn.Embedding(VOCAB, DIM, weight_attr=nn.initializer.Normal(0.0, 0.2))
        self.blocks = nn.LayerList([ParallelBlock(half_split, bf16_product) for _ in range(N_LAYERS)])
        self.final_norm = nn.LayerNorm(DIM, epsilon=LN_EPS, bias_attr=False)
        self.logit_scale = LOGIT_SCALE

    def forward(self, tokens):
        t = tokens.shape[1]
        h = self.embedding(tokens)
        freqs_cis = self.freqs_cis[:t]
        for block in self.blocks:
            h = block(h, freqs_cis)
        h = self.final_norm(h)
        return paddle.matmul(h, self.embedding.weight, transpose_y=True) * self.logit_scale


def _trained_look(m):
    rng = np.random.default_rng(141)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.uniform(0.6, 1.4, DIM).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cohere paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = CommandRLM(half_split=bug == "paddle_rope_half_split", bf16_product=bug == "paddle_swiglu_bf16")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(47)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # scaled logits [2, 12, 64]
    return (output**2).mean()
