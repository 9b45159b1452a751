"""CLIPSeg (CLIPSegModel: CLIP-style text + ViT vision towers, the backbone of the segmentation
model), paddlenlp side: tiny random config, no download.

PADIFF_BUG=paddle_eos_pool plants this side's bug (see clipseg_truth.json).
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import CLIPSegConfig, CLIPSegModel
from paddlenlp.transformers.clipseg.modeling import _expand_mask
from paddlenlp.transformers.model_outputs import BaseModelOutputWithPooling

TEXT = dict(
    vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
    max_position_embeddings=16, hidden_act="quick_gelu", layer_norm_eps=1e-5, attention_dropout=0.0,
    pad_token_id=1, bos_token_id=98, eos_token_id=99,
)
VISION = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_channels=3,
    image_size=32, patch_size=8, hidden_act="quick_gelu", layer_norm_eps=1e-5, attention_dropout=0.0,
)


def model():
    paddle.seed(0)
    # return_dict pinned: paddlenlp's CLIPSegConfig defaults it to False (a tuple output), unlike its
    # CLIP / BLIP configs and HF; with it the output is a CLIPSegOutput as on the HF side
    cfg = CLIPSegConfig(text_config=dict(TEXT), vision_config=dict(VISION), projection_dim=16, return_dict=True)
    m = CLIPSegModel(cfg)
    m.eval()
    _perturb(m)
    if os.environ.get("PADIFF_BUG", "") == "paddle_eos_pool":
        tm = m.text_model
        object.__setattr__(tm, "forward", _text_forward_last_token_bug(tm))
    return m


def _perturb(m):
    """paddlenlp's init leaves every bias 0 and every LayerNorm at (1, 0): give them random
    values (fixed numpy rng) so that a bias or norm parameter ported wrongly shows."""
    rng = np.random.default_rng(1)
    for name, p in m.named_parameters():
        if name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif ("layer_norm" in name or "layrnorm" in name or "layernorm" in name) and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))


def _text_forward_last_token_bug(tm):
    """CLIPSegTextTransformer.forward (no attentions / hidden states) where the pooled text
    feature is taken from the LAST position (GPT-style pooling) instead of the first eos token:
    a porting slip that only shows for a sequence padded after its eos (sample 1 here)."""
    def forward(input_ids=None, attention_mask=None, position_ids=None, output_attentions=None,
                output_hidden_states=None, return_dict=None):
        bsz, seq_len = input_ids.shape
        hidden_states = tm.embeddings(input_ids=input_ids, position_ids=position_ids)
        causal_attention_mask = tm._build_causal_attention_mask(bsz, seq_len, hidden_states.dtype)
        if attention_mask is not None:
            attention_mask = _expand_mask(attention_mask)
        enc = tm.encoder(inputs_embeds=hidden_states, attention_mask=attention_mask,
                         causal_attention_mask=causal_attention_mask, output_attentions=output_attentions,
                         output_hidden_states=output_hidden_states, return_dict=return_dict)
        last = tm.final_layer_norm(enc[0])
        pooled = last[:, -1, :]  # the bug: should gather the first eos position per sample
        return BaseModelOutputWithPooling(last_hidden_state=last, pooler_output=pooled)
    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(2, 98, size=(2, 12)).astype("int64")  # no pad (1), bos (98) or eos (99) in the body
    ids[:, 0] = 98  # bos
    ids[0, 11] = 99  # eos closes sample 0
    ids[1, 8] = 99  # sample 1: eos after 8 tokens, then 3 masked positions (ordinary ids, not the pad id)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0
    pixels = rng.standard_normal((2, 3, 32, 32)).astype("float32")
    return ids, mask, pixels


def inputs():
    ids, mask, pixels = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "pixel_values": paddle.to_tensor(pixels),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # CLIPSegOutput: logits_per_image [2, 2] (scaled cosine similarities)
    return (output.logits_per_image**2).mean()
