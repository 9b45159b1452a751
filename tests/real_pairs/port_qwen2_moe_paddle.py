"""Hand-written port, paddle side: a tiny Qwen2-MoE-style decoder LM (written by "person A").

Sizes: vocab 64, width 32, 4 query heads of 8 with 2 key/value heads (GQA, 2 query heads per kv
head), 2 layers, sequence length 8, batch 2 (16 tokens). Qwen2-MoE features kept:
- RMSNorm (eps 1e-6): pre-norm residual blocks, x + attn(n1(x)), then x + moe(n2(x)), and a final
  norm; untied lm_head without bias;
- q / k / v projections with bias, o_proj without bias; full rotary (HF half-split, rotate_half)
  with rope_theta 1e6; causal softmax attention;
- sparse MoE MLP in every layer: a router `gate` Linear(32, 4, no bias), softmax over the 4
  experts in fp32, top-2, NOT renormalised (norm_topk_prob = False, Qwen1.5-MoE); each expert is
  a SwiGLU MLP with hidden 24; a shared expert (SwiGLU, hidden 48) gated per token by
  sigmoid(shared_expert_gate(x)), shared_expert_gate = Linear(32, 1, no bias);
  out = sum_k w_k * expert_k(x) + sigmoid(g(x)) * shared(x).

Paddle idioms on this side (HF Qwen2MoeForCausalLM layout):
- root `Qwen2MoeForCausalLM`: `embed_tokens` (Normal(0, 0.5)), `layers` (LayerList of
  `Qwen2MoeDecoderLayer`), `norm`, `lm_head`.
- `Qwen2MoeDecoderLayer`: `self_attn`, `mlp`, `input_layernorm`, `post_attention_layernorm` (HF
  registration order: the norms last, called first).
- `Qwen2MoeRMSNorm` hand-written: x * rsqrt(mean(x^2) + eps) * weight.
- `Qwen2MoeAttention`: separate `q_proj` (32 -> 32), `k_proj`, `v_proj` (32 -> 16), `o_proj`;
  the rotary cos / sin come from a module-level helper and are applied inline (no rotary
  module); GQA by paddle.repeat_interleave on the head axis; mask by paddle.triu + paddle.where.
- `Qwen2MoeSparseMoeBlock` registers `gate`, `experts` (LayerList of 4 `Qwen2MoeMLP`: separate
  gate_proj / up_proj / down_proj, F.silu inline), `shared_expert` (a `Qwen2MoeMLP` of hidden
  48) and `shared_expert_gate`. HF-style dispatch: for each expert the routed tokens are gathered
  (paddle.nonzero), the expert module is CALLED ONLY ON THOSE TOKENS, its output is scaled by
  the token's routing weight and added back with paddle.index_add.
- model() gives the RMSNorm weights and the q / k / v biases trained-looking values (seeded).

The torch side (port_qwen2_moe_torch.py) was written independently: fused qkv, a rotary module,
expand-based GQA, SDPA, torch.nn.RMSNorm, and the 4 experts STACKED in two parameters
(`w13` [4, 48, 32] gate|up and `w2` [4, 32, 24]) computed densely for all tokens with einsum, plus
a fused gate|up shared expert.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_router_weights_bf16   -> the routing weights (softmax probabilities of the top-2
                                  experts) are cast to bfloat16 and back before scaling the
                                  expert outputs (precision-level)
  paddle_expert_gate_up_swapped -> Qwen2MoeMLP applies the SiLU to up_proj and multiplies by
                                  gate_proj: down(silu(up(x)) * gate(x)); the class is used by
                                  every routed expert and by the shared expert
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, LAYERS = 64, 32, 4, 2, 8, 2
NUM_EXPERTS, TOP_K, MOE_INTER, SHARED_INTER = 4, 2, 24, 48
ROPE_THETA, RMS_EPS = 1000000.0, 1e-6
BATCH, SEQ = 2, 8
OWN_BUGS = {"paddle_router_weights_bf16", "paddle_expert_gate_up_swapped"}
OTHER_BUGS = {"torch_topk_renormalized", "torch_rope_default_base"}


def rope_cos_sin(seq_len, dim, theta=ROPE_THETA):
    inv_freq = 1.0 / (theta ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
    t = paddle.arange(seq_len, dtype="float32")
    freqs = paddle.outer(t, inv_freq)
    emb = paddle.concat([freqs, freqs], axis=-1)  # [L, dim]
    return emb.cos(), emb.sin()


def rotate_half(x):
    half = x.shape[-1] // 2
    return paddle.concat([-x[..., half:], x[..., :half]], axis=-1)


class Qwen2MoeRMSNorm(nn.Layer):
    def __init__(self, hidden_size, eps=RMS_EPS):
        super().__init__()
        self.variance_epsilon = eps
        self.weight = self.create_parameter([hidden_size], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * paddle.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class Qwen2MoeAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias_attr=False)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.shape
        q = self.q_proj(hidden_states).reshape([bsz, q_len, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        k = self.k_proj(hidden_states).reshape([bsz, q_len, KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        v = self.v_proj(hidden_states).reshape([bsz, q_len, KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        cos, sin = rope_cos_sin(q_len, HEAD_DIM)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = paddle.repeat_interleave(k, HEADS // KV_HEADS, axis=1)
        v = paddle.repeat_interleave(v, HEADS // KV_HEADS, axis=1)
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HEAD_DIM)
        future = paddle.triu(paddle.ones([q_len, q_len], dtype="float32"), diagonal=1).astype("bool")
        scores = paddle.where(future, paddle.full_like(scores, float("-inf")), scores)
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([bsz, q_len, HEADS * HEAD_DIM])
        return self.o_proj(out)


class Qwen2MoeMLP(nn.Layer):
    def __init__(self, intermediate_size, swapped=False):
        super().__init__()
        self.swapped = swapped
        self.gate_proj = nn.Linear(HIDDEN, intermediate_size, bias_attr=False)
        self.up_proj = nn.Linear(HIDDEN, intermediate_size, bias_attr=False)
        self.down_proj = nn.Linear(intermediate_size, HIDDEN, bias_attr=False)

    def forward(self, x):
        if self.swapped:
            return self.down_proj(F.silu(self.up_proj(x)) * self.gate_proj(x))
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Qwen2MoeSparseMoeBlock(nn.Layer):
    def __init__(self, weights_bf16=False, swapped=False):
        super().__init__()
        self.weights_bf16 = weights_bf16
        self.gate = nn.Linear(HIDDEN, NUM_EXPERTS, bias_attr=False)
        self.experts = nn.LayerList([Qwen2MoeMLP(MOE_INTER, swapped) for _ in range(NUM_EXPERTS)])
        self.shared_expert = Qwen2MoeMLP(SHARED_INTER, swapped)
        self.shared_expert_gate = nn.Linear(HIDDEN, 1, bias_attr=False)

    def forward(self, hidden_states):
        bsz, seq_len, hidden_dim = hidden_states.shape
        flat = hidden_states.reshape([-1, hidden_dim])
        router_logits = self.gate(flat)  # [T, E]
        routing_weights = F.softmax(router_logits.astype("float32"), axis=-1)
        routing_weights, selected_experts = paddle.topk(routing_weights, TOP_K, axis=-1)  # [T, K]
        if self.weights_bf16:
            routing_weights = routing_weights.astype("bfloat16").astype("float32")
        final = paddle.zeros_like(flat)
        for expert_idx in range(NUM_EXPERTS):
            hit = (selected_experts == expert_idx).astype("float32")  # [T, K]
            token_idx = paddle.nonzero(hit.sum(-1) > 0).flatten()
            if token_idx.shape[0] == 0:
                continue
            weight = (routing_weights * hit).sum(-1)  # [T]
            current = paddle.gather(flat, token_idx)
            out = self.experts[expert_idx](current) * paddle.gather(weight, token_idx).unsqueeze(-1)
            final = paddle.index_add(final, token_idx, 0, out)
        shared = self.shared_expert(flat)
        shared = F.sigmoid(self.shared_expert_gate(flat)) * shared
        final = final + shared
        return final.reshape([bsz, seq_len, hidden_dim])


class Qwen2MoeDecoderLayer(nn.Layer):
    def __init__(self, **bugs):
        super().__init__()
        self.self_attn = Qwen2MoeAttention()
        self.mlp = Qwen2MoeSparseMoeBlock(**bugs)
        self.input_layernorm = Qwen2MoeRMSNorm(HIDDEN)
        self.post_attention_layernorm = Qwen2MoeRMSNorm(HIDDEN)

    def forward(self, hidden_states):
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states))
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class Qwen2MoeForCausalLM(nn.Layer):
    def __init__(self, **bugs):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN, weight_attr=nn.initializer.Normal(0.0, 0.5))
        self.layers = nn.LayerList([Qwen2MoeDecoderLayer(**bugs) for _ in range(LAYERS)])
        self.norm = Qwen2MoeRMSNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(self.norm(h))


def _trained_look(m):
    rng = np.random.default_rng(118)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, Qwen2MoeRMSNorm):
            layer.weight.set_value(rng.normal(1.0, 0.15, HIDDEN).astype("float32"))
        elif isinstance(layer, nn.Linear) and layer.bias is not None:
            n = layer.bias.shape[0]
            layer.bias.set_value(rng.normal(0.0, 0.1, n).astype("float32"))
        if isinstance(layer, Qwen2MoeSparseMoeBlock):
            # a router and a shared-expert gate that have learned something (not near-uniform)
            layer.gate.weight.set_value(rng.normal(0.0, 0.6, [HIDDEN, NUM_EXPERTS]).astype("float32"))
            layer.shared_expert_gate.weight.set_value(rng.normal(0.0, 0.3, [HIDDEN, 1]).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_qwen2_moe paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = Qwen2MoeForCausalLM(weights_bf16=bug == "paddle_router_weights_bf16",
                            swapped=bug == "paddle_expert_gate_up_swapped")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(118)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 8, 64]
    return (output**2).mean()
