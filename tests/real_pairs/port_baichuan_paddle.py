"""Hand-written port, paddle side: a tiny Baichuan-13B-style decoder LM (written by "person A").

Input: positional `input_ids` [2, 12] int64 (numpy rng seed 61, vocab 64). Output: logits
[2, 12, 64]. Vocab 64, width 48, 6 heads of 8 (a head count that is NOT a power of two), 2
layers, SwiGLU hidden 96, RMSNorm eps 1e-6, no biases anywhere, no rotary / position embedding:
the attention is biased with ALiBi. The LM head is Baichuan2's NormHead: every vocab row of the
head weight is L2-normalised before the matmul.

One layer (pre-norm):  h = h + self_attn(input_layernorm(h));  h = h + mlp(post_attention_layernorm(h))
Attention (Baichuan-13B `BaichuanAttention`):
  proj = W_pack(h) [B, L, 3 * 48], block layout [q (48) | k (48) | v (48)], each head-major
  scores = q k^T / sqrt(8) + alibi_mask,  softmax, @ v, o_proj
alibi_mask (Baichuan-13B `_gen_alibi_mask`): slope_h * j (key position j = 0 .. L - 1, the same
  for every query row: a per-row constant relative to slope_h * (j - i), which softmax ignores)
  plus -inf above the diagonal. Slopes from Baichuan's `_get_interleave` for 6 heads: the 4-head
  slopes 1/4, 1/16, 1/64, 1/256, then every other 8-head slope: 1/2, 1/8.
MLP: down_proj(silu(gate_proj(x)) * up_proj(x)).

Paddle idioms on this side (the Baichuan-13B checkpoint's names):
- root `BaichuanForCausalLM`: `model` (BaichuanModel), `lm_head` (NormHead).
- `BaichuanModel`: `embed_tokens`, `layers` (LayerList, iterated), `norm`; the alibi mask
  [6, L, L] is built in THIS forward (`get_alibi_mask`, module-level `_gen_alibi_mask`) and
  passed to every layer as `attention_mask`.
- `BaichuanLayer`: `self_attn`, `mlp`, `input_layernorm`, `post_attention_layernorm`.
- `BaichuanAttention`: ONE fused `W_pack` Linear(48, 144) and `o_proj`; the split of W_pack's
  output is inline (reshape [B, L, 3, H, D]).
- `MLP`: `gate_proj`, `down_proj`, `up_proj` (Baichuan's registration order), `act_fn`
  (an nn.Silu module).
- `RMSNorm` is hand-written (create_parameter): weight * x * rsqrt(mean(x^2) + eps).
- `NormHead`: one parameter `weight` in paddle's [in, out] layout, [48, 64]; the forward
  normalises each vocab COLUMN (axis 0) and matmuls.
- model() gives the RMSNorm weights trained-looking values U(0.6, 1.4), a small embedding
  Normal(0, 0.04), sharper q / k and smaller o_proj / down_proj weights (seeded), so that
  nothing is an identity.

The torch side (port_baichuan_torch.py) was written independently: separate q / k / v Linears,
a per-attention slopes buffer with the bias slope_h * (j - i) built inline and applied through
F.scaled_dot_product_attention, one fused gate|up Linear, torch's nn.RMSNorm and an
nn.Linear subclass that normalises its rows.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_wpack_head_interleaved -> the W_pack output is viewed [B, L, H, 3, D] (the GPT-NeoX /
                                   Persimmon per-head layout) instead of Baichuan's block layout
                                   [B, L, 3, H, D], in the attention of both layers
  paddle_normhead_wrong_axis    -> NormHead normalises with F.normalize's default axis=1
                                   (copied from the torch code, where the weight is [vocab,
                                   hidden]): each hidden ROW of the [48, 64] paddle weight is
                                   normalised over the vocab instead of each vocab column
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, N_HEADS, N_LAYERS, INTERMEDIATE = 64, 48, 6, 2, 96
HEAD_DIM = HIDDEN // N_HEADS
MAX_POS = 16
RMS_EPS = 1e-6
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_wpack_head_interleaved", "paddle_normhead_wrong_axis"}
OTHER_BUGS = {"torch_alibi_slopes_pow2_formula", "torch_final_norm_eps_default"}


def _get_interleave(n):
    def _get_interleave_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return _get_interleave_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        _get_interleave_power_of_2(closest_power_of_2)
        + _get_interleave(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


def _fill_with_neg_inf(t):
    return paddle.full_like(t, float("-inf"))


def _gen_alibi_mask(n_head, max_pos):
    slopes = paddle.to_tensor(_get_interleave(n_head), dtype="float32")
    position_point = paddle.arange(max_pos, dtype="float32")
    alibi = slopes.reshape([n_head, 1, 1]) * position_point.reshape([1, 1, max_pos])  # [H, 1, P]
    alibi_mask = paddle.triu(_fill_with_neg_inf(paddle.zeros([max_pos, max_pos], dtype="float32")), 1)
    return alibi_mask.unsqueeze(0) + alibi  # [H, P, P]


class RMSNorm(nn.Layer):
    def __init__(self, hidden_size, epsilon=RMS_EPS):
        super().__init__()
        self.epsilon = epsilon
        self.weight = self.create_parameter([hidden_size], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, hidden_states):
        variance = hidden_states.astype("float32").pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * paddle.rsqrt(variance + self.epsilon)
        return self.weight * hidden_states


class MLP(nn.Layer):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias_attr=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias_attr=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias_attr=False)
        self.act_fn = nn.Silu()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class BaichuanAttention(nn.Layer):
    def __init__(self, head_interleaved=False):
        super().__init__()
        self.hidden_size = HIDDEN
        self.num_heads = N_HEADS
        self.head_dim = HEAD_DIM
        self.head_interleaved = head_interleaved
        self.W_pack = nn.Linear(self.hidden_size, 3 * self.hidden_size, bias_attr=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias_attr=False)

    def forward(self, hidden_states, attention_mask):
        bsz, q_len, _ = hidden_states.shape
        proj = self.W_pack(hidden_states)
        if self.head_interleaved:
            proj = proj.reshape([bsz, q_len, self.num_heads, 3, self.head_dim]).transpose([3, 0, 2, 1, 4])
        else:
            proj = proj.reshape([bsz, q_len, 3, self.num_heads, self.head_dim]).transpose([2, 0, 3, 1, 4])
        query_states, key_states, value_states = proj[0], proj[1], proj[2]  # [B, H, L, D]

        attn_weights = paddle.matmul(query_states, key_states, transpose_y=True) / math.sqrt(self.head_dim)
        attn_weights = attn_weights + attention_mask.unsqueeze(0)
        attn_weights = F.softmax(attn_weights, axis=-1)
        attn_output = paddle.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose([0, 2, 1, 3]).reshape([bsz, q_len, self.hidden_size])
        return self.o_proj(attn_output)


class BaichuanLayer(nn.Layer):
    def __init__(self, head_interleaved=False):
        super().__init__()
        self.self_attn = BaichuanAttention(head_interleaved)
        self.mlp = MLP(HIDDEN, INTERMEDIATE)
        self.input_layernorm = RMSNorm(HIDDEN, epsilon=RMS_EPS)
        self.post_attention_layernorm = RMSNorm(HIDDEN, epsilon=RMS_EPS)

    def forward(self, hidden_states, attention_mask):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = residual + self.self_attn(hidden_states, attention_mask)
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        return residual + self.mlp(hidden_states)


class BaichuanModel(nn.Layer):
    def __init__(self, head_interleaved=False):
        super().__init__()
        self.n_head = N_HEADS
        self.max_cache_pos = MAX_POS
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList([BaichuanLayer(head_interleaved) for _ in range(N_LAYERS)])
        self.norm = RMSNorm(HIDDEN, epsilon=RMS_EPS)

    def get_alibi_mask(self, seq_length_with_past):
        future_mask = _gen_alibi_mask(self.n_head, self.max_cache_pos)
        return future_mask[: self.n_head, :seq_length_with_past, :seq_length_with_past]

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        alibi_mask = self.get_alibi_mask(input_ids.shape[1])
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, alibi_mask)
        return self.norm(hidden_states)


class NormHead(nn.Layer):
    def __init__(self, hidden_size, vocab_size, wrong_axis=False):
        super().__init__()
        self.wrong_axis = wrong_axis
        self.weight = self.create_parameter([hidden_size, vocab_size])  # paddle layout [in, out]

    def forward(self, hidden_states):
        if self.wrong_axis:
            norm_weight = F.normalize(self.weight)  # default axis=1, as in the torch code
        else:
            norm_weight = F.normalize(self.weight, axis=0)  # each vocab column
        return paddle.matmul(hidden_states, norm_weight)


class BaichuanForCausalLM(nn.Layer):
    def __init__(self, head_interleaved=False, wrong_axis=False):
        super().__init__()
        self.model = BaichuanModel(head_interleaved)
        self.lm_head = NormHead(HIDDEN, VOCAB, wrong_axis)

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))


def _trained_look(m):
    rng = np.random.default_rng(63)

    def put(p, arr):
        p.set_value(np.asarray(arr, dtype="float32").reshape(p.shape))

    put(m.model.embed_tokens.weight, rng.normal(0.0, 0.04, (VOCAB, HIDDEN)))
    # head columns with very different norms, so that the normalisation matters
    put(m.lm_head.weight, rng.normal(0.0, 0.2, (HIDDEN, VOCAB)) * rng.uniform(0.3, 3.0, (1, VOCAB)))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, RMSNorm):
            put(layer.weight, rng.uniform(0.6, 1.4, layer.weight.shape))
        if isinstance(layer, BaichuanAttention):
            w = layer.W_pack.weight.numpy().copy()
            w[:, : 2 * HIDDEN] *= 2.0  # sharper maps: the positions (ALiBi) and the heads matter
            put(layer.W_pack.weight, w)
            put(layer.o_proj.weight, layer.o_proj.weight.numpy() * 0.06)
        if isinstance(layer, MLP):
            put(layer.down_proj.weight, layer.down_proj.weight.numpy() * 0.06)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_baichuan paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = BaichuanForCausalLM(
        head_interleaved=bug == "paddle_wpack_head_interleaved",
        wrong_axis=bug == "paddle_normhead_wrong_axis",
    )
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(61)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
