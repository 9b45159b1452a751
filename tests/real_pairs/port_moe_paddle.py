"""Hand-written port, paddle side: a tiny mixture-of-experts decoder LM (written by "person A").

Mixtral-style code, written by hand. Sizes: vocab 64, hidden 32, 4 heads of 8, 2 decoder layers,
learned absolute positions (16), RMSNorm eps 1e-6, no biases anywhere, untied `lm_head`. Each
layer's FFN is a sparse MoE block of 4 SwiGLU experts (intermediate 48) with top-2 routing.
Batch 2 x 8 tokens, eval mode.

Paddle idioms on this side:
- `MoEForCausalLM`: `embed_tokens`, `embed_positions` (both nn.Embedding), `layers` (LayerList of
  `MoEDecoderLayer`), `norm`, `lm_head` (Linear(32, 64), weight [in, out]).
- `MoEDecoderLayer` registers `self_attn`, `block_sparse_moe`, `input_layernorm`,
  `post_attention_layernorm` (Mixtral's order; the norms are called first).
- `RMSNorm` written by hand: x * rsqrt(mean(x^2) + eps) * weight.
- `Attention`: separate `q_proj`, `k_proj`, `v_proj`, `o_proj`; explicit matmul, scale 1/sqrt(8),
  an additive causal mask (-inf above the diagonal) built inline, softmax in float32.
- `SparseMoeBlock`: the router `gate` = Linear(32, 4, no bias); routing as in HF Mixtral:
  softmax over ALL 4 logits (float32), paddle.topk(2) of the probabilities, then the two weights
  renormalised to sum to 1. The experts are a LayerList `experts` of 4 separate `Expert` layers
  with Mixtral's names (`w1` = gate [32, 48], `w3` = up [32, 48], `w2` = down [48, 32]):
  w2(silu(w1(x)) * w3(x)). Token dispatch: for each expert in order 0..3, paddle.nonzero finds
  the (token, slot) pairs routed to it, the expert is called on those tokens only (an expert with
  no token is not called), its output is scaled by the routing weight and paddle.index_add'ed
  into the result.

The torch side (port_moe_torch.py) was written independently: fused qkv, torch's nn.RMSNorm, a
raw position parameter, top-k of the LOGITS then softmax over the two (the same weights), and the
experts' weights STACKED into 3-D parameters [4, ...] used with gathers and torch.bmm
(port_moe_hook.py puts each paddle expert into its slice).

Planted bugs (PADIFF_BUG) of this side, see port_moe_truth.json; the torch side's bug names are
accepted and ignored, any other name raises:
  paddle_w1_w3_swapped  -> every Expert computes w2(silu(w3(x)) * w1(x)): the gate and up
                           projections confused (w1 / w3 are Mixtral's opaque names)
  paddle_topk_no_renorm -> the two top-k routing weights are used as they come out of the
                           4-way softmax, without renormalising them to sum to 1
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, HEADS, LAYERS, MAX_POS = 64, 32, 4, 2, 16
NUM_EXPERTS, TOP_K, INTER = 4, 2, 48
HEAD_DIM = HIDDEN // HEADS
EPS = 1e-6
BATCH, SEQ = 2, 8
OWN_BUGS = {"paddle_w1_w3_swapped", "paddle_topk_no_renorm"}
OTHER_BUGS = {"router_softmax_fp16"}


class RMSNorm(nn.Layer):
    def __init__(self, hidden_size, eps=EPS):
        super().__init__()
        self.weight = self.create_parameter(
            shape=[hidden_size], dtype="float32", default_initializer=nn.initializer.Constant(1.0))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return paddle.rsqrt(variance + self.eps) * x * self.weight


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, HIDDEN, bias_attr=False)
        self.k_proj = nn.Linear(HIDDEN, HIDDEN, bias_attr=False)
        self.v_proj = nn.Linear(HIDDEN, HIDDEN, bias_attr=False)
        self.o_proj = nn.Linear(HIDDEN, HIDDEN, bias_attr=False)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = (p(x).reshape([B, T, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HEAD_DIM)
        causal = paddle.triu(paddle.full([T, T], float("-inf")), diagonal=1)
        probs = F.softmax(scores + causal, axis=-1, dtype="float32")
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([B, T, HIDDEN])
        return self.o_proj(out)


class Expert(nn.Layer):
    def __init__(self, swapped=False):
        super().__init__()
        self.w1 = nn.Linear(HIDDEN, INTER, bias_attr=False)  # gate
        self.w2 = nn.Linear(INTER, HIDDEN, bias_attr=False)  # down
        self.w3 = nn.Linear(HIDDEN, INTER, bias_attr=False)  # up
        self.swapped = swapped

    def forward(self, x):
        h1, h3 = self.w1(x), self.w3(x)
        if self.swapped:  # the bug: silu on the up projection, the gate used linearly
            return self.w2(F.silu(h3) * h1)
        return self.w2(F.silu(h1) * h3)


class SparseMoeBlock(nn.Layer):
    def __init__(self, swapped=False, no_renorm=False):
        super().__init__()
        self.gate = nn.Linear(HIDDEN, NUM_EXPERTS, bias_attr=False)
        self.experts = nn.LayerList([Expert(swapped) for _ in range(NUM_EXPERTS)])
        self.no_renorm = no_renorm

    def forward(self, hidden_states):
        B, T, C = hidden_states.shape
        h = hidden_states.reshape([-1, C])
        router_logits = self.gate(h)  # [N, E]
        routing_weights = F.softmax(router_logits, axis=-1, dtype="float32")
        routing_weights, selected_experts = paddle.topk(routing_weights, TOP_K, axis=-1)
        if not self.no_renorm:
            routing_weights = routing_weights / routing_weights.sum(axis=-1, keepdim=True)
        routing_weights = routing_weights.astype(h.dtype)
        final = paddle.zeros_like(h)
        for e in range(NUM_EXPERTS):
            hits = paddle.nonzero(selected_experts == e)  # [n, 2]: (token, slot)
            if hits.shape[0] == 0:
                continue
            token_idx = hits[:, 0]
            y = self.experts[e](paddle.gather(h, token_idx))
            y = y * paddle.gather_nd(routing_weights, hits).unsqueeze(-1)
            final = paddle.index_add(final, token_idx, 0, y)
        return final.reshape([B, T, C])


class MoEDecoderLayer(nn.Layer):
    def __init__(self, **bugs):
        super().__init__()
        self.self_attn = Attention()
        self.block_sparse_moe = SparseMoeBlock(**bugs)
        self.input_layernorm = RMSNorm(HIDDEN)
        self.post_attention_layernorm = RMSNorm(HIDDEN)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.block_sparse_moe(self.post_attention_layernorm(x))


class MoEForCausalLM(nn.Layer):
    def __init__(self, **bugs):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.embed_positions = nn.Embedding(MAX_POS, HIDDEN)
        self.layers = nn.LayerList([MoEDecoderLayer(**bugs) for _ in range(LAYERS)])
        self.norm = RMSNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        T = input_ids.shape[1]
        positions = paddle.arange(T, dtype="int64").unsqueeze(0)
        x = self.embed_tokens(input_ids) + self.embed_positions(positions)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_moe paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MoEForCausalLM(swapped=bug == "paddle_w1_w3_swapped", no_renorm=bug == "paddle_topk_no_renorm")
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(3)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [B, T, VOCAB] through lm_head
    return (output**2).mean()
