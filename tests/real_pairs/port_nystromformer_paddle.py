"""Hand-written port, paddle side: a tiny Nystromformer encoder (written by "person A", HF style).

Inputs: positional `input_ids` [2, 16] int64 (numpy rng seed 31, values in [0, 50)). Output: the
last hidden state [2, 16, 32].

Sizes: vocab 50, width 32, 4 heads of 8, FFN 64 (exact GELU), 2 post-LN layers (LayerNorm eps
1e-5), 4 landmarks (segments of 4 tokens), a depthwise residual conv of kernel 5 over the
sequence, learned positions with HF Nystromformer's offset (position ids = arange(L) + 2).

Nystrom attention, per head (q, k scaled by d ** -0.25 each):
  q_l, k_l = segment means of q, k over 4 contiguous segments of 4 tokens      [4, 8]
  kernel_1 = softmax(q k_l^T)  [16, 4]    kernel_2 = softmax(q_l k_l^T)  [4, 4]
  kernel_3 = softmax(q_l k^T)  [4, 16]
  context  = (kernel_1 @ pinv(kernel_2)) @ (kernel_3 @ v) + depthwise_conv(v)
pinv = iterative Moore-Penrose inverse: Z0 = K^T / max(column sums of K) (max over the whole
batch, HF's "original" init), then 6 Newton iterations
  Z <- 1/4 Z (13 I - K Z (15 I - K Z (7 I - K Z))).

Paddle idioms on this side (HF NystromformerModel layout):
- root `NystromformerModel`: `embeddings`, `encoder` (its `layer` LayerList is iterated).
- `NystromformerEmbeddings`: `word_embeddings`, `position_embeddings` (24 rows), `LayerNorm`,
  and a buffer `position_ids` = arange(24) + 2, sliced to the sequence length.
- `NystromformerLayer`: `attention` (`self` = NystromformerSelfAttention, `output` = dense +
  LayerNorm on dense(ctx) + h), `intermediate` (dense, F.gelu inline), `output` (dense +
  LayerNorm).
- `NystromformerSelfAttention`: separate `query`, `key`, `value` Linears ([in, out] weights) and
  `conv` = nn.Conv2D(4, 4, (5, 1), padding=(2, 0), groups=4, bias_attr=False) on the values laid
  out [B, H, L, d]; segment means by reshape + mean; the pseudo-inverse is a method
  (`iterative_inv`) called inline.
- model() gives the LayerNorms trained-looking weights / biases (seeded), so none is an identity.

The torch side (port_nystromformer_torch.py) was written independently (lucidrains style): one
fused `to_qkv`, the depthwise conv on [B, H, d, L] with a (1, 5) kernel, its own blocks.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_landmarks_strided -> landmarks are the means of strided token groups (tokens i, i+4,
                              i+8, i+12) instead of contiguous segments: reshape [B, H, 4, 4, d]
                              and mean over axis 2 instead of axis 3
  paddle_pinv_init_per_head -> the pseudo-inverse init divides by the max column sum of EACH
                              (batch, head) matrix instead of the max over the whole batch
                              (HF's non-"original" init option), so the 6 Newton iterations start
                              elsewhere and stop at a slightly different approximation
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, HEADS, FFN, LAYERS = 50, 32, 4, 64, 2
MAX_POS, NUM_LANDMARKS, CONV_KERNEL, PINV_ITERS = 24, 4, 5, 6
LN_EPS = 1e-5
BATCH, SEQ = 2, 16
OWN_BUGS = {"paddle_landmarks_strided", "paddle_pinv_init_per_head"}
OTHER_BUGS = {"torch_pos_no_offset", "torch_ff_gelu_tanh"}


class NystromformerEmbeddings(nn.Layer):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, HIDDEN)
        self.position_embeddings = nn.Embedding(MAX_POS, HIDDEN)
        self.LayerNorm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.register_buffer("position_ids", paddle.arange(MAX_POS, dtype="int64").unsqueeze(0) + 2)

    def forward(self, input_ids):
        seq_len = input_ids.shape[1]
        pos = self.position_ids[:, :seq_len]
        emb = self.word_embeddings(input_ids) + self.position_embeddings(pos)
        return self.LayerNorm(emb)


class NystromformerSelfAttention(nn.Layer):
    def __init__(self, strided=False, init_per_head=False):
        super().__init__()
        self.num_heads = HEADS
        self.head_dim = HIDDEN // HEADS
        self.num_landmarks = NUM_LANDMARKS
        self.strided = strided
        self.init_per_head = init_per_head
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key = nn.Linear(HIDDEN, HIDDEN)
        self.value = nn.Linear(HIDDEN, HIDDEN)
        self.conv = nn.Conv2D(HEADS, HEADS, (CONV_KERNEL, 1), padding=(CONV_KERNEL // 2, 0), groups=HEADS,
                              bias_attr=False)

    def _heads(self, x):
        b, seqlen = x.shape[0], x.shape[1]
        return x.reshape([b, seqlen, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])

    def _landmarks(self, x):
        b, h, seqlen, d = x.shape
        seg = seqlen // self.num_landmarks
        if self.strided:
            return x.reshape([b, h, seg, self.num_landmarks, d]).mean(axis=2)
        return x.reshape([b, h, self.num_landmarks, seg, d]).mean(axis=3)

    def iterative_inv(self, mat, n_iter=PINV_ITERS):
        identity = paddle.eye(mat.shape[-1], dtype=mat.dtype)
        key = mat
        if self.init_per_head:
            colmax = paddle.max(paddle.sum(key, axis=-2), axis=-1)[:, :, None, None]
            value = 1.0 / colmax * key.transpose([0, 1, 3, 2])
        else:
            value = 1.0 / paddle.max(paddle.sum(key, axis=-2)) * key.transpose([0, 1, 3, 2])
        for _ in range(n_iter):
            key_value = paddle.matmul(key, value)
            value = paddle.matmul(
                0.25 * value,
                13 * identity - paddle.matmul(key_value, 15 * identity - paddle.matmul(key_value, 7 * identity - key_value)),
            )
        return value

    def forward(self, hidden_states):
        q = self._heads(self.query(hidden_states))
        k = self._heads(self.key(hidden_states))
        v = self._heads(self.value(hidden_states))
        q = q / math.sqrt(math.sqrt(self.head_dim))
        k = k / math.sqrt(math.sqrt(self.head_dim))
        q_l = self._landmarks(q)
        k_l = self._landmarks(k)
        kernel_1 = F.softmax(paddle.matmul(q, k_l, transpose_y=True), axis=-1)
        kernel_2 = F.softmax(paddle.matmul(q_l, k_l, transpose_y=True), axis=-1)
        kernel_3 = F.softmax(paddle.matmul(q_l, k, transpose_y=True), axis=-1)
        probs = paddle.matmul(kernel_1, self.iterative_inv(kernel_2))
        new_value = paddle.matmul(kernel_3, v)
        ctx = paddle.matmul(probs, new_value)
        ctx = ctx + self.conv(v)
        b, h, seqlen, d = ctx.shape
        return ctx.transpose([0, 2, 1, 3]).reshape([b, seqlen, h * d])


class NystromformerSelfOutput(nn.Layer):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(HIDDEN, HIDDEN)
        self.LayerNorm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)

    def forward(self, ctx, input_tensor):
        return self.LayerNorm(self.dense(ctx) + input_tensor)


class NystromformerAttention(nn.Layer):
    def __init__(self, **kw):
        super().__init__()
        self.self = NystromformerSelfAttention(**kw)
        self.output = NystromformerSelfOutput()

    def forward(self, hidden_states):
        return self.output(self.self(hidden_states), hidden_states)


class NystromformerIntermediate(nn.Layer):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(HIDDEN, FFN)

    def forward(self, x):
        return F.gelu(self.dense(x))


class NystromformerOutput(nn.Layer):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(FFN, HIDDEN)
        self.LayerNorm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)

    def forward(self, x, input_tensor):
        return self.LayerNorm(self.dense(x) + input_tensor)


class NystromformerLayer(nn.Layer):
    def __init__(self, **kw):
        super().__init__()
        self.attention = NystromformerAttention(**kw)
        self.intermediate = NystromformerIntermediate()
        self.output = NystromformerOutput()

    def forward(self, hidden_states):
        attn = self.attention(hidden_states)
        return self.output(self.intermediate(attn), attn)


class NystromformerEncoder(nn.Layer):
    def __init__(self, **kw):
        super().__init__()
        self.layer = nn.LayerList([NystromformerLayer(**kw) for _ in range(LAYERS)])

    def forward(self, hidden_states):
        for layer in self.layer:
            hidden_states = layer(hidden_states)
        return hidden_states


class NystromformerModel(nn.Layer):
    def __init__(self, **kw):
        super().__init__()
        self.embeddings = NystromformerEmbeddings()
        self.encoder = NystromformerEncoder(**kw)

    def forward(self, input_ids):
        return self.encoder(self.embeddings(input_ids))


def _trained_look(m):
    rng = np.random.default_rng(37)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.uniform(0.7, 1.3, HIDDEN).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, HIDDEN).astype("float32"))
        if isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))
        if isinstance(layer, nn.Embedding):
            layer.weight.set_value(rng.normal(0.0, 0.5, layer.weight.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nystromformer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = NystromformerModel(strided=bug == "paddle_landmarks_strided",
                           init_per_head=bug == "paddle_pinv_init_per_head")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(31)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # last hidden state [2, 16, 32]
    return (output**2).mean()
