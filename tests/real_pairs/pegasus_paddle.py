"""Pegasus (encoder-decoder, pre-norm), paddlenlp side: tiny random config, no download.
Twin: pegasus_torch.py.

paddlenlp builds Pegasus from paddle.nn.TransformerEncoder/DecoderLayer (normalize_before=True).
Its init hook overwrites the frozen sinusoidal position tables with N(0, init_std) (the hook
treats them as ordinary Embeddings); model() writes the sinusoid back, as a checkpoint would.

PADIFF_BUG (this side only):
  paddle_embed_scale -> encoder token embeddings not multiplied by sqrt(d_model)
  paddle_norm_order  -> decoder layer 1 runs post-norm (normalize_before=False)
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import PegasusConfig, PegasusModel
from paddlenlp.transformers.pegasus.modeling import PegasusSinusoidalPositionalEmbedding

CONFIG = dict(
    vocab_size=1000, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="relu",
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.1,
    pad_token_id=0, eos_token_id=1, bos_token_id=2, decoder_start_token_id=2,
    scale_embedding=True, use_cache=False,
)


def _perturb_1d(m):
    """Norm scales start at 1, biases at 0: redraw 1-D tensors so that every tensor matters."""
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 1.0 if ("norm" in name and name.endswith("weight")) else 0.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def model():
    paddle.seed(0)
    m = PegasusModel(PegasusConfig(**CONFIG))
    for emb in (m.encoder.encoder_embed_positions, m.decoder.decoder_embed_positions):
        with paddle.no_grad():
            PegasusSinusoidalPositionalEmbedding._init_weight(emb.weight)
    _perturb_1d(m)
    m.eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "paddle_embed_scale":
        m.encoder.embed_scale = 1.0
    elif bug == "paddle_norm_order":
        m.decoder.decoder.layers[1].normalize_before = False
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(2, 12)).astype("int64")  # no pad/eos/bos (0, 1, 2)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second source padded after 9 tokens
    dec = rng.integers(3, 1000, size=(2, 10)).astype("int64")
    # decoder start 2 (bos), not Pegasus's usual 0 (= pad): HF's `shared` has padding_idx 0 and
    # gives row 0 no gradient, paddle's has none (the forward agrees either way)
    dec[:, 0] = 2
    return ids, mask, dec


def inputs():
    ids, mask, dec = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "attention_mask": paddle.to_tensor(mask),
        "decoder_input_ids": paddle.to_tensor(dec),
    }


def loss(output):
    # paddlenlp returns (decoder_output, cache, encoder_output, additive attention_mask)
    dec, enc = output[0], output[2]
    # both end in a LayerNorm: take half of the features
    return (dec[..., :16] ** 2).mean() + (enc[..., :16] ** 2).mean()
