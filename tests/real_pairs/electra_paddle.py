"""ELECTRA discriminator, paddlenlp side: tiny random config, no download. Twin: electra_torch.py.

paddlenlp ElectraDiscriminator = ElectraModel (on paddle.nn.TransformerEncoder, post-norm) +
ElectraDiscriminatorPredictions (dense, act, dense_prediction). embedding_size 16 != hidden 32,
so both sides have an embeddings_project Linear.
PADIFF_BUG (this side only):
  paddle_mask_axis -> ElectraModel expands the 2-D attention_mask on the wrong axes: [B, 1, S, 1]
                      (masks query rows) instead of [B, 1, 1, S] (key columns). A constant added
                      to a whole score row does not change its softmax, so padding is not masked
  paddle_emb_ln    -> the embeddings LayerNorm is skipped (embeddings.layer_norm returns its input)
Other electra bugs (heads, head_act, pos_from_1) are planted on the torch side.
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import ElectraConfig, ElectraDiscriminator

CONFIG = dict(
    vocab_size=1000, embedding_size=16, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, pad_token_id=0, layer_norm_eps=1e-12,
)


def model():
    paddle.seed(0)
    m = ElectraDiscriminator(ElectraConfig(**CONFIG))
    m.eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "paddle_emb_ln":
        ln = m.electra.embeddings.layer_norm

        def ln_forward(x):
            return x  # normalization forgotten: word + position + token_type sum passed on as is

        ln.forward = ln_forward
    elif bug == "paddle_mask_axis":
        electra = m.electra
        orig = electra.forward

        def forward(*args, attention_mask=None, **kwargs):
            if attention_mask is not None and attention_mask.ndim == 2:
                attention_mask = attention_mask.unsqueeze(axis=[1, 3])  # should be axis=[1, 2]
            return orig(*args, attention_mask=attention_mask, **kwargs)

        # object.__setattr__: paddlenlp's Layer.__setattr__ rewraps a patched `forward`
        object.__setattr__(electra, "forward", forward)
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types = np.zeros((2, 12), "int64")
    types[:, 7:] = 1
    mask = np.ones((2, 12), "int64")
    mask[1, 8:] = 0  # second sample padded after 8 tokens
    return ids, types, mask


def inputs():
    ids, types, mask = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp ElectraDiscriminator returns the bare logits tensor [batch, seq]
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()
