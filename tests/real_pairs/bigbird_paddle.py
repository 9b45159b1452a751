"""BigBird, paddlenlp side: BigBirdModel, tiny random config, no download.

Twin: bigbird_torch.py (HF BigBirdModel). Both sides use FULL attention so they compute the same
function: paddlenlp attention_type="default_attention", HF attention_type="original_full" (HF
would fall back to original_full anyway for a sequence this short; the block-sparse paths draw
their random blocks with different generators and can never agree).
paddlenlp BigBirdModel ignores attention_mask: it masks the positions where input_ids ==
pad_token_id. The inputs hold no pad id, so neither side masks anything (HF gets no mask).
PADIFF_BUG (this side only):
  paddle_act -> layer 1's feed-forward activation is F.relu instead of F.gelu (the paddlenlp
                config default activation="relu" left in place when porting a gelu checkpoint)
Other bigbird bugs are planted on the torch side.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddlenlp.transformers import BigBirdConfig, BigBirdModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, activation="gelu", hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, dropout=0.0, attn_dropout=0.0, act_dropout=0.0,
    max_position_embeddings=64, type_vocab_size=2, initializer_range=0.1, pad_token_id=0,
    padding_idx=0, layer_norm_eps=1e-12, attention_type="default_attention",
    normalize_before=False, seed=0,
)


def model():
    paddle.seed(0)
    m = BigBirdModel(BigBirdConfig(**CONFIG))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_act":
        m.encoder.layers[1].activation = F.relu
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0): nothing is masked
    types = np.zeros((2, 12), "int64")
    types[:, 6:] = 1
    return ids, types


def inputs():
    ids, types = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "token_type_ids": paddle.to_tensor(types)}


def loss(output):
    # paddlenlp returns a tuple (sequence_output, pooled_output)
    seq, pooled = output[0], output[1]
    # seq ends in a LayerNorm: the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()
