"""Blenderbot (pre-norm encoder-decoder), paddlenlp side: tiny random config, no download.
Twin: blenderbot_torch.py (HF BlenderbotModel).

paddlenlp builds Blenderbot from paddle.nn.TransformerEncoderLayer / its own
BlenderbotDecoderLayer (normalize_before=True) with a final LayerNorm on both stacks.
paddlenlp's BlenderbotModel creates THREE separate token tables (shared, encoder.embed_tokens,
decoder.embed_tokens: the encoder and decoder are built without the shared one, and `shared`
is never called); HF ties all three to one module. model() ties them as HF does (the encoder
and decoder hold `shared`) and zeroes the pad row (as HF's init and a converted checkpoint have
it).

PADIFF_BUG (this side only):
  paddle_ln_half -> encoder layer 1's pre-FFN LayerNorm (norm2) run in bfloat16: its
                    input and output rounded to bfloat16 and cast back to float32 (a
                    precision-level bug)
  paddle_pos_offset -> the decoder's learned positions start at 2 (BART's position offset of 2
                    carried into Blenderbot, which has none): decoder_embed_positions looks up rows
                    2..T+1 instead of 0..T-1 (its forward replaced)
Other blenderbot bugs are planted on the torch side.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddlenlp.transformers import BlenderbotConfig, BlenderbotModel

CONFIG = dict(
    vocab_size=1000, d_model=32, num_encoder_layers=2, num_decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="gelu",
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.1,
    pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
    scale_embedding=True, normalize_before=True,
)


def _perturb_1d(m):
    """Norm scales start at 1, biases at 0: redraw 1-D tensors so that every tensor matters."""
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 1.0 if ("norm" in name and name.endswith("weight")) else 0.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def _half_layer_norm(ln):
    # paddle's CPU kernels have no float16/bfloat16 layer_norm / mean: the half-precision norm is
    # emulated as a bfloat16 round trip of its input and of its output (what running the norm
    # in a bf16 AMP region and casting the result back to float32 costs)
    def forward(x):
        y = F.layer_norm(x.astype("bfloat16").astype("float32"), ln._normalized_shape,
                         ln.weight, ln.bias, ln._epsilon)
        return y.astype("bfloat16").astype("float32")

    return forward


def model():
    paddle.seed(0)
    m = BlenderbotModel(BlenderbotConfig(**CONFIG))
    _perturb_1d(m)
    # tie the token tables as HF (and paddlenlp's own BlenderbotSmall / Bart) do: the encoder and
    # decoder use the one `shared` Layer. Left untied, the forward agrees once the three tables
    # hold the same values, but each table gets only its own stack's gradient (HF's shared gets
    # the sum) and paddle's `shared` gets none
    m.encoder.embed_tokens = m.shared
    m.decoder.embed_tokens = m.shared
    with paddle.no_grad():  # zero the pad row, as HF's init and a converted checkpoint have it
        w = m.shared.weight.numpy().copy()
        w[CONFIG["pad_token_id"]] = 0.0
        m.shared.weight.set_value(paddle.to_tensor(w))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_ln_half":
        ln = m.encoder.encoder.layers[1].norm2
        object.__setattr__(ln, "forward", _half_layer_norm(ln))
    elif os.environ.get("PADIFF_BUG", "") == "paddle_pos_offset":
        emb = m.decoder.decoder_embed_positions
        object.__setattr__(emb, "forward", _offset_positions(emb))
    return m


def _offset_positions(emb):
    def forward(input_ids_shape, past_key_values_length=0):
        seq_len = input_ids_shape[1]
        start = past_key_values_length + 2  # the bug: BART's offset; Blenderbot starts at 0
        positions = paddle.arange(start, start + seq_len, dtype="int64")
        return F.embedding(positions, emb.weight)
    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(2, 12)).astype("int64")  # no pad/bos/eos (0, 1, 2)
    dec = rng.integers(3, 1000, size=(2, 10)).astype("int64")
    dec[:, 0] = 1  # decoder_start_token_id
    return ids, dec


def inputs():
    # no padding: paddlenlp builds the cross-attention mask from input_ids == pad_token_id and
    # multiplies a given attention_mask by -1e4 as is (1 = masked), so a 0/1 keep-mask has no
    # common meaning; without pad ids both sides attend everywhere
    ids, dec = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "decoder_input_ids": paddle.to_tensor(dec),
    }


def loss(output):
    # paddlenlp BlenderbotModel (use_cache False) returns the decoder output tensor
    dec = output if isinstance(output, paddle.Tensor) else output[0]
    # ends in a LayerNorm: the mean of ALL squared features is ~constant, take half of them
    return (dec[..., :16] ** 2).mean()
