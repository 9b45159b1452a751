"""ConvBERT generator (masked LM), paddlenlp side: tiny random config, no download.

Twin: convbert_torch.py (HF ConvBertForMaskedLM). Mixed attention: 2 self-attention heads of 8
plus a span-based dynamic convolution (head_ratio 2, kernel 3); grouped feed-forward
(num_groups 2: GroupedLinear); embedding_size 16 -> embeddings_project.
paddlenlp's ConvBertModel always has a pooler; HF ConvBERT has none. Its output is not part of
the MLM output: its parameters are frozen here and listed as paddle-only ("derived").
PADIFF_BUG (this side only):
  paddle_conv_pad -> layer 0's dynamic-convolution padding is K-1 instead of (K-1)//2 on each
                     side, so every convolution window is shifted one token to the left
Other convbert bugs are planted on the torch side.
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import ConvBertConfig, ConvBertGenerator

CONFIG = dict(
    vocab_size=1000, embedding_size=16, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, layer_norm_eps=1e-12, pad_token_id=0, conv_kernel_size=3,
    head_ratio=2, num_groups=2, tie_word_embeddings=True,
)


def model():
    paddle.seed(0)
    m = ConvBertGenerator(ConvBertConfig(**CONFIG))
    m.eval()
    for p in m.convbert.pooler.parameters():  # paddle-only module, unused by the MLM output
        p.stop_gradient = True
    if os.environ.get("PADIFF_BUG", "") == "paddle_conv_pad":
        att = m.convbert.encoder.layers[0].self_attn
        # MultiHeadAttentionWithConv pads conv_out_layer by `padding` on both sides and takes K
        # windows of seqlen: padding K-1 (= 2) instead of (K-1)//2 (= 1) shifts every window by one
        # position to the left ([t-2, t] instead of [t-1, t+1]); shapes stay the same
        att.padding = att.conv_kernel_size - 1
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types = np.zeros((2, 12), "int64")
    types[:, 6:] = 1
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, types, mask


def inputs():
    ids, types, mask = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp ConvBertGenerator returns (prediction_scores, pooled_output)
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()
