"""CLIPSeg (CLIPSegModel: CLIP-style text + ViT vision towers, the backbone of the segmentation
model), HF transformers side: tiny random config, no download.

Planted bugs (PADIFF_BUG): see clipseg_truth.json.
"""
import os

import numpy as np
import torch
from transformers import CLIPSegConfig, CLIPSegModel

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
    torch.manual_seed(0)
    cfg = CLIPSegConfig(text_config=dict(TEXT), vision_config=dict(VISION), projection_dim=16)
    m = CLIPSegModel._from_config(cfg, attn_implementation="eager").eval()
    # HF's logit_scale is 0-d, paddlenlp's has shape [1]; verify_truth.py's transfer cannot copy
    # into a 0-d tensor (np.ascontiguousarray makes it 1-d), so hold it as [1] here: the forward
    # only uses logit_scale.exp() as a broadcast factor, the value is unchanged
    m.logit_scale = torch.nn.Parameter(m.logit_scale.detach().reshape(1))
    if os.environ.get("PADIFF_BUG", "") == "causal":
        # text layer 0's self-attention ported without its causal mask (as in the vision tower):
        # its tokens also attend to later ones; the padding mask is still applied
        attn = m.text_model.encoder.layers[0].self_attn
        orig = attn.forward

        def forward(hidden_states, attention_mask=None, causal_attention_mask=None, output_attentions=False):
            return orig(hidden_states, attention_mask=attention_mask, causal_attention_mask=None,
                        output_attentions=output_attentions)

        attn.forward = forward
    return m


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
        "input_ids": torch.from_numpy(ids),
        "pixel_values": torch.from_numpy(pixels),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # CLIPSegOutput: logits_per_image [2, 2] (scaled cosine similarities)
    return (output.logits_per_image**2).mean()
