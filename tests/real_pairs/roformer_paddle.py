"""RoFormer masked LM, paddlenlp side: tiny random config, no download. Twin: roformer_torch.py.

paddlenlp RoFormer = paddle.nn.TransformerEncoder with a MultiHeadAttentionWithRotary (its own
`rotary` sublayer with sin/cos buffers in every layer, interleaved pairs x[0::2], x[1::2]).
paddlenlp's RoFormerModel always has a pooler; HF RoFormer has none. The pooler's output is not
part of the MLM output: its parameters are frozen here and listed as paddle-only ("derived").
PADIFF_BUG (this side only):
  paddle_rope_halves -> layer 1's rotary rotates the two HALVES of each head (GPT-NeoX /
                        LLaMA rotate_half style) instead of interleaved even/odd pairs
Other roformer bugs are planted on the torch side.
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import RoFormerConfig, RoFormerForMaskedLM

CONFIG = dict(
    vocab_size=1000, embedding_size=32, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, pad_token_id=0, layer_norm_eps=1e-12, rotary_value=False,
)


def _rope_halves(rot):
    def forward(x, offset=0):
        seqlen = x.shape[-2]
        sin, cos = rot.sin[offset : offset + seqlen, :], rot.cos[offset : offset + seqlen, :]
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]  # should be x[..., 0::2], x[..., 1::2]
        return paddle.concat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)

    return forward


def model():
    paddle.seed(0)
    m = RoFormerForMaskedLM(RoFormerConfig(**CONFIG))
    m.eval()
    for p in m.roformer.pooler.parameters():  # paddle-only module, unused by the MLM output
        p.stop_gradient = True
    if os.environ.get("PADIFF_BUG", "") == "paddle_rope_halves":
        rot = m.roformer.encoder.layers[1].self_attn.rotary
        # object.__setattr__: paddlenlp's Layer.__setattr__ rewraps a patched `forward`
        object.__setattr__(rot, "forward", _rope_halves(rot))
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types = np.zeros((2, 12), "int64")
    types[:, 6:] = 1
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, types, mask


def inputs():
    ids, types, mask = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp RoFormerForMaskedLM (return_dict False, no labels) returns the bare logits
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()
