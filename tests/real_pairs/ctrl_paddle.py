"""CTRL pair, paddle side: paddlenlp CTRLLMHeadModel (tiny random config, fp32, no downloads).

Twin of ctrl_torch.py (HF CTRLLMHeadModel). Ground truth: ctrl_truth.json.
PADIFF_BUG (paddle side):
  paddle_pos_interleave -> the sinusoidal position table (frozen parameter ctrl.pos_encoding.weight)
                           is built interleaved [sin0, cos0, sin1, cos1, ...] instead of [sin..., cos...]
"""
import os

import numpy as np
import paddle

CONFIG = dict(
    vocab_size=1000, n_positions=64, n_embd=32, dff=64, n_layer=2, n_head=4,
    resid_pdrop=0.0, embd_pdrop=0.0, layer_norm_epsilon=1e-6, initializer_range=0.1,
    use_cache=False, pad_token_id=0,
)


def _randomize_small(m):
    """Biases ~ N(0, 0.1), LayerNorm scales ~ 1 + N(0, 0.1) (paddlenlp leaves them 0 / 1)."""
    paddle.seed(1)
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 0.0 if name.endswith("bias") else 1.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def model():
    from paddlenlp.transformers import CTRLConfig, CTRLLMHeadModel

    paddle.seed(0)
    m = CTRLLMHeadModel(CTRLConfig(**CONFIG))
    _randomize_small(m)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_pos_interleave":
        w = m.ctrl.pos_encoding.weight
        n_pos, dim = w.shape
        pos = np.arange(n_pos, dtype="float32")[:, None]
        ang = pos * 10000.0 ** (-2 * np.arange(dim // 2, dtype="float32")[None, :] / dim)
        table = np.stack([np.sin(ang), np.cos(ang)], axis=-1).reshape(n_pos, dim)  # interleaved
        w.set_value(paddle.to_tensor(table.astype("float32")))
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(4, 1000, size=(2, 12)).astype("int64")  # no pad id
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample right-padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(mask),
                "use_cache": False}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()
