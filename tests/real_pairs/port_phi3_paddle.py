"""Hand-written port, paddle side: a tiny Phi-3-style decoder-only LM with PARTIAL rotary (written by "person A").

Sizes: vocab 64, width 32, 4 heads of 8, rotary on the FIRST 4 dims of each head only (the other
4 pass through), rope theta 10000, SwiGLU hidden 64, 2 layers, RMSNorm eps 1e-5 (pre-norm
residual blocks and a final norm), causal attention, an UNTIED lm head, sequence length 12,
batch 2. Rotation pairs inside the rotary part are half-split: (0, 2) and (1, 3) with inverse
frequencies theta^(-0/4) = 1 and theta^(-2/4) = 0.01.

Person A wrote this in the Meta-LLaMA style, with separate projections everywhere:
- root `Phi3LM`: `tok_embeddings` (nn.Embedding 64x32, Normal(0, 0.06)), `layers` = LayerList
  of `TransformerBlock`, `norm` (RMSNorm), `output` (nn.Linear(32, 64, no bias), untied).
- `TransformerBlock` registers `attention`, `feed_forward`, then `attention_norm`, `ffn_norm`
  (the norms are called first): h = x + attention(attention_norm(x)),
  out = h + feed_forward(ffn_norm(h)).
- `RMSNorm` is hand-written: x * rsqrt(mean(x^2) + eps) * weight (create_parameter).
- `Attention`: SEPARATE `wq`, `wk`, `wv`, `wo` Linear(32, 32, no bias). No rotary module and no
  cache: the angles are computed inline in every forward from a module-level helper
  (`rope_angles`, [T, 2]) and the rotation is written out explicitly on the two halves of the
  rotary slice (`partial_rope`: x1 * cos - x2 * sin, x2 * cos + x1 * sin, then the pass-through
  dims). The causal mask is paddle.triu(full(-inf), 1) added to the scores; F.softmax.
- `FeedForward`: SEPARATE `w1` (gate) / `w3` (up) Linear(32, 64) and `w2` Linear(64, 32), all
  without bias; F.silu inline.
- model() gives the RMSNorm weights trained-looking values (seeded U(0.6, 1.4)), so no bug hides
  behind an identity init.

The torch side (port_phi3_torch.py) was written independently in the HF Phi-3 style: ONE fused
qkv_proj, ONE fused gate_up_proj, an nn.SiLU module, a rotary module per attention holding a
precomputed duplicated cos / sin cache, rotate_half, residual dropouts.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rope_dim_in_exponent -> `rope_angles` divides the frequency exponent by the HEAD dim (8)
                                 instead of the ROTARY dim (4): the second rotary pair turns
                                 with inverse frequency 0.1 instead of 0.01
  paddle_rms_eps_1e6          -> RMSNorm is built with eps 1e-6 (the LLaMA default) instead of
                                 Phi-3's 1e-5, in every norm (precision-level)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, DIM, N_HEADS, HEAD_DIM, ROT_DIM, FFN_DIM, N_LAYERS = 64, 32, 4, 8, 4, 64, 2
NORM_EPS, ROPE_THETA = 1e-5, 10000.0
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_rope_dim_in_exponent", "paddle_rms_eps_1e6"}
OTHER_BUGS = {"torch_rope_k_uses_q", "torch_residual_not_updated"}


def rope_angles(seq_len, rot_dim=ROT_DIM, exponent_dim=ROT_DIM):
    """[seq_len, rot_dim // 2] rotation angles t * theta^(-2i / exponent_dim)."""
    inv_freq = 1.0 / (ROPE_THETA ** (paddle.arange(0, rot_dim, 2, dtype="float32") / exponent_dim))
    t = paddle.arange(seq_len, dtype="float32")
    return paddle.outer(t, inv_freq)


def partial_rope(x, cos, sin):
    """x [B, T, H, D]; rotate dims 0:ROT_DIM as two halves, keep ROT_DIM:D."""
    half = ROT_DIM // 2
    x1, x2, rest = x[..., :half], x[..., half:ROT_DIM], x[..., ROT_DIM:]
    return paddle.concat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest], axis=-1)


