"""Hand-written port, paddle side: a tiny GPT decoder run as greedy generation WITH a key/value cache (written by "person A").

Sizes: vocab 48, width 32, 4 heads of 8, MLP hidden 128 (GELU, tanh approximation), 2 pre-norm
layers, learned absolute positions (16), LayerNorm eps 1e-5, batch 2. The LM head is TIED to the
token embedding and is an inline matmul in the root forward (no head module).

Input: positional `input_ids` [2, 6] int64 (the prompt, numpy rng seed 11). The forward runs
greedy generation of 4 new tokens INSIDE the model: pass 0 feeds the whole prompt (prefill) and
fills the cache; passes 1..3 feed ONLY the token chosen by the previous pass (argmax of its
logits), at position 6, 7, 8, with the cached keys / values of all earlier positions. The output
is the next-token logits of the 4 passes, stacked: [2, 4, 48] (row t = logits that choose new
token t + 1).

Paddle idioms on this side (PaddleNLP GPT style):
- root `GPTGreedyGenerator`: `gpt` (GPTModel), called once per pass with (ids, caches) and
  returning (hidden, new caches); the tied head `matmul(h[:, -1], word_embeddings.weight,
  transpose_y=True)` and paddle.argmax are inline in the root's generation loop.
- `GPTModel`: `embeddings` (GPTEmbeddings: `word_embeddings`, `position_embeddings`, called with
  (input_ids, position_ids)), `decoder_layers` (LayerList of DecoderLayer, iterated),
  `final_norm`. It reads the cached length from the first layer's key cache ([B, heads, T, 8])
  and builds position_ids = arange(past_length, past_length + L) inline.
- `DecoderLayer` registers `self_attn`, `linear1`, `linear2`, `norm1`, `norm2` (PaddleNLP
  TransformerDecoderLayer order; the norms are called first); the MLP is linear1 -> F.gelu(
  approximate=True) -> linear2 inline in the layer's forward (no MLP module).
- `CachedSelfAttention`: separate `q_proj`, `k_proj`, `v_proj`, `out_proj` Linears; concatenates
  the cache on axis 2; an ADDITIVE mask -1e4 * triu(ones([Lq, Lk]), 1 + Lk - Lq) (bottom-right
  aligned, so the prefill is causal and a single new query sees every cached key); returns
  (output, (k, v)).
- model() gives the LayerNorms trained-looking weights / biases, the embeddings N(0, 0.5), the
  Linear biases N(0, 0.05) and the v / out / MLP Linear weights 4x their Xavier init (seeded),
  so that the generated tokens vary and the top-2 logit gaps are comfortable (>= 0.5) at every
  step.

The torch side (port_kvdecode_torch.py) was written independently (nanoGPT style) and has NO
cache: every pass recomputes the whole sequence (prompt + generated tokens so far), so its
module calls see sequence lengths 6, 7, 8, 9.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_past_len_heads_axis -> GPTModel reads the cached length as caches[0][0].shape[1] (the
                                heads axis, 4) instead of shape[2] (the time axis), so the new
                                token of passes 1..3 gets position 4 instead of 6, 7, 8 (only
                                shows from the 2nd generated step)
  paddle_cache_mask_topleft  -> the attention mask is triu(ones([Lq, Lk]), 1), aligned top-left:
                                right for the prefill (Lq = Lk), but a single cached query then
                                sees ONLY key 0 (only shows from the 2nd generated step)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, N_EMBD, N_HEAD, HEAD_DIM, FFN, N_LAYER, MAX_POS = 48, 32, 4, 8, 128, 2, 16
BATCH, PROMPT, NEW_TOKENS = 2, 6, 4
OWN_BUGS = {"paddle_past_len_heads_axis", "paddle_cache_mask_topleft"}
OTHER_BUGS = {"torch_gelu_exact", "torch_attn_scale_embd"}


class CachedSelfAttention(nn.Layer):
    def __init__(self, embed_dim, num_heads, mask_topleft=False):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, embed_dim // num_heads
        self.mask_topleft = mask_topleft
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape([b, n, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x, cache=None):
        b, lq, c = x.shape
        q, k, v = self._split(self.q_proj(x)), self._split(self.k_proj(x)), self._split(self.v_proj(x))
        if cache is not None:
            k = paddle.concat([cache[0], k], axis=2)
            v = paddle.concat([cache[1], v], axis=2)
        lk = k.shape[2]
        scores = paddle.matmul(q, k, transpose_y=True) * (self.head_dim**-0.5)
        diagonal = 1 if self.mask_topleft else 1 + lk - lq
        mask = paddle.triu(paddle.ones([lq, lk], dtype=scores.dtype), diagonal=diagonal)
        probs = F.softmax(scores - 1e4 * mask, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, lq, c])
        return self.out_proj(out), (k, v)


class DecoderLayer(nn.Layer):
    def __init__(self, mask_topleft=False):
        super().__init__()
        self.self_attn = CachedSelfAttention(N_EMBD, N_HEAD, mask_topleft)
        self.linear1 = nn.Linear(N_EMBD, FFN)
        self.linear2 = nn.Linear(FFN, N_EMBD)
        self.norm1 = nn.LayerNorm(N_EMBD, epsilon=1e-5)
        self.norm2 = nn.LayerNorm(N_EMBD, epsilon=1e-5)

    def forward(self, x, cache=None):
        residual = x
        h, new_cache = self.self_attn(self.norm1(x), cache)
        x = residual + h
        residual = x
        h = self.linear2(F.gelu(self.linear1(self.norm2(x)), approximate=True))
        return residual + h, new_cache


class GPTEmbeddings(nn.Layer):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, N_EMBD)
        self.position_embeddings = nn.Embedding(MAX_POS, N_EMBD)

    def forward(self, input_ids, position_ids):
        return self.word_embeddings(input_ids) + self.position_embeddings(position_ids)


class GPTModel(nn.Layer):
    def __init__(self, past_len_heads_axis=False, mask_topleft=False):
        super().__init__()
        self.past_len_heads_axis = past_len_heads_axis
        self.embeddings = GPTEmbeddings()
        self.decoder_layers = nn.LayerList([DecoderLayer(mask_topleft) for _ in range(N_LAYER)])
        self.final_norm = nn.LayerNorm(N_EMBD, epsilon=1e-5)

    def forward(self, input_ids, caches=None):
        b, length = input_ids.shape
        if caches is None:
            past_length = 0
        else:  # key cache [B, heads, T, head_dim]
            past_length = caches[0][0].shape[1] if self.past_len_heads_axis else caches[0][0].shape[2]
        position_ids = paddle.arange(past_length, past_length + length, dtype="int64").unsqueeze(0).expand([b, length])
        h = self.embeddings(input_ids, position_ids)
        new_caches = []
        for i, layer in enumerate(self.decoder_layers):
            h, c = layer(h, None if caches is None else caches[i])
            new_caches.append(c)
        return self.final_norm(h), new_caches


class GPTGreedyGenerator(nn.Layer):
    def __init__(self, past_len_heads_axis=False, mask_topleft=False):
        super().__init__()
        self.gpt = GPTModel(past_len_heads_axis, mask_topleft)

    def forward(self, input_ids):
        ids, caches, step_logits = input_ids, None, []
        for _ in range(NEW_TOKENS):
            h, caches = self.gpt(ids, caches)
            logits = paddle.matmul(h[:, -1, :], self.gpt.embeddings.word_embeddings.weight, transpose_y=True)
            step_logits.append(logits)
            ids = paddle.argmax(logits, axis=-1, keepdim=True)  # [B, 1]: only the new token is fed next
        return paddle.stack(step_logits, axis=1)  # [B, NEW_TOKENS, VOCAB]


def _trained_look(m):
    rng = np.random.default_rng(6)
    emb = m.gpt.embeddings
    emb.word_embeddings.weight.set_value(rng.normal(0.0, 0.5, (VOCAB, N_EMBD)).astype("float32"))
    emb.position_embeddings.weight.set_value(rng.normal(0.0, 0.5, (MAX_POS, N_EMBD)).astype("float32"))
    for name, layer in m.named_sublayers():
        if isinstance(layer, nn.Linear) and not name.endswith(("q_proj", "k_proj")):
            layer.weight.set_value(layer.weight.numpy() * 4.0)  # wider than the Xavier init (q / k keep it)
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.normal(1.0, 0.15, N_EMBD).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, N_EMBD).astype("float32"))
        elif isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_kvdecode paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = GPTGreedyGenerator(
        past_len_heads_axis=bug == "paddle_past_len_heads_axis",
        mask_topleft=bug == "paddle_cache_mask_topleft",
    )
    _trained_look(m)
    m.eval()
    return m


def _prompt():
    rng = np.random.default_rng(11)
    return rng.integers(0, VOCAB, (BATCH, PROMPT)).astype("int64")


def inputs():
    return (paddle.to_tensor(_prompt()),), {}


def loss(output):
    # stacked next-token logits [2, 4, 48]
    return (output**2).mean()
