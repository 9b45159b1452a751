"""CLAP (RoBERTa text tower + HTSAT/Swin audio tower), HF transformers side: tiny random config, no download.

Planted bugs (PADIFF_BUG): see clap_truth.json.
"""
import os

import numpy as np
import torch
from transformers import ClapConfig, ClapModel

TEXT = dict(
    vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
    max_position_embeddings=20, type_vocab_size=1, hidden_act="gelu", layer_norm_eps=1e-5,
    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=1, bos_token_id=0, eos_token_id=2,
    use_cache=False,
)
# spec 32x32 from a [B, 1, 64 frames, 16 mel bins] input (freq_ratio 2, no bicubic resize), 8x8 patches of 4,
# stage 0 (dim 16, 8x8, window 4, shifted blocks) -> patch merging -> stage 1 (dim 32, 4x4)
AUDIO = dict(
    window_size=4, num_mel_bins=16, spec_size=32, hidden_act="gelu", patch_size=4, patch_stride=[4, 4],
    hidden_size=32, depths=[2, 2], num_attention_heads=[2, 4], enable_fusion=False, hidden_dropout_prob=0.0,
    patch_embed_input_channels=1, flatten_patch_embeds=True, patch_embeds_hidden_size=16,
    enable_patch_layer_norm=True, drop_path_rate=0.0, attention_probs_dropout_prob=0.0, qkv_bias=True,
    mlp_ratio=2.0, num_hidden_layers=2, layer_norm_eps=1e-5,
)


def model():
    torch.manual_seed(0)
    # initializer_factor 3 (paddlenlp's init std is factor * hidden**-0.5 * (2 * n_layers)**-0.5): with 1 the
    # activations stay so small that the cosine-similarity output barely reacts to a wrong GELU
    cfg = ClapConfig(text_config=dict(TEXT), audio_config=dict(AUDIO), projection_dim=16, initializer_factor=3.0)
    m = ClapModel._from_config(cfg, attn_implementation="eager").eval()
    # HF's logit scales are 0-d, paddlenlp's have shape [1]; verify_truth.py's transfer cannot copy
    # into a 0-d tensor, so hold them as [1] here: the forward only uses .exp() as a broadcast factor
    m.logit_scale_a = torch.nn.Parameter(m.logit_scale_a.detach().reshape(1))
    m.logit_scale_t = torch.nn.Parameter(m.logit_scale_t.detach().reshape(1))
    if os.environ.get("PADIFF_BUG", "") == "gelu_tanh":
        # the audio config's exact (erf) "gelu" ported as the tanh approximation ("gelu_new") in the MLP of
        # the first block of audio stage 1
        blk = m.audio_model.audio_encoder.layers[1].blocks[0]
        blk.intermediate.intermediate_act_fn = torch.nn.GELU(approximate="tanh")
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 100, size=(2, 12)).astype("int64")  # no bos (0), pad (1) or eos (2) in the body
    ids[:, 0] = 0  # bos
    ids[0, 11] = 2  # eos closes sample 0
    ids[1, 8] = 2  # sample 1: eos after 8 tokens, then 3 masked positions (ordinary ids, not the pad id)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0
    feats = rng.standard_normal((2, 1, 64, 16)).astype("float32")  # [B, 1, frames, mel bins] log-mel-like
    return ids, mask, feats


def inputs():
    ids, mask, feats = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "input_features": torch.from_numpy(feats),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # ClapOutput: logits_per_audio [2, 2] (scaled cosine similarities)
    return (output.logits_per_audio**2).mean()
