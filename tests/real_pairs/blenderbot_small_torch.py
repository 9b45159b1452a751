"""BlenderbotSmall (post-norm encoder-decoder), HF transformers side: tiny random config, no
download. Twin: blenderbot_small_paddle.py.

scale_embedding defaults differ (HF False, paddlenlp True): pinned to True.

PADIFF_BUG (this side only):
  fc2_bias -> encoder layer 1's second feed-forward Linear (fc2) drops its bias
Other blenderbot_small bugs are planted on the paddle side.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from transformers import BlenderbotSmallConfig, BlenderbotSmallModel

CONFIG = dict(
    vocab_size=1000, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="gelu",
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.1,
    pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
    scale_embedding=True, use_cache=False, attn_implementation="eager",
)


def model():
    torch.manual_seed(0)
    m = BlenderbotSmallModel(BlenderbotSmallConfig(**CONFIG)).eval()
    if os.environ.get("PADIFF_BUG", "") == "fc2_bias":
        fc2 = m.encoder.layers[1].fc2
        fc2.forward = lambda x: F.linear(x, fc2.weight)  # bias left out
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(2, 12)).astype("int64")  # no pad/bos/eos (0, 1, 2)
    dec = rng.integers(3, 1000, size=(2, 10)).astype("int64")
    dec[:, 0] = 1  # decoder_start_token_id
    return ids, dec


def inputs():
    ids, dec = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "decoder_input_ids": torch.from_numpy(dec),
        "use_cache": False,
    }


def loss(output):
    # HF returns Seq2SeqModelOutput; last_hidden_state is the decoder output
    dec = output.last_hidden_state
    # post-norm: ends in a LayerNorm (final_layer_norm of the last layer), take half the features
    return (dec[..., :16] ** 2).mean()
