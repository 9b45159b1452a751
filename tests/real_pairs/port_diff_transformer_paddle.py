"""Hand-written port, paddle side: a tiny Differential Transformer decoder LM (written by "person A").

Input: positional `input_ids` [2, 12] int64 (numpy rng seed 41, vocab 64). Output: logits
[2, 12, 64]. Vocab 64, width 32, 2 layers, 2 differential heads (each: two softmax maps of
query / key width 8, one value of width 16), SwiGLU hidden 64, RMSNorm eps 1e-5, rotary
position embeddings (theta 10000), head tied to the token embedding.

One layer (pre-norm):  x = x + self_attn(self_attn_layer_norm(x));  x = x + ffn(final_layer_norm(x))
Differential attention (microsoft/unilm Diff-Transformer `MultiheadDiffAttn`):
  q = q_proj(x) viewed [B, L, 2H, 8], k likewise, v = v_proj(x) viewed [B, L, H, 16]
  rotary on q and k, INTERLEAVED pairs (2i, 2i + 1), cos / sin tables [L, 4]
  A = softmax(q k^T / sqrt(8) + causal)   -> [B, 2H, L, L], viewed [B, H, 2, L, L]
  lambda = exp(sum(lambda_q1 * lambda_k1)) - exp(sum(lambda_q2 * lambda_k2)) + lambda_init
  lambda_init = 0.8 - 0.6 * exp(-0.3 * depth), depth = layer index (0, 1)
  out = subln((A[:, :, 0] - lambda * A[:, :, 1]) v) * (1 - lambda_init)   (RMSNorm over the 16
        features of each head, one weight [16] shared by the heads)
  out_proj(out transposed to [B, L, 32])
SwiGLU: w2(silu(w1(x)) * w3(x)).

Paddle idioms on this side (the official code's names):
- root `DiffTransformerLM`: `embed_tokens`, `layers` (LayerList, iterated), `norm`; the rotary
  cos / sin tables are computed in the ROOT forward by the module-level helper
  `precompute_rotary` and passed to every layer as `rel_pos`; the tied head is an inline
  paddle.matmul(h, embed_tokens.weight, transpose_y=True) (no module).
- `DiffDecoderLayer`: `self_attn`, `ffn`, then `self_attn_layer_norm`, `final_layer_norm`.
- `MultiheadDiffAttn`: `q_proj`, `k_proj`, `v_proj`, `out_proj` (no bias), FOUR parameters
  `lambda_q1`, `lambda_k1`, `lambda_q2`, `lambda_k2` [8], `subln` (RMSNorm(16)); lambda_init is
  a python float; the rotary is applied inline (apply_rotary_emb, interleaved); the causal mask
  is built inline with paddle.triu.
- `SwiGLU` module `ffn`: `w1`, `w2`, `w3` (no bias), F.silu inline.
- `RMSNorm` is hand-written (create_parameter): x * rsqrt(mean(x^2) + eps) * weight.
- model() gives the norm weights trained-looking values and the lambda vectors seeded
  Normal(0, 0.3) values, so that nothing is an identity.

The torch side (port_diff_transformer_torch.py) was written independently (Meta-LLaMA style):
a complex `freqs_cis` buffer, one fused `wqkv`, one packed `lambda_qk` [4, 8], nn.RMSNorm, the
SwiGLU weights inline in the block, and a module `output` head whose weight IS the embedding.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rmsnorm_one_plus_weight -> the hand-written RMSNorm scales by (1 + weight) (Gemma
                                    convention) instead of weight, in every RMSNorm
  paddle_ffn_gelu_gate           -> the SwiGLU gate uses F.gelu instead of F.silu (GeGLU)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, DIM, N_LAYERS, N_HEADS, FFN_DIM = 64, 32, 2, 2, 64
HEAD_DIM = DIM // N_HEADS // 2  # 8: width of each of the two q / k maps of a head
RMS_EPS = 1e-5
ROPE_THETA = 10000.0
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_rmsnorm_one_plus_weight", "paddle_ffn_gelu_gate"}
OTHER_BUGS = {"torch_subln_eps_default", "torch_diff_maps_misgrouped"}


def lambda_init_fn(depth):
    return 0.8 - 0.6 * math.exp(-0.3 * depth)


def precompute_rotary(seq_len, dim, theta=ROPE_THETA):
    inv_freq = 1.0 / (theta ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
    t = paddle.arange(seq_len, dtype="float32")
    freqs = paddle.outer(t, inv_freq)  # [L, dim / 2]
    return paddle.cos(freqs), paddle.sin(freqs)


def apply_rotary_emb(x, cos, sin):
    # x [B, L, N, D]; interleaved pairs (2i, 2i + 1); cos / sin [L, D / 2]
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    out = paddle.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
    return out.reshape(x.shape)


class RMSNorm(nn.Layer):
    def __init__(self, dim, eps=RMS_EPS, one_plus=False):
        super().__init__()
        self.eps, self.one_plus = eps, one_plus
        self.weight = self.create_parameter([dim], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, x):
        x = x * paddle.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * (1.0 + self.weight) if self.one_plus else x * self.weight


class MultiheadDiffAttn(nn.Layer):
    def __init__(self, depth, one_plus=False):
        super().__init__()
        self.num_heads = N_HEADS
        self.head_dim = HEAD_DIM
        self.scaling = HEAD_DIM**-0.5
        self.q_proj = nn.Linear(DIM, DIM, bias_attr=False)
        self.k_proj = nn.Linear(DIM, DIM, bias_attr=False)
        self.v_proj = nn.Linear(DIM, DIM, bias_attr=False)
        self.out_proj = nn.Linear(DIM, DIM, bias_attr=False)
        self.lambda_init = lambda_init_fn(depth)
        normal = nn.initializer.Normal(0.0, 0.1)
        self.lambda_q1 = self.create_parameter([HEAD_DIM], default_initializer=normal)
        self.lambda_k1 = self.create_parameter([HEAD_DIM], default_initializer=normal)
        self.lambda_q2 = self.create_parameter([HEAD_DIM], default_initializer=normal)
        self.lambda_k2 = self.create_parameter([HEAD_DIM], default_initializer=normal)
        self.subln = RMSNorm(2 * HEAD_DIM, eps=RMS_EPS, one_plus=one_plus)

    def forward(self, x, rel_pos):
        bsz, tgt_len, embed_dim = x.shape
        q = self.q_proj(x).reshape([bsz, tgt_len, 2 * self.num_heads, self.head_dim])
        k = self.k_proj(x).reshape([bsz, tgt_len, 2 * self.num_heads, self.head_dim])
        v = self.v_proj(x).reshape([bsz, tgt_len, self.num_heads, 2 * self.head_dim])
        q = apply_rotary_emb(q, *rel_pos)
        k = apply_rotary_emb(k, *rel_pos)
        q = q.transpose([0, 2, 1, 3]) * self.scaling
        k = k.transpose([0, 2, 1, 3])
        v = v.transpose([0, 2, 1, 3])
        attn_weights = paddle.matmul(q, k, transpose_y=True)
        mask = paddle.triu(paddle.full([tgt_len, tgt_len], float("-inf"), dtype=attn_weights.dtype), diagonal=1)
        attn_weights = F.softmax(attn_weights + mask, axis=-1)
        lambda_1 = paddle.exp(paddle.sum(self.lambda_q1 * self.lambda_k1, axis=-1))
        lambda_2 = paddle.exp(paddle.sum(self.lambda_q2 * self.lambda_k2, axis=-1))
        lambda_full = lambda_1 - lambda_2 + self.lambda_init
        attn_weights = attn_weights.reshape([bsz, self.num_heads, 2, tgt_len, tgt_len])
        attn_weights = attn_weights[:, :, 0] - lambda_full * attn_weights[:, :, 1]
        attn = paddle.matmul(attn_weights, v)  # [B, H, L, 16]
        attn = self.subln(attn)
        attn = attn * (1 - self.lambda_init)
        attn = attn.transpose([0, 2, 1, 3]).reshape([bsz, tgt_len, embed_dim])
        return self.out_proj(attn)


class SwiGLU(nn.Layer):
    def __init__(self, gelu_gate=False):
        super().__init__()
        self.gelu_gate = gelu_gate
        self.w1 = nn.Linear(DIM, FFN_DIM, bias_attr=False)
        self.w2 = nn.Linear(FFN_DIM, DIM, bias_attr=False)
        self.w3 = nn.Linear(DIM, FFN_DIM, bias_attr=False)

    def forward(self, x):
        gate = F.gelu(self.w1(x)) if self.gelu_gate else F.silu(self.w1(x))
        return self.w2(gate * self.w3(x))


class DiffDecoderLayer(nn.Layer):
    def __init__(self, depth, one_plus=False, gelu_gate=False):
        super().__init__()
        self.self_attn = MultiheadDiffAttn(depth, one_plus)
        self.ffn = SwiGLU(gelu_gate)
        self.self_attn_layer_norm = RMSNorm(DIM, one_plus=one_plus)
        self.final_layer_norm = RMSNorm(DIM, one_plus=one_plus)

    def forward(self, x, rel_pos):
        x = x + self.self_attn(self.self_attn_layer_norm(x), rel_pos)
        return x + self.ffn(self.final_layer_norm(x))


class DiffTransformerLM(nn.Layer):
    def __init__(self, one_plus=False, gelu_gate=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, DIM)
        self.layers = nn.LayerList([DiffDecoderLayer(i, one_plus, gelu_gate) for i in range(N_LAYERS)])
        self.norm = RMSNorm(DIM, one_plus=one_plus)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        rel_pos = precompute_rotary(input_ids.shape[1], HEAD_DIM)
        for layer in self.layers:
            x = layer(x, rel_pos)
        x = self.norm(x)
        return paddle.matmul(x, self.embed_tokens.weight, transpose_y=True)


def _trained_look(m):
    rng = np.random.default_rng(43)

    def put(p, arr):
        p.set_value(np.asarray(arr, dtype="float32").reshape(p.shape))

    put(m.embed_tokens.weight, rng.normal(0.0, 0.5, (VOCAB, DIM)))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, RMSNorm):
            put(layer.weight, rng.uniform(0.6, 1.4, layer.weight.shape))
        if isinstance(layer, MultiheadDiffAttn):
            for p in (layer.lambda_q1, layer.lambda_k1, layer.lambda_q2, layer.lambda_k2):
                put(p, rng.normal(0.0, 0.3, HEAD_DIM))
            # sharper maps, so that the two softmaxes and the positions matter
            put(layer.q_proj.weight, layer.q_proj.weight.numpy() * 2.0)
            put(layer.k_proj.weight, layer.k_proj.weight.numpy() * 2.0)
            # a small value path: the differential output is small before subln
            put(layer.v_proj.weight, layer.v_proj.weight.numpy() * 0.3)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_diff_transformer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DiffTransformerLM(one_plus=bug == "paddle_rmsnorm_one_plus_weight", gelu_gate=bug == "paddle_ffn_gelu_gate")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(41)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
