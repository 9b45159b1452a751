"""FNet pair, torch side: HF transformers FNetForMaskedLM (tiny random config, fp32).

Twin of fnet_paddle.py (paddlenlp FNetForMaskedLM). Ground truth: fnet_truth.json.
PADIFF_BUG (torch side):
  fft_real -> layer 0 Fourier mixing keeps the imaginary part (.imag instead of .real)
  act      -> layer 1 intermediate activation exact erf GELU replaced by ReLU
"""
import os

import numpy as np
import torch

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, intermediate_size=64, hidden_act="gelu_new",
    hidden_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=4, initializer_range=0.1,
    layer_norm_eps=1e-12, use_tpu_fourier_optimizations=False, pad_token_id=3, bos_token_id=1,
    eos_token_id=2,
)


def model():
    from transformers import FNetConfig, FNetForMaskedLM

    torch.manual_seed(0)
    m = FNetForMaskedLM(FNetConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "fft_real":
        ft = m.fnet.encoder.layer[0].fourier.self

        def forward(hidden_states):
            return (torch.fft.fftn(hidden_states, dim=(1, 2)).imag,)

        ft.forward = forward
    elif bug == "act":
        m.fnet.encoder.layer[1].intermediate.intermediate_act_fn = torch.nn.ReLU()
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
    return (), {"input_ids": torch.from_numpy(ids), "token_type_ids": torch.from_numpy(types)}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()
