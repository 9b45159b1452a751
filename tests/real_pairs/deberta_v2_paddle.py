"""DeBERTa-v2 (v3-style config), paddlenlp side: tiny random config, no download.
Twin: deberta_v2_torch.py.

Config: relative attention with log-bucketed positions (position_buckets 8, so relative
distances |d| >= 4 fall into log buckets), shared attention keys (share_att_key: the rel
embeddings go through query_proj / key_proj), LayerNorm'ed rel embeddings
(norm_rel_ebd "layer_norm"), no absolute position input (position_biased_input False),
pos_att_type p2c + c2p.

paddlenlp 2.8.1 quirks handled here:
- DebertaV2Config's `share_attn_key` argument is never read; DisentangledSelfAttention reads
  `share_att_key` (default False). Passed as share_att_key=True (an extra kwarg).
- paddlenlp's softmax_with_mask fills masked scores with -inf; a 2-D 0/1 mask is expanded to
  [B,1,S,S] and also masks the padded QUERY rows, which become all -inf: NaN for the padded
  sample (HF fills finfo.min: uniform rows, no NaN). Both specs pass a 4-D key-padding mask
  [B, 1, 1, S] (as the deberta v1 specs do).
- paddlenlp's DebertaV2PreTrainedModel defines its init hook as `init_weights(self, layer)`
  instead of `_init_weights`, so it never runs: the weights keep paddle's default init (Xavier
  uniform: Linear [32,32] std ~0.18, word embeddings std ~0.044; biases 0, LayerNorms 1/0) and
  the LayerNorm eps comes from the constructor (1e-7 as configured). The weights are copied to
  the torch side anyway; `_perturb_1d` redraws the 1-D tensors so that every tensor matters.
- output_hidden_states defaults to True in paddlenlp's DebertaV2Config (output: a tuple
  (sequence_output, all_hidden_states)); the spec sets it False: output (sequence_output,).

PADIFF_BUG (this side only):
  paddle_ln_bf16 -> the encoder's rel-embedding LayerNorm (encoder.LayerNorm, applied to
                    rel_embeddings.weight) runs as under a bfloat16 autocast: input, weight,
                    bias and output rounded to bfloat16, then cast back to float32
                    (precision-level)
"""
import os
import types

import numpy as np
import paddle
import paddle.nn.functional as F
from paddlenlp.transformers import DebertaV2Config, DebertaV2Model

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, layer_norm_eps=1e-7, pad_token_id=0, position_biased_input=False,
    relative_attention=True, max_relative_positions=-1, position_buckets=8,
    pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm", share_att_key=True,
    output_hidden_states=False,
)


def _perturb_1d(m):
    """Norm scales start at 1, biases at 0: redraw 1-D tensors so that every tensor matters."""
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 1.0 if name.endswith("LayerNorm.weight") else 0.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def _bf16(t):
    return t.astype("bfloat16").astype("float32")


def _layer_norm_bf16(self, x):
    """The LayerNorm as under a bfloat16 autocast: its input, weights and output rounded to
    bfloat16 (paddle has no CPU bf16 layer_norm kernel, so the normalization itself runs on the
    rounded values in float32), cast back to float32 for the attention."""
    y = F.layer_norm(_bf16(x), self._normalized_shape, _bf16(self.weight), _bf16(self.bias),
                     self._epsilon)
    return _bf16(y)  # BUG: bfloat16 round trip, no float32 LayerNorm


def model():
    paddle.seed(0)
    m = DebertaV2Model(DebertaV2Config(**CONFIG))
    _perturb_1d(m)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_ln_bf16":
        ln = m.encoder.LayerNorm
        object.__setattr__(ln, "forward", types.MethodType(_layer_norm_bf16, ln))
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types_ = np.zeros((2, 12), "int64")
    types_[:, 6:] = 1
    # key-padding mask [batch, 1, 1, seq]: second sample padded after 9 tokens (see docstring)
    mask = np.ones((2, 1, 1, 12), "int64")
    mask[1, ..., 9:] = 0
    return ids, types_, mask


def inputs():
    ids, types_, mask = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types_),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp returns a tuple (sequence_output,) (output_hidden_states False)
    h = output[0]
    # ends in a LayerNorm: take half of the features
    return (h[..., :16] ** 2).mean()
