"""RoBERTa, paddlenlp side: tiny random config, no download. Twin: roberta_torch.py.

paddlenlp's RobertaConfig defaults differ from HF's (pad_token_id 0 vs 1, type_vocab_size
16 vs 2, vocab 21128 vs 50265): everything is pinned explicitly on both sides.
"""
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
    return m


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
