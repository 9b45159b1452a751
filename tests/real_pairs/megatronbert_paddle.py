"""Megatron-BERT, paddlenlp side: tiny random config, no download. Twin: megatronbert_torch.py.

paddlenlp 2.8.1 quirks handled here:
- MegatronBertModel does NOT convert a 0/1 attention_mask: a 2-D mask is only unsqueezed to
  [B, 1, 1, S] and ADDED to the scores (keep +1, pad +0). So the paddle spec passes the additive
  mask (1 - mask) * -1e4 as [B, 1, 1, S] float32, built from the same numpy 0/1 array that the
  torch spec passes as is (HF converts it with finfo.min).
- `_init_weights` draws only the Linear/Embedding weights (biases stay 0, LayerNorms 1/0) and
  forces every LayerNorm eps to 1e-12; `_perturb_1d` redraws the 1-D tensors so that every
  tensor matters (they are copied to the torch side anyway).

PADIFF_BUG (this side only):
  paddle_ln_residual -> layer 1's MegatronBertAttention adds the attention output to the
                        LayerNorm'ed input (ln_outputs) instead of the raw hidden_states (a
                        pre-LN residual ported as post-LN; inline in the attention's forward)
  paddle_pos_offset  -> the embeddings look up absolute positions 1..S instead of 0..S-1
                        (RoBERTa's padding_idx + 1 position offset carried over into a BERT-style
                        model; inline in MegatronBertEmbeddings.forward)
"""
import os
import types

import numpy as np
import paddle
from paddlenlp.transformers import MegatronBertConfig, MegatronBertModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, layer_norm_eps=1e-12, pad_token_id=0,
    position_embedding_type="absolute",
)


def _perturb_1d(m):
    """Norm scales start at 1, biases at 0: redraw 1-D tensors so that every tensor matters."""
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 1.0 if "layer_norm.weight" in name else 0.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def _attention_ln_residual(self, hidden_states, attention_mask=None):
    ln_outputs = self.layer_norm(hidden_states)
    self_outputs = self.self(ln_outputs, attention_mask)
    attention_output = self.output(self_outputs[0], ln_outputs)  # BUG: residual is the LN output
    return (attention_output,) + self_outputs[1:]


def _embeddings_pos_offset(self, input_ids=None, token_type_ids=None, position_ids=None, inputs_embeds=None,
                           past_key_values_length=0):
    input_shape = input_ids.shape if input_ids is not None else inputs_embeds.shape[:-1]
    seq_length = input_shape[1]
    if position_ids is None:
        # BUG: positions start at 1 (RoBERTa-style offset), not 0
        position_ids = self.position_ids[:, past_key_values_length + 1 : seq_length + past_key_values_length + 1]
    if token_type_ids is None:
        token_type_ids = paddle.zeros(input_shape, dtype="int64")
    if inputs_embeds is None:
        inputs_embeds = self.word_embeddings(input_ids)
    embeddings = inputs_embeds + self.token_type_embeddings(token_type_ids)
    if self.position_embedding_type == "absolute":
        embeddings += self.position_embeddings(position_ids)
    return self.dropout(embeddings)


def model():
    paddle.seed(0)
    m = MegatronBertModel(MegatronBertConfig(**CONFIG))
    _perturb_1d(m)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_ln_residual":
        att = m.encoder.layer[1].attention
        object.__setattr__(att, "forward", types.MethodType(_attention_ln_residual, att))
    elif os.environ.get("PADIFF_BUG", "") == "paddle_pos_offset":
        emb = m.embeddings
        object.__setattr__(emb, "forward", types.MethodType(_embeddings_pos_offset, emb))
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
    additive = ((1.0 - mask[:, None, None, :]) * -1e4).astype("float32")  # see module docstring
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types_),
        "attention_mask": paddle.to_tensor(additive),
    }


def loss(output):
    # paddlenlp returns a tuple (sequence_output, pooled_output)
    seq, pooled = output[0], output[1]
    # seq ends in a LayerNorm (encoder.layer_norm): take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()
