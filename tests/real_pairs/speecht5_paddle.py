"""SpeechT5 speech-to-text (waveform conv feature encoder + encoder with relative positions + text
decoder), paddlenlp side: tiny random config, no download.

PADIFF_BUG=paddle_* plants this side's bug (see speecht5_truth.json).
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import SpeechT5Config, SpeechT5ForSpeechToText
from paddlenlp.transformers.speecht5 import modeling as _s5

# initializer_range 0.2 (not 0.02): with 0.02 every layer adds so little to its residual stream that
# the logits hardly depend on the encoder (a wrong relative-position window moved them by 5e-7)
CONFIG = dict(
    vocab_size=100, hidden_size=32, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=64,
    encoder_layerdrop=0.0, decoder_layers=2, decoder_ffn_dim=64, decoder_attention_heads=4, decoder_layerdrop=0.0,
    hidden_act="gelu", positional_dropout=0.0, hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
    layer_norm_eps=1e-5, initializer_range=0.2, scale_embedding=False, feat_extract_norm="group", feat_proj_dropout=0.0,
    feat_extract_activation="gelu", conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), conv_bias=True,
    num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=4, apply_spec_augment=False, mask_time_prob=0.0,
    mask_feature_prob=0.0, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
    max_speech_positions=64, max_text_positions=32, encoder_max_relative_position=16, use_cache=False,
    tie_word_embeddings=False,
)


def _fixed_make_causal_mask(input_ids_shape, dtype, past_key_values_length=0):
    """paddlenlp 2.8.1's _make_causal_mask calls its out-of-place masked_fill(mask, cond, 0) and drops the
    result, so the decoder's causal mask is finfo.min everywhere: every score becomes -3.4e38 and the
    decoder self-attention averages uniformly over all positions, future ones included. The same
    function with the result kept (installed into the library module below)."""
    bsz, tgt_len = input_ids_shape
    mask = paddle.full((tgt_len, tgt_len), float(_s5.finfo(dtype).min))
    mask_cond = paddle.arange(mask.shape[-1])
    mask = _s5.masked_fill(mask, mask_cond < (mask_cond + 1).reshape([mask.shape[-1], 1]), 0)  # the fix: keep it
    mask = mask.cast(dtype)
    if past_key_values_length > 0:
        mask = paddle.concat([paddle.zeros([tgt_len, past_key_values_length], dtype=dtype), mask], axis=-1)
    return mask[None, None, :, :].expand([bsz, 1, tgt_len, tgt_len + past_key_values_length])


_s5._make_causal_mask = _fixed_make_causal_mask


def model():
    paddle.seed(0)
    m = SpeechT5ForSpeechToText(SpeechT5Config(**CONFIG))
    m.eval()
    _perturb(m)
    pce = m.speecht5.encoder.prenet.pos_conv_embed
    object.__setattr__(pce, "forward", _pos_conv_forward_quiet(pce))
    if os.environ.get("PADIFF_BUG", "") == "paddle_pad_positions":
        pre = m.speecht5.encoder.prenet
        object.__setattr__(pre, "forward", _speech_prenet_forward_pad_bug(pre))
    return m


def _speech_prenet_forward_pad_bug(pre):
    """SpeechT5SpeechEncoderPrenet.forward (no SpecAugment: eval) where the padding mask handed to the
    sinusoidal position embedding is built with equal instead of not_equal (porting
    `attention_mask.ne(1).long()`): the real frames are taken for padding (position = padding_idx, a zero
    row) and the padded frames get the positions 2, 3, ..."""
    def forward(input_values, attention_mask=None, mask_time_indices=None):
        extract_features = pre.feature_encoder(input_values).transpose([0, 2, 1])
        if attention_mask is not None:
            attention_mask = pre._get_feature_vector_attention_mask(extract_features.shape[1], attention_mask)
        hidden_states, extract_features = pre.feature_projection(extract_features)
        hidden_states = pre._mask_hidden_states(hidden_states, mask_time_indices=mask_time_indices,
                                                attention_mask=attention_mask)
        hidden_states = hidden_states + pre.pos_conv_embed(hidden_states)
        if attention_mask is not None:  # the bug: equal instead of not_equal
            padding_mask = attention_mask.equal(paddle.to_tensor([1], dtype="bool")).cast("int64")
        else:
            padding_mask = paddle.zeros(hidden_states.shape[:2], dtype="int64")
        hidden_states = hidden_states + pre.pos_sinusoidal_embed(padding_mask)
        return hidden_states, attention_mask
    return forward


def _pos_conv_forward_quiet(pce):
    """paddlenlp 2.8.1's SpeechT5PositionalConvEmbedding.forward prints the whole conv weight on every
    call (a debug print(self.conv.weight) left in the library). The same forward without the print."""
    def forward(hidden_states):
        hidden_states = hidden_states.transpose([0, 2, 1])
        hidden_states = pce.conv(hidden_states)
        hidden_states = pce.padding(hidden_states)
        hidden_states = pce.activation(hidden_states)
        return hidden_states.transpose([0, 2, 1])
    return forward


def _perturb(m):
    """Give every bias and norm parameter random values (fixed numpy rng), so that a bias or norm
    parameter ported wrongly shows."""
    rng = np.random.default_rng(1)
    for name, p in m.named_parameters():
        if p.stop_gradient:
            continue
        if name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif "norm" in name and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))


def _arrays():
    rng = np.random.default_rng(0)
    wav = rng.standard_normal((2, 400)).astype("float32")  # 400 samples -> 79 -> 39 frames
    mask = np.ones((2, 400), "int64")
    mask[1, 300:] = 0  # sample 1: 300 real samples (29 frames), padded with zeros
    wav[1, 300:] = 0.0
    dec = rng.integers(3, 100, size=(2, 8)).astype("int64")  # no bos (0), pad (1) or eos (2) in the body
    dec[:, 0] = 2  # decoder_start_token_id
    return wav, mask, dec


def inputs():
    wav, mask, dec = _arrays()
    return (), {
        "input_values": paddle.to_tensor(wav),
        "attention_mask": paddle.to_tensor(mask),
        "decoder_input_ids": paddle.to_tensor(dec),
    }


def loss(output):
    # Seq2SeqLMOutput: logits [2, 8, 100] from the lm_head (no final norm)
    return (output.logits**2).mean()
