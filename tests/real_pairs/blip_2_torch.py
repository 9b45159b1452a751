"""BLIP-2 (ViT vision tower + Q-Former + tiny OPT language model), HF transformers side: tiny random
config, no download.

Planted bugs (PADIFF_BUG): see blip_2_truth.json.
"""
import os

import numpy as np
import torch
from transformers import Blip2Config, Blip2Model

VISION = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=32, patch_size=8,
    hidden_act="gelu", layer_norm_eps=1e-5, attention_dropout=0.0, dropout=0.0, qkv_bias=True,
    initializer_range=0.1,  # the default 1e-10 leaves every vision weight ~0: the tower would output biases only
)
QFORMER = dict(
    vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
    hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=32,
    layer_norm_eps=1e-12, cross_attention_frequency=1, encoder_hidden_size=32, initializer_range=0.1,
)
# HF's OPTConfig keys (paddlenlp: intermediate_size, normalize_before, hidden_act, hidden_dropout_prob ...)
TEXT = dict(
    model_type="opt", vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=64,
    word_embed_proj_dim=32, max_position_embeddings=32, activation_function="relu", do_layer_norm_before=True,
    dropout=0.0, attention_dropout=0.0, layerdrop=0.0, pad_token_id=1, bos_token_id=2, eos_token_id=2,
    use_cache=False, tie_word_embeddings=False,
)


def model():
    torch.manual_seed(0)
    cfg = Blip2Config(vision_config=dict(VISION), qformer_config=dict(QFORMER), text_config=dict(TEXT),
                      num_query_tokens=4, image_token_index=99)
    m = Blip2Model._from_config(cfg, attn_implementation="eager").eval()
    if os.environ.get("PADIFF_BUG", "") == "post_norm":
        # paddlenlp's normalize_before=True ported as do_layer_norm_before=False into OPT layer 1 only:
        # that layer normalises after each residual add (post-LN) instead of before each sublayer
        m.language_model.model.decoder.layers[1].do_layer_norm_before = False
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 99, size=(2, 8)).astype("int64")  # no pad (1), bos/eos (2) or image token (99)
    # no padding: paddlenlp's OPT position ids are cumsum(mask) - 1, HF's cumsum(mask) * mask - 1, so a
    # padded text position gets another position row (and other logits) on the two sides
    mask = np.ones((2, 8), "int64")
    pixels = rng.standard_normal((2, 3, 32, 32)).astype("float32")
    return ids, mask, pixels


def inputs():
    """HF 4.57's Blip2Model expects one image placeholder token (image_token_index 99) per query token in
    input_ids and scatters the projected Q-Former outputs into their embeddings; paddlenlp concatenates
    the projected queries in front of the text embeddings (and ones in front of the mask) itself. So the
    same text gets 4 placeholder ids (and 4 mask ones) prepended here: both language models then see
    [4 query embeddings, 8 text embeddings] with the same mask."""
    ids, mask, pixels = _arrays()
    ids = np.concatenate([np.full((2, 4), 99, "int64"), ids], axis=1)
    mask = np.concatenate([np.ones((2, 4), "int64"), mask], axis=1)
    return (), {
        "pixel_values": torch.from_numpy(pixels),
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # Blip2ForConditionalGenerationModelOutput: logits [2, 4 query + 8 text, 100] of the OPT lm head
    return (output.logits**2).mean()