class RMSNorm(nn.Layer):
    def __init__(self, dim, eps=NORM_EPS):
        super().__init__()
        self.eps = eps
        self.weight = self.create_parameter([dim], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, x):
        return x * paddle.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Layer):
    def __init__(self, exponent_dim=ROT_DIM):
        super().__init__()
        self.exponent_dim = exponent_dim
        self.wq = nn.Linear(DIM, N_HEADS * HEAD_DIM, bias_attr=False)
        self.wk = nn.Linear(DIM, N_HEADS * HEAD_DIM, bias_attr=False)
        self.wv = nn.Linear(DIM, N_HEADS * HEAD_DIM, bias_attr=False)
        self.wo = nn.Linear(N_HEADS * HEAD_DIM, DIM, bias_attr=False)

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).reshape([bsz, seqlen, N_HEADS, HEAD_DIM])
        xk = self.wk(x).reshape([bsz, seqlen, N_HEADS, HEAD_DIM])
        xv = self.wv(x).reshape([bsz, seqlen, N_HEADS, HEAD_DIM])
        ang = rope_angles(seqlen, ROT_DIM, self.exponent_dim)  # [T, 2]
        cos = paddle.cos(ang).reshape([1, seqlen, 1, ROT_DIM // 2])
        sin = paddle.sin(ang).reshape([1, seqlen, 1, ROT_DIM // 2])
        xq, xk = partial_rope(xq, cos, sin), partial_rope(xk, cos, sin)
        xq, xk, xv = (t.transpose([0, 2, 1, 3]) for t in (xq, xk, xv))  # [B, H, T, D]
        scores = paddle.matmul(xq, xk, transpose_y=True) / math.sqrt(HEAD_DIM)
        mask = paddle.triu(paddle.full([seqlen, seqlen], float("-inf"), dtype="float32"), diagonal=1)
        scores = F.softmax(scores + mask, axis=-1)
        out = paddle.matmul(scores, xv).transpose([0, 2, 1, 3]).reshape([bsz, seqlen, N_HEADS * HEAD_DIM])
        return self.wo(out)


class FeedForward(nn.Layer):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, FFN_DIM, bias_attr=False)
        self.w2 = nn.Linear(FFN_DIM, DIM, bias_attr=False)
        self.w3 = nn.Linear(DIM, FFN_DIM, bias_attr=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Layer):
    def __init__(self, exponent_dim=ROT_DIM, eps=NORM_EPS):
        super().__init__()
        self.attention = Attention(exponent_dim)
        self.feed_forward = FeedForward()
        self.attention_norm = RMSNorm(DIM, eps)
        self.ffn_norm = RMSNorm(DIM, eps)

    def forward(self, x):
        h = x + self.attention(self.attention_norm(x))
        return h + self.feed_forward(self.ffn_norm(h))


class Phi3LM(nn.Layer):
    def __init__(self, exponent_dim=ROT_DIM, eps=NORM_EPS):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM, weight_attr=nn.initializer.Normal(0.0, 0.06))
        self.layers = nn.LayerList([TransformerBlock(exponent_dim, eps) for _ in range(N_LAYERS)])
        self.norm = RMSNorm(DIM, eps)
        self.output = nn.Linear(DIM, VOCAB, bias_attr=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))


def _trained_look(m):
    rng = np.random.default_rng(41)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, RMSNorm):
            layer.weight.set_value(rng.uniform(0.6, 1.4, DIM).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_phi3 paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = Phi3LM(exponent_dim=HEAD_DIM if bug == "paddle_rope_dim_in_exponent" else ROT_DIM,
               eps=1e-6 if bug == "paddle_rms_eps_1e6" else NORM_EPS)
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(43)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
