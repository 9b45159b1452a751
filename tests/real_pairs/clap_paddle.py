"""CLAP (RoBERTa text tower + HTSAT/Swin audio tower), paddlenlp side: tiny random config, no download.

PADIFF_BUG=paddle_* plants this side's bug (see clap_truth.json).
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import ClapConfig, ClapModel

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
    paddle.seed(0)
    # initializer_factor 3 (paddlenlp's init std is factor * hidden**-0.5 * (2 * n_layers)**-0.5): with 1 the
    # activations stay so small that the cosine-similarity output barely reacts to a wrong GELU
    cfg = ClapConfig(text_config=dict(TEXT), audio_config=dict(AUDIO), projection_dim=16, initializer_factor=3.0)
    m = ClapModel(cfg)
    m.eval()
    _perturb(m)
    if os.environ.get("PADIFF_BUG", "") == "paddle_unshift_sign":
        blk = m.audio_model.audio_encoder.layers[0].blocks[1]  # the shifted-window block of stage 0
        object.__setattr__(blk, "forward", _audio_layer_forward_unshift_bug(blk))
    return m


def _perturb(m):
    """paddlenlp's init leaves every bias 0, every LayerNorm at (1, 0) and the BatchNorm statistics at
    (0, 1): give them random values (fixed numpy rng) so that a bias, norm parameter or running
    statistic ported wrongly shows."""
    rng = np.random.default_rng(1)
    for name, p in list(m.named_parameters()) + list(m.named_buffers()):
        if name.endswith(".bias") or name.endswith("._mean"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif name.endswith("._variance"):
            p.set_value(rng.uniform(0.5, 1.5, p.shape).astype("float32"))
        elif ("norm" in name.lower()) and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))


def _audio_layer_forward_unshift_bug(blk):
    """ClapAudioLayer.forward (no head mask / attentions) where the reverse cyclic shift after the
    window attention rolls by -shift_size again instead of +shift_size (a sign slip when porting
    torch.roll(..., shifts=(self.shift_size, self.shift_size), dims=(1, 2))): the tokens come back
    displaced by 2*shift_size along both spatial axes."""
    from paddlenlp.transformers.clap.modeling import window_partition, window_reverse

    def forward(hidden_states, input_dimensions, head_mask=None, output_attentions=False, always_partition=False):
        if not always_partition:
            blk.set_shift_and_window_size(input_dimensions)
        height, width = input_dimensions
        batch_size, _, channels = hidden_states.shape
        shortcut = hidden_states
        hidden_states = blk.layernorm_before(hidden_states)
        hidden_states = hidden_states.reshape([batch_size, height, width, channels])
        hidden_states, pad_values = blk.maybe_pad(hidden_states, height, width)
        _, height_pad, width_pad, _ = hidden_states.shape
        if blk.shift_size > 0:
            shifted = paddle.roll(hidden_states, shifts=(-blk.shift_size, -blk.shift_size), axis=(1, 2))
        else:
            shifted = hidden_states
        windows = window_partition(shifted, blk.window_size).reshape([-1, blk.window_size * blk.window_size, channels])
        attn_mask = blk.get_attn_mask(height_pad, width_pad, dtype=hidden_states.dtype)
        attention_outputs = blk.attention(windows, attn_mask, head_mask, output_attentions=output_attentions)
        attention_windows = attention_outputs[0].reshape([-1, blk.window_size, blk.window_size, channels])
        shifted_windows = window_reverse(attention_windows, blk.window_size, height_pad, width_pad)
        if blk.shift_size > 0:  # the bug: -shift_size instead of +shift_size
            attention_windows = paddle.roll(shifted_windows, shifts=(-blk.shift_size, -blk.shift_size), axis=(1, 2))
        else:
            attention_windows = shifted_windows
        if pad_values[3] > 0 or pad_values[5] > 0:
            attention_windows = attention_windows[:, :height, :width, :]
        attention_windows = attention_windows.reshape([batch_size, height * width, channels])
        hidden_states = shortcut + blk.drop_path(attention_windows)
        layer_output = blk.layernorm_after(hidden_states)
        layer_output = blk.intermediate(layer_output)
        layer_output = hidden_states + blk.output(layer_output)
        return (layer_output, attention_outputs[1]) if output_attentions else (layer_output,)

    return forward


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
        "input_ids": paddle.to_tensor(ids),
        "input_features": paddle.to_tensor(feats),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # ClapOutput: logits_per_audio [2, 2] (scaled cosine similarities)
    return (output.logits_per_audio**2).mean()
