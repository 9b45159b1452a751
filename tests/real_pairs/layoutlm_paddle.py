"""LayoutLM, paddlenlp side: LayoutLMModel with bbox inputs, tiny random config, no download.

Twin: layoutlm_torch.py (HF LayoutLMModel). The attention mask is passed as int64 0/1 [B, S]:
paddlenlp only unsqueezes a 2-D mask to [B,1,1,S] and hands it to paddle.nn.TransformerEncoder,
whose MultiHeadAttention converts an integer mask to (m - 1) * 1e9 (HF: (1 - m) * float32 min).
PADIFF_BUG (this side only):
  paddle_bbox_hw -> the embeddings compute the box height from the x coordinates and the width
                    from the y coordinates (bbox[..., 2] - bbox[..., 0] fed to h_position_embeddings,
                    bbox[..., 3] - bbox[..., 1] to w_position_embeddings): a coordinate-order slip
Other layoutlm bugs are planted on the torch side.
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import LayoutLMConfig, LayoutLMModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, max_2d_position_embeddings=128,
    type_vocab_size=2, initializer_range=0.1, layer_norm_eps=1e-12, pad_token_id=0,
    pool_act="tanh",
)


def model():
    paddle.seed(0)
    m = LayoutLMModel(LayoutLMConfig(**CONFIG))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_bbox_hw":
        emb = m.embeddings
        object.__setattr__(emb, "forward", _bbox_hw_swapped(emb))
    return m


def _bbox_hw_swapped(emb):
    """LayoutLMEmbeddings.forward with height and width taken from the wrong coordinates."""

    def forward(input_ids, bbox=None, token_type_ids=None, position_ids=None):
        if position_ids is None:
            ones = paddle.ones_like(input_ids, dtype="int64")
            position_ids = paddle.cumsum(ones, axis=-1) - ones
        if token_type_ids is None:
            token_type_ids = paddle.zeros_like(input_ids, dtype="int64")
        e = (
            emb.word_embeddings(input_ids)
            + emb.position_embeddings(position_ids)
            + emb.x_position_embeddings(bbox[:, :, 0])
            + emb.y_position_embeddings(bbox[:, :, 1])
            + emb.x_position_embeddings(bbox[:, :, 2])
            + emb.y_position_embeddings(bbox[:, :, 3])
            + emb.h_position_embeddings(bbox[:, :, 2] - bbox[:, :, 0])  # the bug: width as height
            + emb.w_position_embeddings(bbox[:, :, 3] - bbox[:, :, 1])  # and height as width
            + emb.token_type_embeddings(token_type_ids)
        )
        return emb.dropout(emb.layer_norm(e))

    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    x0 = rng.integers(0, 60, size=(2, 12))
    y0 = rng.integers(0, 60, size=(2, 12))
    w = rng.integers(1, 60, size=(2, 12))
    h = rng.integers(1, 40, size=(2, 12))
    bbox = np.stack([x0, y0, x0 + w, y0 + h], axis=-1).astype("int64")  # [B, S, 4], all < 128
    types = np.zeros((2, 12), "int64")
    types[:, 6:] = 1
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, bbox, types, mask


def inputs():
    ids, bbox, types, mask = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "bbox": paddle.to_tensor(bbox),
        "token_type_ids": paddle.to_tensor(types),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp returns a tuple (sequence_output, pooled_output)
    seq, pooled = output[0], output[1]
    # seq ends in a LayerNorm: the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()
