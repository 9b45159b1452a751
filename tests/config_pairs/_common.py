"""Inputs and weights shared by the configuration pairs (framework imports are lazy).

The recorder puts a spec's folder on sys.path, so specs import this as `_common`.
"""
import numpy as np

BATCH, SEQ, VOCAB = 2, 12, 1000


def token_ids():
    """int64 [batch, seq] ids from numpy default_rng(0); ids 0..3 (pad/bos/eos) avoided."""
    return np.random.default_rng(0).integers(4, VOCAB, (BATCH, SEQ)).astype("int64")


def randomize_paddle(model, std=0.2, seed=0):
    """Redraw every paddle parameter (matrices N(0, std), biases N(0, 0.1), other 1-D tensors
    1 + N(0, 0.1)): with paddlenlp's initialisers a wrongly sliced q|k|v could go unnoticed."""
    import paddle

    paddle.seed(seed)
    for name, p in model.named_parameters():
        if p.ndim >= 2:
            v = paddle.normal(0.0, std, p.shape)
        elif name.endswith("bias"):
            v = paddle.normal(0.0, 0.1, p.shape)
        else:
            v = 1.0 + paddle.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype(p.dtype))
    return model
