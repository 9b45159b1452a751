"""Hand-written port, paddle side: a tiny FNet encoder (written by "person A").

Sizes: vocab 64, hidden 32, intermediate 64, 2 layers, max positions 32, 2 token types,
sequence length 12, batch 2. LayerNorm eps 1e-12 everywhere (the FNet config value), the FFN
activation is FNet's "gelu_new" (tanh approximation).

- `embeddings` (FNetEmbeddings): word + position + token-type lookups (position ids
  arange(L), built inline), then `layer_norm`, then `projection` Linear(32, 32) (FNet's
  embedding -> hidden projection). Registered word, token_type, position, layer_norm,
  projection.
- `encoder` = LayerList of FNetLayer, post-LayerNorm:
    mixed = Re(FFT2(x)) over (sequence, hidden) = `fourier` (a parameter-free FourierTransform
            layer calling paddle.fft.fft2 on axes (-2, -1), then paddle.real),
    x = mixing_norm(x + mixed),
    x = output_norm(x + output_dense(gelu_tanh(intermediate(x)))).
- `pooler` (FNetPooler): `dense` on the first token, paddle.tanh inline.
forward(input_ids, token_type_ids) returns (sequence_output [2, 12, 32], pooled [2, 32]).

The torch side (port_fnet_torch.py) was written independently: two 1-D torch.fft.fft calls
(hidden first, then sequence) inline in the block, a `position_ids` buffer sliced to L,
nn.Sequential FFN and pooler.

PADIFF_BUG names for this side:
  paddle_embed_ln_eps -> the EMBEDDING LayerNorm is built without epsilon=, i.e. paddle's
                         default epsilon 1e-5 instead of 1e-12 (precision-level: the embedding sum
                         has variance ~1.2e-3, so 1e-5 moves it by ~0.4%)
The torch side's bug names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, INTER, LAYERS, MAX_POS, TYPES = 64, 32, 64, 2, 32, 2
LN_EPS = 1e-12
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_embed_ln_eps"}
OTHER_BUGS = {"torch_fft_batch_axis", "torch_position_offset"}


def _normal(std=0.02, mean=0.0):
    return paddle.ParamAttr(initializer=nn.initializer.Normal(mean, std))


def _layer_norm(eps=LN_EPS):
    return nn.LayerNorm(HIDDEN, epsilon=eps, weight_attr=_normal(0.1, 1.0), bias_attr=_normal(0.1))


class FNetEmbeddings(nn.Layer):
    def __init__(self, default_eps=False):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, HIDDEN, weight_attr=_normal())
        self.token_type_embeddings = nn.Embedding(TYPES, HIDDEN, weight_attr=_normal())
        self.position_embeddings = nn.Embedding(MAX_POS, HIDDEN, weight_attr=_normal())
        if default_eps:  # epsilon= forgotten: paddle's default 1e-5
            self.layer_norm = nn.LayerNorm(HIDDEN, weight_attr=_normal(0.1, 1.0), bias_attr=_normal(0.1))
        else:
            self.layer_norm = _layer_norm()
        self.projection = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, input_ids, token_type_ids=None):
        seq_len = input_ids.shape[1]
        position_ids = paddle.arange(seq_len, dtype="int64").unsqueeze(0)
        if token_type_ids is None:
            token_type_ids = paddle.zeros_like(input_ids)
        emb = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        emb = emb + self.position_embeddings(position_ids)
        return self.projection(self.layer_norm(emb))


class FourierTransform(nn.Layer):
    def forward(self, hidden_states):
        return paddle.real(paddle.fft.fft2(hidden_states, axes=(-2, -1)))


class FNetLayer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fourier = FourierTransform()
        self.mixing_norm = _layer_norm()
        self.intermediate = nn.Linear(HIDDEN, INTER)
        self.output_dense = nn.Linear(INTER, HIDDEN)
        self.output_norm = _layer_norm()

    def forward(self, hidden_states):
        mixed = self.mixing_norm(hidden_states + self.fourier(hidden_states))
        ffn = self.output_dense(F.gelu(self.intermediate(mixed), approximate=True))
        return self.output_norm(mixed + ffn)


class FNetPooler(nn.Layer):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, hidden_states):
        return paddle.tanh(self.dense(hidden_states[:, 0]))


class FNetModel(nn.Layer):
    def __init__(self, default_eps=False):
        super().__init__()
        self.embeddings = FNetEmbeddings(default_eps)
        self.encoder = nn.LayerList([FNetLayer() for _ in range(LAYERS)])
        self.pooler = FNetPooler()

    def forward(self, input_ids, token_type_ids=None):
        h = self.embeddings(input_ids, token_type_ids)
        for layer in self.encoder:
            h = layer(h)
        return h, self.pooler(h)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_fnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = FNetModel(default_eps=bug == "paddle_embed_ln_eps")
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(5)
    ids = rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")
    types = np.zeros((BATCH, SEQ), dtype="int64")
    types[0, 7:] = 1
    types[1, 5:] = 1
    return ids, types


def inputs():
    ids, types = _ids()
    return (paddle.to_tensor(ids),), {"token_type_ids": paddle.to_tensor(types)}


def loss(output):
    # (sequence_output [2, 12, 32], pooled [2, 32])
    seq, pooled = output
    return (seq**2).mean() + (pooled**2).mean()
