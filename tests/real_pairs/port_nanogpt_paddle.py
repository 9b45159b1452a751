"""Hand-written port, paddle side: a tiny GPT-2-like decoder LM (written by "person A").

Token + learned position embedding, 2 pre-LN blocks (LayerNorm -> causal self-attention ->
residual, LayerNorm -> MLP -> residual), a final LayerNorm and an lm_head. Sizes: vocab 64,
context 16, width 32, 4 heads of 8, MLP 128 with erf-GELU, dropout none, eval mode.

Written paddle's way: separate `query` / `key` / `value` Linear layers (paddle Linear weights
are [in, out]) and an output `proj`; attention written out by hand (matmul, a causal mask taken
from a registered non-persistable buffer `causal_mask` [1, 1, 16, 16] of ones below the
diagonal, paddle.where with -inf, softmax, matmul); the MLP an nn.Sequential(Linear, GELU,
Linear). The lm_head is its own (untied) Linear(32, 64, no bias) whose weight is initialised
from the transposed token embedding, so at step 0 it is the same math as a tied head.

The torch side (port_nanogpt_torch.py) was written independently, by hand.

PADIFF_BUG=paddle_causal_off_by_one plants this side's bug: every attention's causal mask
buffer is built with paddle.tril(..., diagonal=1), so position i also attends to i + 1.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, BLOCK, WIDTH, HEADS, LAYERS = 64, 16, 32, 4, 2
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_causal_off_by_one"}
OTHER_BUGS = {"gelu_tanh", "head_view"}


class CausalSelfAttention(nn.Layer):
    def __init__(self, width, heads, block, mask_diagonal=0):
        super().__init__()
        self.heads, self.head_dim = heads, width // heads
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)
        self.value = nn.Linear(width, width)
        self.proj = nn.Linear(width, width)
        mask = paddle.tril(paddle.ones([block, block], dtype="float32"), diagonal=mask_diagonal)
        self.register_buffer("causal_mask", mask.reshape([1, 1, block, block]), persistable=False)

    def _heads(self, x):  # [B, T, C] -> [B, h, T, dh]
        b, t, _ = x.shape
        return x.reshape([b, t, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self._heads(self.query(x)), self._heads(self.key(x)), self._heads(self.value(x))
        scores = paddle.matmul(q, k, transpose_y=True) * (1.0 / self.head_dim**0.5)
        keep = self.causal_mask[:, :, :t, :t] > 0
        scores = paddle.where(keep, scores, paddle.full_like(scores, float("-inf")))
        probs = F.softmax(scores, axis=-1)
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, t, c])
        return self.proj(ctx)


class Block(nn.Layer):
    def __init__(self, mask_diagonal=0):
        super().__init__()
        self.norm1 = nn.LayerNorm(WIDTH)
        self.attn = CausalSelfAttention(WIDTH, HEADS, BLOCK, mask_diagonal)
        self.norm2 = nn.LayerNorm(WIDTH)
        self.ffn = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class GPTLanguageModel(nn.Layer):
    def __init__(self, mask_diagonal=0):
        super().__init__()
        self.pos_emb = nn.Embedding(BLOCK, WIDTH)
        self.tok_emb = nn.Embedding(VOCAB, WIDTH)
        self.blocks = nn.LayerList([Block(mask_diagonal) for _ in range(LAYERS)])
        self.norm_f = nn.LayerNorm(WIDTH)
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias_attr=False)
        with paddle.no_grad():  # start the untied head from the embedding
            self.lm_head.weight.set_value(self.tok_emb.weight.T)

    def forward(self, input_ids):
        t = input_ids.shape[1]
        pos = paddle.arange(t, dtype="int64")
        x = self.tok_emb(input_ids) + self.pos_emb(pos).unsqueeze(0)
        for blk in self.blocks:
            x = blk(x)
        return self.lm_head(self.norm_f(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nanogpt paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = GPTLanguageModel(mask_diagonal=1 if bug == "paddle_causal_off_by_one" else 0)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(11)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [B, T, VOCAB] (through lm_head, not a LayerNorm output itself)
    return (output**2).mean()
