"""XLM pair, paddle side: paddlenlp XLMWithLMHeadModel (tiny random config, fp32, no downloads).

Twin of xlm_torch.py (HF XLMWithLMHeadModel). Ground truth: xlm_truth.json.
PADIFF_BUG (paddle side):
  paddle_act -> layer 1 feed-forward activation is ReLU instead of GELU
"""
import os

import numpy as np
import paddle

CONFIG = dict(
    vocab_size=1000, emb_dim=32, n_layers=2, n_heads=4, dropout=0.0, attention_dropout=0.0,
    gelu_activation=True, hidden_act="gelu", sinusoidal_embeddings=True, causal=False, asm=False,
    n_langs=2, use_lang_emb=True, max_position_embeddings=64, embed_init_std=0.1, init_std=0.1,
    layer_norm_eps=1e-12, bos_index=0, eos_index=1, pad_index=2, unk_index=3, mask_index=5,
    is_encoder=True, pad_token_id=2, bos_token_id=0,
)


def _randomize_small(m):
    """Biases ~ N(0, 0.1), LayerNorm scales ~ 1 + N(0, 0.1) (paddlenlp leaves them 0 / 1)."""
    paddle.seed(1)
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 0.0 if name.endswith("bias") else 1.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def model():
    from paddlenlp.transformers import XLMConfig, XLMWithLMHeadModel

    paddle.seed(0)
    m = XLMWithLMHeadModel(XLMConfig(**CONFIG))
    _randomize_small(m)
    # paddlenlp 2.8.1's _init_weights re-draws every nn.Embedding, including the
    # SinusoidalPositionalEmbedding (a subclass): its frozen table ends up N(0, embed_init_std).
    # Restore the sinusoid (HF builds it correctly) so the model is what the config says.
    w = m.xlm.position_embeddings.weight
    n_pos, dim = w.shape
    ang = np.arange(n_pos)[:, None] * 10000.0 ** (-2 * np.arange(dim // 2)[None, :] / dim)
    table = np.zeros((n_pos, dim), "float32")
    table[:, 0::2], table[:, 1::2] = np.sin(ang), np.cos(ang)
    w.set_value(paddle.to_tensor(table))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_act":
        m.xlm.ffns[1].act = paddle.nn.ReLU()
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(6, 1000, size=(2, 12)).astype("int64")  # no special ids (pad = 2)
    langs = np.zeros((2, 12), "int64")
    langs[1] = 1  # second sample in language 1
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample right-padded after 9 tokens
    return ids, langs, mask


def inputs():
    ids, langs, mask = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "langs": paddle.to_tensor(langs),
                "attention_mask": paddle.to_tensor(mask)}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()
