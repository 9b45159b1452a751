"""Hand-written port, paddle side: a tiny StarCoder / SantaCoder-style decoder with multi-query
attention (written by "person A").

Inputs: positional `input_ids` [2, 12] int64 (numpy rng seed 37) and keyword `attention_mask`
[2, 12] int64: batch row 0 is all ones, batch row 1 is LEFT-padded (its first 3 tokens are the
pad id 0 with mask 0). Output: logits [2, 12, 64].

Shared sizes: vocab 64, width 32, 2 layers, 4 query heads of 8 and ONE shared key / value head of
8 (multi-query attention), learned absolute position embeddings (16 positions), MLP 32 -> 128 ->
32 with GELU (tanh approximation), LayerNorm eps 1e-5, pre-norm blocks, final LayerNorm and an
UNTIED head without bias.

Positions follow the left padding: position_ids = cumsum(attention_mask) - 1, and pad tokens
get position 1 (the HF convention). Attention: a query at i sees key j when j <= i AND key j is
not padding; scores are q k^T / sqrt(8); masked scores are REPLACED by float32 min (so a
fully-masked pad query row is a uniform average of all 12 values, on both sides).

Paddle idioms on this side:
- root `StarCoderLM`: `embeddings` (`TokenPositionEmbedding`, children `word` and `position`,
  computes the position ids from the mask inside its forward), `decoder_layers` (LayerList of
  `MQABlock`, iterated), `final_norm` (nn.LayerNorm), `output` nn.Linear(32, 64,
  bias_attr=False).
- `MQABlock(x, attention_mask)` receives the RAW [B, L] 0 / 1 mask; registers `norm1`,
  `self_attention`, `norm2`, `feed_forward`.
- `MultiQueryAttention`: SEPARATE `q_proj` Linear(32, 32), `k_proj` Linear(32, 8), `v_proj`
  Linear(32, 8) (all with bias), `out_proj`; q is [B, 4, L, 8], k / v are [B, 1, L, 8] and
  broadcast in paddle.matmul; the causal + padding mask is built inside the forward (tril &
  key mask) and applied with paddle.where.
- `FeedForward`: `fc_in`, `fc_out`, with F.gelu(approximate=True) inline.
- model() gives the embeddings small trained-looking values (token N(0, 0.08), position
  N(0, 0.02)), the LayerNorms and biases trained-looking seeded values.

The torch side (port_starcoder_mqa_torch.py) was written independently (HF GPTBigCode style): a
`transformer` body, ONE packed `c_attn` Linear(32, 48) = q (32) | k (8) | v (8), query reshaped
to [B, L * H, 8] and a baddbmm against the single key, GPTBigCode's "scale attention softmax in
fp32" path (scores scaled by 1 / (layer_idx + 1) and multiplied back inside the softmax), and a
[B, L, 1, L] bool mask built once in the body.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_ln_eps_1e6          -> every LayerNorm is built with epsilon=1e-6 (copied from another
                                config) instead of StarCoder's layer_norm_epsilon 1e-5; it only
                                shows where the LayerNorm input has a small variance: the first
                                block's norm1 sees the raw embeddings (variance ~7e-3)
  paddle_pad_mask_query_axis -> the padding mask is broadcast on the QUERY axis
                                (mask[:, None, :, None]) instead of the key axis, so the real
                                tokens of the left-padded row attend to the pad tokens
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, WIDTH, N_LAYERS, MAX_POS = 64, 32, 2, 16
N_HEADS, HEAD_DIM = 4, 8
FFN = 4 * WIDTH
LN_EPS = 1e-5
BATCH, SEQ, N_PAD = 2, 12, 3
OWN_BUGS = {"paddle_ln_eps_1e6", "paddle_pad_mask_query_axis"}
OTHER_BUGS = {"torch_softmax_unscale_missing", "torch_positions_ignore_padding"}
_MIN = float(np.finfo(np.float32).min)


class TokenPositionEmbedding(nn.Layer):
    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, WIDTH)
        self.position = nn.Embedding(MAX_POS, WIDTH)

    def forward(self, input_ids, attention_mask):
        pos = paddle.cumsum(attention_mask, axis=-1) - 1
        pos = paddle.where(attention_mask == 0, paddle.ones_like(pos), pos)
        return self.word(input_ids) + self.position(pos)


class MultiQueryAttention(nn.Layer):
    def __init__(self, mask_query_axis=False):
        super().__init__()
        self.mask_query_axis = mask_query_axis
        self.q_proj = nn.Linear(WIDTH, N_HEADS * HEAD_DIM)
        self.k_proj = nn.Linear(WIDTH, HEAD_DIM)
        self.v_proj = nn.Linear(WIDTH, HEAD_DIM)
        self.out_proj = nn.Linear(N_HEADS * HEAD_DIM, WIDTH)

    def forward(self, x, attention_mask):
        b, seq = x.shape[0], x.shape[1]
        q = self.q_proj(x).reshape([b, seq, N_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])  # [B, H, L, D]
        k = self.k_proj(x).unsqueeze(1)  # [B, 1, L, D]: one head shared by all queries
        v = self.v_proj(x).unsqueeze(1)
        scores = paddle.matmul(q, k, transpose_y=True) * (HEAD_DIM**-0.5)  # [B, H, L, L]
        causal = paddle.tril(paddle.ones([seq, seq], dtype="bool")).unsqueeze([0, 1])
        real = attention_mask != 0
        if self.mask_query_axis:
            allowed = paddle.logical_and(causal, real.unsqueeze([1, 3]))
        else:
            allowed = paddle.logical_and(causal, real.unsqueeze([1, 2]))
        scores = paddle.where(allowed, scores, paddle.full_like(scores, _MIN))
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, seq, N_HEADS * HEAD_DIM])
        return self.out_proj(out)


class FeedForward(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(WIDTH, FFN)
        self.fc_out = nn.Linear(FFN, WIDTH)

    def forward(self, x):
        return self.fc_out(F.gelu(self.fc_in(x), approximate=True))


class MQABlock(nn.Layer):
    def __init__(self, ln_eps, mask_query_axis=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(WIDTH, epsilon=ln_eps)
        self.self_attention = MultiQueryAttention(mask_query_axis)
        self.norm2 = nn.LayerNorm(WIDTH, epsilon=ln_eps)
        self.feed_forward = FeedForward()

    def forward(self, x, attention_mask):
        x = x + self.self_attention(self.norm1(x), attention_mask)
        return x + self.feed_forward(self.norm2(x))


class StarCoderLM(nn.Layer):
    def __init__(self, ln_eps=LN_EPS, mask_query_axis=False):
        super().__init__()
        self.embeddings = TokenPositionEmbedding()
        self.decoder_layers = nn.LayerList([MQABlock(ln_eps, mask_query_axis) for _ in range(N_LAYERS)])
        self.final_norm = nn.LayerNorm(WIDTH, epsilon=ln_eps)
        self.output = nn.Linear(WIDTH, VOCAB, bias_attr=False)

    def forward(self, input_ids, attention_mask=None):
        if attention_mask is None:
            attention_mask = paddle.ones_like(input_ids)
        h = self.embeddings(input_ids, attention_mask)
        for layer in self.decoder_layers:
            h = layer(h, attention_mask)
        return self.output(self.final_norm(h))


def _trained_look(m):
    rng = np.random.default_rng(43)
    m.embeddings.word.weight.set_value(rng.normal(0.0, 0.08, (VOCAB, WIDTH)).astype("float32"))
    m.embeddings.position.weight.set_value(rng.normal(0.0, 0.02, (MAX_POS, WIDTH)).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.uniform(0.7, 1.3, WIDTH).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, WIDTH).astype("float32"))
        elif isinstance(layer, nn.Linear):
            fan_in = layer.weight.shape[0]
            layer.weight.set_value(rng.normal(0.0, 1.0 / np.sqrt(fan_in), layer.weight.shape).astype("float32"))
            if layer.bias is not None:
                layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_starcoder_mqa paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = StarCoderLM(ln_eps=1e-6 if bug == "paddle_ln_eps_1e6" else LN_EPS,
                    mask_query_axis=bug == "paddle_pad_mask_query_axis")
    _trained_look(m)
    m.eval()
    return m


def _batch():
    rng = np.random.default_rng(37)
    ids = rng.integers(1, VOCAB, (BATCH, SEQ)).astype("int64")
    mask = np.ones((BATCH, SEQ), dtype="int64")
    ids[1, :N_PAD] = 0
    mask[1, :N_PAD] = 0
    return ids, mask


def inputs():
    ids, mask = _batch()
    return (paddle.to_tensor(ids),), {"attention_mask": paddle.to_tensor(mask)}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
