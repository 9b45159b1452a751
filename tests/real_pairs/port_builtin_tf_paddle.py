"""Hand-written port, paddle side: a tiny text classifier on paddle's BUILT-IN transformer layers
(written by "person A").

    position_embeddings (learned, 16 x 32; registered first) + word_embeddings (50 x 32, pad id 0),
        both initialised Normal(0, 0.1)
    position ids from a non-persistable buffer `position_ids` [1, 16] (BERT style)
    encoder = paddle.nn.TransformerEncoder(
        paddle.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu",
                                          normalize_before=True), 2,
        norm=paddle.nn.LayerNorm(32))
        inside: paddle.nn.MultiHeadAttention with SEPARATE q_proj / k_proj / v_proj / out_proj
        Linears (weights [in, out]); its layers 1.. are re-built from the config (own init)
    masked mean pooling over the real tokens (inline), pooler (Linear 32->32) + activation (nn.Tanh),
    classifier (Linear 32->5)

Input: input_ids [2, 10] int64, right-padded with 0 (lengths 8 and 5). Output: logits [2, 5].

MASK CONVENTION (paddle): the encoder's `src_mask` is broadcast to [B, heads, T, T]; a bool mask
means True = ATTEND (keep), False = masked out (an int mask: 0 = masked; a float mask is
additive, -inf = masked). This side passes `(input_ids != 0)` as a bool [B, 1, 1, T] keep-mask.
The torch side (port_builtin_tf_torch.py) passes torch's `src_key_padding_mask`, where a bool
True means IGNORE: the opposite polarity.

PADIFF_BUG=paddle_mask_inverted plants this side's bug: the porter builds the mask the torch way,
`input_ids == 0` (True at the pads), and hands it to paddle, which reads True as "attend": every
query attends to the pad keys only.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, MAX_POS, D_MODEL, HEADS, FFN, LAYERS, CLASSES = 50, 16, 32, 4, 64, 2, 5
BATCH, SEQ, PAD = 2, 10, 0
LENGTHS = (8, 5)
LABELS = (3, 1)

OWN_BUGS = ("paddle_mask_inverted",)
OTHER_BUGS = ("ffn_relu", "torch_ln_eps")


class TextClassifier(nn.Layer):
    def __init__(self, mask_inverted=False):
        super().__init__()
        self.mask_inverted = mask_inverted
        init = nn.initializer.Normal(std=0.1)  # paddle still zeroes the padding_idx row
        self.position_embeddings = nn.Embedding(MAX_POS, D_MODEL, weight_attr=init)
        self.word_embeddings = nn.Embedding(VOCAB, D_MODEL, padding_idx=PAD, weight_attr=init)
        self.register_buffer(
            "position_ids", paddle.arange(MAX_POS, dtype="int64").unsqueeze(0), persistable=False
        )
        layer = nn.TransformerEncoderLayer(
            D_MODEL, HEADS, FFN, dropout=0.0, activation="gelu", normalize_before=True
        )
        self.encoder = nn.TransformerEncoder(layer, LAYERS, norm=nn.LayerNorm(D_MODEL))
        self.pooler = nn.Linear(D_MODEL, D_MODEL)
        self.activation = nn.Tanh()
        self.classifier = nn.Linear(D_MODEL, CLASSES)

    def forward(self, input_ids):
        seq = input_ids.shape[1]
        h = self.word_embeddings(input_ids) + self.position_embeddings(self.position_ids[:, :seq])
        keep = input_ids != PAD  # [B, T] bool, True = real token
        if self.mask_inverted:
            src_mask = (input_ids == PAD).unsqueeze([1, 2])  # torch polarity handed to paddle
        else:
            src_mask = keep.unsqueeze([1, 2])  # [B, 1, 1, T], True = attend
        h = self.encoder(h, src_mask=src_mask)
        w = keep.astype(h.dtype).unsqueeze(-1)
        pooled = (h * w).sum(axis=1) / w.sum(axis=1)
        return self.classifier(self.activation(self.pooler(pooled)))


def model():
    paddle.seed(0)
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS + OTHER_BUGS:
        raise ValueError(f"port_builtin_tf: unknown PADIFF_BUG {bug!r}")
    m = TextClassifier(mask_inverted=bug == "paddle_mask_inverted")
    m.eval()
    return m


def _arrays():
    rng = np.random.default_rng(19)
    ids = rng.integers(1, VOCAB, size=(BATCH, SEQ)).astype("int64")
    for b, n in enumerate(LENGTHS):
        ids[b, n:] = PAD
    return ids


def inputs():
    return (paddle.to_tensor(_arrays()),), {}


def loss(output):
    # cross entropy of the [B, 5] logits against fixed labels
    return F.cross_entropy(output, paddle.to_tensor(np.array(LABELS, dtype="int64")))
