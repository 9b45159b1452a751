"""Hand-written port, paddle side: a tiny OLMo-style decoder LM (written by "person A", OLMo-codebase style).

Sizes: vocab 64, d_model 32, 4 heads of 8 (full multi-head), SwiGLU hidden 64 (the fused ff_proj
is 32 -> 128), 2 blocks, sequence length 12, batch 2. No bias anywhere. Rotary (rotate-half,
theta 10000) on q and k, causal softmax with scale 1/sqrt(8).

OLMo-1 specifics:
- NON-PARAMETRIC LayerNorm (no weight, no bias, eps 1e-5) before the attention, before the MLP
  and at the end (`ln_f`).
- QKV clipping: the fused q|k|v projection output is clamped to [-clip_qkv, clip_qkv] with
  clip_qkv = 1.0 (about 16 % of the entries here are clipped).
- SwiGLU with ONE fused `ff_proj` whose output is split `x, gate = x.chunk(2, -1)`: the gate is
  the SECOND half, act = silu(gate) * x.
- Weight tying: the logits are matmul(h, wte.weight^T), inline, no head module.

Paddle idioms on this side:
- root `OLMo`: `transformer` = nn.LayerDict(wte, blocks (LayerList of `OLMoSequentialBlock`),
  ln_f). wte is Normal(0, 0.04).
- `OLMoSequentialBlock` registers, in OLMo's order, `act` (SwiGLU module), `attn_out`, `ff_out`,
  `rotary_emb`, `attn_norm`, `ff_norm`, `att_proj` (Linear(32, 96): columns 0:32 q, 32:64 k,
  64:96 v), `ff_proj` (Linear(32, 128): columns 0:64 x ("up"), 64:128 gate). The attention is
  a METHOD of the block (`attention`), not a module; the clamp is inline in the block forward.
- `LayerNorm` wraps F.layer_norm with weight=None, bias=None (no parameters at all).
- `RotaryEmbedding` is a module called as rotary_emb(q, k) -> (q, k), computing its table inline
  (no buffer).
- `SwiGLU` is the activation module `act`.

The torch side (port_olmo_torch.py) was written independently (HF transformers' Olmo layout):
separate q / k / v projections each clamped, separate gate / up projections, an nn.SiLU module,
a root-level rotary module producing cos / sin, and an untied lm_head.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_ln_eps_1e6         -> the LayerNorm class defaults to eps 1e-6 instead of OLMo's 1e-5,
                               in every norm (precision-level)
  paddle_swiglu_gate_first  -> the SwiGLU module unpacks `gate, x = x.chunk(2)`: the gate is
                               taken from the FIRST half of ff_proj
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_ln_eps_1e6", "paddle_swiglu_gate_first"}
OTHER_BUGS = {"torch_clip_v_unclipped", "torch_rotate_half_sign"}


class ModelConfig:
    d_model = 32
    n_heads = 4
    n_layers = 2
    mlp_hidden_size = 128  # ff_proj output: 2 x 64
    vocab_size = 64
    clip_qkv = 1.0
    rope_theta = 10000.0
    layer_norm_eps = 1e-5
    weight_tying = True

    def __init__(self, bug=""):
        self.bug = bug


class LayerNorm(nn.Layer):
    """Non-parametric layer norm (OLMo's `default` layer norm with elementwise_affine=False)."""

    def __init__(self, config, size=None, eps=None):
        super().__init__()
        self.normalized_shape = [size or config.d_model]
        if eps is None:
            eps = 1e-6 if config.bug == "paddle_ln_eps_1e6" else config.layer_norm_eps
        self.eps = eps

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, weight=None, bias=None, epsilon=self.eps)


