"""FNet pair, paddle side: paddlenlp FNetForMaskedLM (tiny random config, fp32, no downloads).

Twin of fnet_torch.py (HF FNetForMaskedLM). Ground truth: fnet_truth.json.

paddlenlp 2.8.1's FNetBasicFourierTransform uses `paddle.fft.fftn` over ALL axes, the batch axis
included (HF: torch.fft.fftn over dims (1, 2)): with batch > 1 every sample is mixed with the others.
The spec sets every layer's transform to fftn over axes (1, 2) (the FNet paper / HF behaviour).
PADIFF_BUG (paddle side):
  paddle_fft_batch -> layer 1 keeps paddlenlp's fftn over all axes (mixes the batch)
  paddle_pos       -> embeddings add position ids shifted by 1 (position_ids buffer starts at 1)
"""
import os
from functools import partial

import numpy as np
import paddle

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, intermediate_size=64, hidden_act="gelu_new",
    hidden_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=4, initializer_range=0.1,
    layer_norm_eps=1e-12, pad_token_id=3, bos_token_id=1, eos_token_id=2,
)


def _randomize_small(m):
    """Biases ~ N(0, 0.1), LayerNorm scales ~ 1 + N(0, 0.1) (paddlenlp leaves them 0 / 1)."""
    paddle.seed(1)
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 0.0 if name.endswith("bias") else 1.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def model():
    from paddlenlp.transformers import FNetConfig, FNetForMaskedLM

    paddle.seed(0)
    m = FNetForMaskedLM(FNetConfig(**CONFIG))
    _randomize_small(m)
    # paddle's Embedding(padding_idx=3) outputs zeros for pad ids whatever the row holds; torch
    # returns the row. paddlenlp's _init_weights means to zero the row but its
    # `weight[idx].set_value(...)` writes into a slice copy on paddle 3.x: zero the row here
    # (what a converted checkpoint holds), so both sides give 0 for pad ids.
    w = m.fnet.embeddings.word_embeddings.weight
    arr = w.numpy()
    arr[CONFIG["pad_token_id"]] = 0.0
    w.set_value(paddle.to_tensor(arr))
    bug = os.environ.get("PADIFF_BUG", "")
    for i, layer in enumerate(m.fnet.encoder.layers):
        if not (bug == "paddle_fft_batch" and i == 1):
            layer.fourier.fourier_transform.fourier_transform = partial(paddle.fft.fftn, axes=(1, 2))
    if bug == "paddle_pos":
        emb = m.fnet.embeddings
        emb.position_ids = emb.position_ids + 1  # positions 1..S instead of 0..S-1
    m.eval()
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(4, 1000, size=(2, 12)).astype("int64")  # no special ids
    ids[1, 9:] = 3  # second sample padded with pad id 3 (FNet takes no attention mask)
    types = np.zeros((2, 12), "int64")
    types[:, 6:] = 1
    return ids, types


def inputs():
    ids, types = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "token_type_ids": paddle.to_tensor(types),
            "return_dict": True}  # paddlenlp 2.8.1 FNetForMaskedLM fails with return_dict False


def loss(output):
    logits = output["prediction_logits"]  # dict (return_dict=True)
    return (logits**2).mean()
