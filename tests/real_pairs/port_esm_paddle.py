"""Hand-written port, paddle side: a tiny ESM-2-style protein language model (written by "person A").

Sizes: ESM alphabet of 33 tokens (<cls>=0, <pad>=1, <eos>=2, <unk>=3, amino acids 4..23, <mask>=32),
width 32, 4 heads of 8, FFN 64, 2 layers, batch 2, sequence length 14 (row 1 ends in two <pad>).
Input: positional `tokens` int64 [2, 14] (numpy rng seed 52) with 2 / 3 <mask> tokens per row.
Output: masked-LM logits [2, 14, 33].

Math (fair-esm ESM2, eval):
- token dropout at eval: x = embed(tokens); rows of <mask> tokens are zeroed; then
  x *= (1 - 0.15 * 0.8) / (1 - n_mask / n_nonpad) per sequence; pad rows are zeroed
  (x *= 1 - padding_mask);
- 2 pre-LayerNorm transformer layers (LayerNorm eps 1e-5):
    x = x + out_proj(attn(self_attn_layer_norm(x)))
    x = x + fc2(gelu(fc1(final_layer_norm(x))))          (exact erf GELU)
  attention: q = q_proj(x) * 8^-0.5 (scaled BEFORE the rotary), k = k_proj(x), v = v_proj(x),
  rotary embedding (base 10000) on q and k in the ROTATE-HALF convention
  (x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x2, x1), pairs (i, i + 4) of each head),
  key padding mask (-inf on <pad> keys), softmax;
- final LayerNorm `emb_layer_norm_after`;
- LM head (RobertaLMHead): dense 32 -> 32, gelu, layer_norm, then x @ embed_tokens.weight^T + bias
  (the head weight is TIED to the token embedding; the bias [33] is the head's own).

Paddle idioms on this side (fair-esm names):
- root `ESM2`: `embed_tokens` nn.Embedding(33, 32), `token_dropout` (a `TokenDropout` layer
  called with (x, tokens)), `layers` LayerList of `TransformerLayer`, `emb_layer_norm_after`,
  `lm_head` (`RobertaLMHead`, holding the embedding's Parameter as its `weight` attribute, plus
  `bias` created with create_parameter). named_parameters lists the tied tensor once, as
  `embed_tokens.weight`.
- `TransformerLayer`: `self_attn`, `self_attn_layer_norm`, `fc1`, `fc2`, `final_layer_norm`;
  F.gelu inline.
- `MultiheadAttention`: separate `k_proj`, `v_proj`, `q_proj` (registered in that order, like
  fair-esm), `out_proj`, and `rot_emb` (`RotaryEmbedding`, non-persistable buffer `inv_freq` [4],
  called with (q, k) in [B*H, L, D] layout, returns the rotated pair). Manual matmul / softmax.

The torch side (port_esm_torch.py) was written independently: one fused qkv Linear whose q / k
rows use the INTERLEAVED rotary pairing (2i, 2i + 1), a model-level rotary table module, token
dropout inside an embeddings module, an nn.Sequential MLP and SDPA.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rotate_half_sign -> rotate_half returns cat(x2, -x1) instead of cat(-x2, x1) (rotation
                             by -theta: the relative position enters with the wrong sign)
  paddle_head_gelu_tanh   -> the LM head's activation is F.gelu(approximate=True) (tanh GELU)
                             instead of the exact erf GELU (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

ALPHABET = 33
CLS_IDX, PAD_IDX, EOS_IDX, MASK_IDX = 0, 1, 2, 32
EMBED_DIM, ATTN_HEADS, FFN_DIM, NUM_LAYERS = 32, 4, 64, 2
MASK_RATIO_TRAIN = 0.15 * 0.8
BATCH, SEQ = 2, 14
OWN_BUGS = {"paddle_rotate_half_sign", "paddle_head_gelu_tanh"}
OTHER_BUGS = {"torch_batch_mask_ratio", "torch_rope_freq_halfdim"}


def rotate_half(x, flipped=False):
    x1, x2 = x.chunk(2, axis=-1)
    if flipped:
        return paddle.concat([x2, -x1], axis=-1)
    return paddle.concat([-x2, x1], axis=-1)


class RotaryEmbedding(nn.Layer):
    def __init__(self, dim, flipped=False):
        super().__init__()
        self.flipped = flipped
        inv_freq = 1.0 / (10000 ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
        self.register_buffer("inv_freq", inv_freq, persistable=False)

    def _cos_sin(self, seq_len):
        t = paddle.arange(seq_len, dtype="float32")
        freqs = paddle.outer(t, self.inv_freq)
        emb = paddle.concat([freqs, freqs], axis=-1)  # [L, D]
        return emb.cos().unsqueeze(0), emb.sin().unsqueeze(0)

    def forward(self, q, k):
        cos, sin = self._cos_sin(k.shape[-2])
        q = q * cos + rotate_half(q, self.flipped) * sin
        k = k * cos + rotate_half(k, self.flipped) * sin
        return q, k


class MultiheadAttention(nn.Layer):
    def __init__(self, embed_dim, num_heads, flipped=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim**-0.5
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.rot_emb = RotaryEmbedding(self.head_dim, flipped)

    def _heads(self, x):
        b, n, _ = x.shape
        return x.reshape([b, n, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3]).reshape(
            [b * self.num_heads, n, self.head_dim])

    def forward(self, x, key_padding_mask):
        b, n, c = x.shape
        q = self.q_proj(x) * self.scaling
        k = self.k_proj(x)
        v = self.v_proj(x)
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        q, k = self.rot_emb(q, k)
        w = paddle.bmm(q, k.transpose([0, 2, 1])).reshape([b, self.num_heads, n, n])
        w = paddle.where(key_padding_mask[:, None, None, :], paddle.full_like(w, float("-inf")), w)
        p = F.softmax(w, axis=-1).reshape([b * self.num_heads, n, n])
        o = paddle.bmm(p, v).reshape([b, self.num_heads, n, self.head_dim]).transpose([0, 2, 1, 3])
        return self.out_proj(o.reshape([b, n, c]))


class TransformerLayer(nn.Layer):
    def __init__(self, flipped=False):
        super().__init__()
        self.self_attn = MultiheadAttention(EMBED_DIM, ATTN_HEADS, flipped)
        self.self_attn_layer_norm = nn.LayerNorm(EMBED_DIM)
        self.fc1 = nn.Linear(EMBED_DIM, FFN_DIM)
        self.fc2 = nn.Linear(FFN_DIM, EMBED_DIM)
        self.final_layer_norm = nn.LayerNorm(EMBED_DIM)

    def forward(self, x, key_padding_mask):
        x = x + self.self_attn(self.self_attn_layer_norm(x), key_padding_mask)
        x = x + self.fc2(F.gelu(self.fc1(self.final_layer_norm(x))))
        return x


class TokenDropout(nn.Layer):
    """ESM token dropout at eval: zero <mask> rows, rescale by the train / observed mask ratio."""

    def forward(self, x, tokens):
        is_mask = (tokens == MASK_IDX).astype(x.dtype)
        not_pad = (tokens != PAD_IDX).astype(x.dtype)
        x = x * (1.0 - is_mask.unsqueeze(-1))
        observed = is_mask.sum(-1) / not_pad.sum(-1)
        x = x * (1.0 - MASK_RATIO_TRAIN) / (1.0 - observed)[:, None, None]
        return x * not_pad.unsqueeze(-1)


class RobertaLMHead(nn.Layer):
    def __init__(self, embed_dim, output_dim, weight, tanh_gelu=False):
        super().__init__()
        self.tanh_gelu = tanh_gelu
        self.dense = nn.Linear(embed_dim, embed_dim)
        self.layer_norm = nn.LayerNorm(embed_dim)
        self.weight = weight
        self.bias = self.create_parameter([output_dim], is_bias=True)

    def forward(self, features):
        x = self.dense(features)
        x = F.gelu(x, approximate=self.tanh_gelu)
        x = self.layer_norm(x)
        return paddle.matmul(x, self.weight, transpose_y=True) + self.bias


class ESM2(nn.Layer):
    def __init__(self, flipped=False, tanh_gelu=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(ALPHABET, EMBED_DIM, padding_idx=PAD_IDX)
        self.token_dropout = TokenDropout()
        self.layers = nn.LayerList([TransformerLayer(flipped) for _ in range(NUM_LAYERS)])
        self.emb_layer_norm_after = nn.LayerNorm(EMBED_DIM)
        self.lm_head = RobertaLMHead(EMBED_DIM, ALPHABET, self.embed_tokens.weight, tanh_gelu)

    def forward(self, tokens):
        padding_mask = tokens == PAD_IDX
        x = self.embed_tokens(tokens)
        x = self.token_dropout(x, tokens)
        for layer in self.layers:
            x = layer(x, padding_mask)
        x = self.emb_layer_norm_after(x)
        return self.lm_head(x)


def _trained_look(m):
    rng = np.random.default_rng(147)
    emb = rng.normal(0.0, 0.5, (ALPHABET, EMBED_DIM)).astype("float32")
    emb[PAD_IDX] = 0.0
    m.embed_tokens.weight.set_value(emb)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value((1.0 + rng.normal(0.0, 0.15, EMBED_DIM)).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, EMBED_DIM).astype("float32"))
        elif isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
    m.lm_head.bias.set_value(rng.normal(0.0, 0.2, ALPHABET).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_esm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ESM2(flipped=bug == "paddle_rotate_half_sign", tanh_gelu=bug == "paddle_head_gelu_tanh")
    _trained_look(m)
    m.eval()
    return m


def _tokens():
    rng = np.random.default_rng(52)
    toks = rng.integers(4, 24, (BATCH, SEQ)).astype("int64")
    toks[:, 0] = CLS_IDX
    toks[0, SEQ - 1] = EOS_IDX
    toks[1, SEQ - 3] = EOS_IDX
    toks[1, SEQ - 2:] = PAD_IDX
    toks[0, [3, 9]] = MASK_IDX
    toks[1, [2, 5, 7]] = MASK_IDX
    return toks


def inputs():
    return (paddle.to_tensor(_tokens()),), {}


def loss(output):
    # masked-LM logits [2, 14, 33]
    return (output**2).mean()
