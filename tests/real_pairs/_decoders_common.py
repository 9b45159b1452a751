"""Helpers shared by the decoder real pairs (gpt, opt, bloom, llama specs). Framework imports are lazy.

The recorder puts a spec's folder on sys.path, so specs import this as `_decoders_common`.
"""
import numpy as np

BATCH, SEQ = 2, 12


def token_ids(vocab, batch=BATCH, seq=SEQ):
    """int64 [batch, seq] ids from numpy default_rng(0); ids 0..3 (pad/bos/eos of these configs) avoided."""
    return np.random.default_rng(0).integers(4, vocab, (batch, seq)).astype("int64")


def randomize_paddle(model, std=0.2, seed=0, embed_std=None):
    """Redraw every paddle parameter so that every tensor of the pair matters.

    paddlenlp's initialisers leave norms at 1/0 and biases at 0, and BLOOM's `_init_weights`
    even zeroes every Linear weight that has a bias (it sets `weight` twice): with those values
    a swapped, missing or wrongly sliced tensor goes unnoticed. Matrices ~ N(0, std), biases
    ~ N(0, 0.1), 1-D weights (norm scales) ~ 1 + N(0, 0.1). Tied parameters are drawn once.
    embed_std: std of parameters named "*embed*" (default: std).
    """
    import paddle

    paddle.seed(seed)
    for name, p in model.named_parameters():
        if p.ndim >= 2:
            v = paddle.normal(0.0, embed_std if embed_std and "embed" in name else std, p.shape)
        elif name.endswith("bias"):
            v = paddle.normal(0.0, 0.1, p.shape)
        else:
            v = 1.0 + paddle.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype(p.dtype))
    return model
