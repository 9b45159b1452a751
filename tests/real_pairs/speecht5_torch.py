"""SpeechT5 speech-to-text (waveform conv feature encoder + encoder with relative positions + text
decoder), HF transformers side: tiny random config, no download.

Planted bugs (PADIFF_BUG): see speecht5_truth.json.
"""
import os

import numpy as np
import torch
from transformers import SpeechT5Config, SpeechT5ForSpeechToText

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


def model():
    torch.manual_seed(0)
    m = SpeechT5ForSpeechToText._from_config(SpeechT5Config(**CONFIG), attn_implementation="eager").eval()
    if os.environ.get("PADIFF_BUG", "") == "rel_pos_max":
        # the encoder's relative-position window (config encoder_max_relative_position 16) ported as 8 into
        # the one module that uses it: distances are clipped at +-8 and the table is indexed around row 8, not 16
        m.speecht5.encoder.wrapped_encoder.embed_positions.max_length = 8
    return m


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
        "input_values": torch.from_numpy(wav),
        "attention_mask": torch.from_numpy(mask),
        "decoder_input_ids": torch.from_numpy(dec),
    }


def loss(output):
    # Seq2SeqLMOutput: logits [2, 8, 100] from the lm_head (no final norm)
    return (output.logits**2).mean()