class RotaryEmbedding(nn.Layer):
    def __init__(self, config):
        super().__init__()
        self.dim = config.d_model // config.n_heads
        self.theta = config.rope_theta

    def rotate_half(self, x):
        b, nh, t, hs = x.shape
        x = x.reshape([b, nh, t, 2, hs // 2])
        x1, x2 = x.unbind(axis=-2)
        return paddle.concat([-x2, x1], axis=-1)

    def forward(self, q, k):
        seq_len = q.shape[-2]
        inv_freq = 1.0 / (self.theta ** (paddle.arange(0, self.dim, 2, dtype="float32") / self.dim))
        seq = paddle.arange(seq_len, dtype="float32")
        freqs = seq.unsqueeze(1) * inv_freq.unsqueeze(0)
        positions = paddle.concat([freqs, freqs], axis=-1)
        pos_sin, pos_cos = positions.sin(), positions.cos()
        q_ = q * pos_cos + self.rotate_half(q) * pos_sin
        k_ = k * pos_cos + self.rotate_half(k) * pos_sin
        return q_, k_


class SwiGLU(nn.Layer):
    def __init__(self, config):
        super().__init__()
        self.gate_first = config.bug == "paddle_swiglu_gate_first"

    def forward(self, x):
        if self.gate_first:
            gate, x = x.chunk(2, axis=-1)
        else:
            x, gate = x.chunk(2, axis=-1)
        return F.silu(gate) * x


class OLMoSequentialBlock(nn.Layer):
    def __init__(self, layer_id, config):
        super().__init__()
        self.layer_id = layer_id
        self.config = config
        self.act = SwiGLU(config)
        self.attn_out = nn.Linear(config.d_model, config.d_model, bias_attr=False)
        self.ff_out = nn.Linear(config.mlp_hidden_size // 2, config.d_model, bias_attr=False)
        self.rotary_emb = RotaryEmbedding(config)
        self.attn_norm = LayerNorm(config)
        self.ff_norm = LayerNorm(config)
        self.fused_dims = (config.d_model, config.d_model, config.d_model)
        self.att_proj = nn.Linear(config.d_model, sum(self.fused_dims), bias_attr=False)
        self.ff_proj = nn.Linear(config.d_model, config.mlp_hidden_size, bias_attr=False)

    def attention(self, q, k, v):
        B, T, C = q.shape
        nh = self.config.n_heads
        q = q.reshape([B, T, nh, C // nh]).transpose([0, 2, 1, 3])
        k = k.reshape([B, T, nh, C // nh]).transpose([0, 2, 1, 3])
        v = v.reshape([B, T, nh, C // nh]).transpose([0, 2, 1, 3])
        q, k = self.rotary_emb(q, k)
        att = paddle.matmul(q, k, transpose_y=True) / math.sqrt(C // nh)
        causal = paddle.tril(paddle.ones([T, T], dtype="float32"))
        att = att + (1.0 - causal) * -1e9  # additive causal bias
        att = F.softmax(att, axis=-1)
        y = paddle.matmul(att, v).transpose([0, 2, 1, 3]).reshape([B, T, C])
        return self.attn_out(y)

    def forward(self, x):
        qkv = self.att_proj(self.attn_norm(x))
        if self.config.clip_qkv is not None:
            qkv = qkv.clip(min=-self.config.clip_qkv, max=self.config.clip_qkv)
        q, k, v = qkv.split(list(self.fused_dims), axis=-1)
        x = x + self.attention(q, k, v)
        og_x = x
        x = self.ff_norm(x)
        x = self.ff_proj(x)
        x = self.act(x)
        x = self.ff_out(x)
        return og_x + x


class OLMo(nn.Layer):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.LayerDict({
            "wte": nn.Embedding(config.vocab_size, config.d_model, weight_attr=nn.initializer.Normal(0.0, 0.04)),
            "blocks": nn.LayerList([OLMoSequentialBlock(i, config) for i in range(config.n_layers)]),
            "ln_f": LayerNorm(config),
        })

    def forward(self, input_ids):
        x = self.transformer["wte"](input_ids)
        for block in self.transformer["blocks"]:
            x = block(x)
        x = self.transformer["ln_f"](x)
        return paddle.matmul(x, self.transformer["wte"].weight, transpose_y=True)  # weight tying


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_olmo paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = OLMo(ModelConfig(bug if bug in OWN_BUGS else ""))
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(7)
    return rng.integers(0, ModelConfig.vocab_size, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
