"""RoBERTa, paddlenlp side: tiny random config, no download. Twin: roberta_torch.py.

paddlenlp's RobertaConfig defaults differ from HF's (pad_token_id 0 vs 1, type_vocab_size
16 vs 2, vocab 21128 vs 50265): everything is pinned explicitly on both sides.
PADIFF_BUG (this side only; torch-side names are ignored here):
  paddle_ln_unbiased -> the embeddings LayerNorm is a hand-written one whose variance comes from
                        paddle.var, which defaults to the unbiased (N-1) estimator; LayerNorm
                        uses the biased (N) one
  paddle_scale_d     -> encoder layer 0's self-attention scales the query by 1/head_dim instead
                        of 1/sqrt(head_dim)
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import RobertaConfig, RobertaModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, max_position_embeddings=64, type_vocab_size=1,
    hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    layer_norm_eps=1e-5, initializer_range=0.1, pad_token_id=1,
)


def model():
    paddle.seed(0)
    m = RobertaModel(RobertaConfig(**CONFIG))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_ln_unbiased":
        ln = m.embeddings.layer_norm
        ln.forward = _ln_unbiased_var(ln)
    elif os.environ.get("PADIFF_BUG", "") == "paddle_scale_d":
        sa = m.encoder.layers[0].self_attn
        sa.forward = _self_attn_forward(sa, scale=1.0 / sa.head_dim)  # should be head_dim**-0.5
    return m


def _self_attn_forward(sa, scale=None, softmax_axis=-1):
    """paddle.nn.MultiHeadAttention.forward (no cache, no attention weights) as re-typed by a porter."""
    import paddle.nn.functional as F
    from paddle.nn.layer.transformer import _convert_attention_mask

    def forward(query, key=None, value=None, attn_mask=None, cache=None):
        assert cache is None
        key = query if key is None else key
        value = query if value is None else value
        q, k, v = sa._prepare_qkv(query, key, value, None)
        s = sa.head_dim**-0.5 if scale is None else scale
        product = paddle.matmul(x=q * s, y=k, transpose_y=True)
        if attn_mask is not None:
            product = product + _convert_attention_mask(attn_mask, product.dtype)
        weights = F.softmax(product, axis=softmax_axis)
        out = paddle.matmul(weights, v).transpose([0, 2, 1, 3])
        out = out.reshape([0, 0, out.shape[2] * out.shape[3]])
        return sa.out_proj(out)
    return forward


def _ln_unbiased_var(layer):
    """LayerNorm as a porter wrote it: paddle.var(x) is the unbiased estimator (divides by N-1)."""
    def forward(x):
        mean = x.mean(axis=-1, keepdim=True)
        var = paddle.var(x, axis=-1, keepdim=True)  # unbiased=True by default
        return (x - mean) / paddle.sqrt(var + layer._epsilon) * layer.weight + layer.bias
    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(2, 12)).astype("int64")  # no bos/pad/eos (0, 1, 2)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(mask)}


def loss(output):
    # paddlenlp returns a tuple (sequence_output, pooled_output)
    seq, pooled = output[0], output[1]
    # seq ends in a LayerNorm: the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()
