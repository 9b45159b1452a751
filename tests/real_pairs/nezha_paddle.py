"""NeZha, paddlenlp side: tiny random config, no download. Twin: nezha_torch.py.

Notes:
- `use_relative_position` is not an argument of paddlenlp's NeZhaConfig.__init__ but
  NeZhaEmbeddings reads it: passed explicitly (True: no absolute position embeddings, as in HF).
- NeZhaModel converts the 0/1 attention_mask itself ((1 - m) * -1e4), so both sides get the same
  int64 0/1 mask.
- `_init_weights` draws only the Linear/Embedding weights (biases 0, LayerNorms 1/0) and forces
  every LayerNorm eps to 1e-12 (nn.LayerNorm's default would be 1e-5); `_perturb_1d` redraws the
  1-D tensors so that every tensor matters (they are copied to the torch side anyway).
- The relative-position table (sinusoids, [512, 512, head_dim]) is a plain tensor attribute of
  every NeZhaAttention, not a parameter/buffer; HF keeps it as a non-persistent buffer of a
  submodule (relative_positions_encoding).

PADIFF_BUG (this side only):
  paddle_no_value_rel -> layer 1's NeZhaAttention leaves out the relative-position VALUE term
                         (the context gets only probs @ V, not + probs @ relations_values):
                         NeZha's second relative term dropped when porting from a BERT template
  paddle_act_silu     -> layer 0's feed-forward activation (NeZhaLayer.activation) is SiLU/swish
                         instead of the exact GELU of hidden_act="gelu" (activation mapped wrongly
                         in one layer)
"""
import math
import os
import types

import numpy as np
import paddle
from paddlenlp.transformers import NeZhaConfig, NeZhaModel

CONFIG = dict(
    vocab_size=1000, embedding_size=32, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, max_relative_position=64,
    type_vocab_size=2, initializer_range=0.1, layer_norm_eps=1e-12, pad_token_id=0,
    use_relative_position=True,
)


def _perturb_1d(m):
    """Norm scales start at 1, biases at 0: redraw 1-D tensors so that every tensor matters."""
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 1.0 if "layer_norm.weight" in name else 0.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def _attention_no_value_rel(self, hidden_states, attention_mask):
    q = self.transpose_for_scores(self.query(hidden_states))
    k = self.transpose_for_scores(self.key(hidden_states))
    v = self.transpose_for_scores(self.value(hidden_states))
    scores = paddle.matmul(q, k.transpose((0, 1, 3, 2)))
    b, h, s, t = scores.shape
    rel_k = self.relative_positions_embeddings.detach().clone()[:t, :t, :]
    q_r = q.transpose((2, 0, 1, 3)).reshape((s, b * h, self.attention_head_size))
    kp = paddle.matmul(q_r, rel_k.transpose((0, 2, 1))).reshape((s, b, h, s)).transpose((1, 2, 0, 3))
    scores = (scores + kp) / math.sqrt(self.attention_head_size) + attention_mask
    probs = self.attention_dropout(paddle.nn.Softmax(axis=-1)(scores))
    ctx = paddle.matmul(probs, v)  # BUG: + probs @ relations_values left out
    ctx = ctx.transpose((0, 2, 1, 3))
    ctx = ctx.reshape(ctx.shape[:-2] + [self.all_head_size])
    out = self.output_dropout(self.dense(ctx))
    return self.layer_norm(hidden_states + out), scores


def model():
    paddle.seed(0)
    m = NeZhaModel(NeZhaConfig(**CONFIG))
    _perturb_1d(m)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_no_value_rel":
        att = m.encoder.layer[1].attention
        object.__setattr__(att, "forward", types.MethodType(_attention_no_value_rel, att))
    elif os.environ.get("PADIFF_BUG", "") == "paddle_act_silu":
        m.encoder.layer[0].activation = paddle.nn.Silu()
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types_ = np.zeros((2, 12), "int64")
    types_[:, 6:] = 1
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, types_, mask


def inputs():
    ids, types_, mask = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types_),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp returns a tuple (sequence_output, pooled_output)
    seq, pooled = output[0], output[1]
    # seq ends in a LayerNorm: take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()
