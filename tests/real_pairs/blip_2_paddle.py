"""BLIP-2 (ViT vision tower + Q-Former + tiny OPT language model), paddlenlp side: tiny random config,
no download.

PADIFF_BUG=paddle_* plants this side's bug (see blip_2_truth.json).
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import Blip2Config, Blip2Model

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
# paddlenlp's own OPTConfig keys (HF: ffn_dim, do_layer_norm_before, activation_function, dropout ...)
TEXT = dict(
    model_type="opt", vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, word_embed_proj_dim=32, max_position_embeddings=32, hidden_act="relu",
    normalize_before=True, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=1,
    bos_token_id=2, eos_token_id=2, use_cache=False,
)


def model():
    paddle.seed(0)
    cfg = Blip2Config(vision_config=dict(VISION), qformer_config=dict(QFORMER), text_config=dict(TEXT),
                      num_query_tokens=4)
    m = Blip2Model(cfg)
    m.eval()
    _perturb(m)
    if os.environ.get("PADIFF_BUG", "") == "paddle_attn_scale":
        # vision layer 1's attention ported without the 1/sqrt(head_dim) factor on the scores
        # (Blip2Attention multiplies by self.scale inline in its forward)
        m.vision_model.encoder.layers[1].self_attn.scale = 1.0
    return m


def _perturb(m):
    """Random biases, norm weights and query tokens (fixed numpy rng) so that a bias, norm or query
    parameter ported wrongly shows (the init leaves biases 0, norms (1, 0), query tokens 0)."""
    rng = np.random.default_rng(1)
    for name, p in m.named_parameters():
        if p.stop_gradient:
            continue
        if name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif "norm" in name.lower() and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))
        elif name == "query_tokens":
            p.set_value(rng.normal(0.0, 0.5, p.shape).astype("float32"))


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 99, size=(2, 8)).astype("int64")  # no pad (1), bos/eos (2) or image token (99)
    # no padding: paddlenlp's OPT position ids are cumsum(mask) - 1, HF's cumsum(mask) * mask - 1, so a
    # padded text position gets another position row (and other logits) on the two sides
    mask = np.ones((2, 8), "int64")
    pixels = rng.standard_normal((2, 3, 32, 32)).astype("float32")
    return ids, mask, pixels


def inputs():
    """return_dict=True: with the default (False) paddlenlp's Blip2Model takes `outputs[0]` of the OPT
    language model, which then returns a bare logits tensor, so the model's 'logits' are the logits of
    sample 0 only ([12, 100] instead of [2, 12, 100])."""
    ids, mask, pixels = _arrays()
    return (), {
        "pixel_values": paddle.to_tensor(pixels),
        "input_ids": paddle.to_tensor(ids),
        "attention_mask": paddle.to_tensor(mask),
        "return_dict": True,
    }


def loss(output):
    # Blip2ForConditionalGenerationModelOutput: logits [2, 4 query + 8 text, 100] of the OPT lm head
    # (no norm after it)
    return (output.logits**2).mean()
