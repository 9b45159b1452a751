"""Hand-written port, paddle side: Kim-style multichannel TextCNN sentence classifier (written by "person A").

Input: one positional int64 tensor `input_ids` [2, 12] (numpy rng seed 7, ids 1..49; sentence 1
ends with 3 padding tokens, id 0, and sentence 0 with 1). Output: logits [2, 5].

Shared math (both sides), Kim (2014) "CNN-multichannel":
- two embedding tables of width 16 over a vocabulary of 50: a trainable ("non-static") one and a
  frozen ("static", pretrained) one; both look up every token, including the padding id 0
  (row 0 is an ordinary trained row: no padding_idx semantics in the clean model);
- for each kernel size k in (2, 3, 4): 8 filters spanning k tokens x 16 dims x both tables
  (bias), ReLU, max over the T - k + 1 positions -> 8 features;
- concatenation [2, 24] in kernel order 2, 3, 4, dropout 0.5 (identity in eval),
  Linear(24 -> 5).

Paddle idioms on this side:
- `TextCNN` registers `embedding` (non-static nn.Embedding(50, 16)), `static_embedding`
  (nn.Embedding with weight_attr trainable=False: its weight is a stop_gradient parameter),
  `branches` (LayerList of `ConvBranch`), `dropout` (nn.Dropout(0.5)) and `fc` (Linear(24, 5)).
- the two lookups are stacked as the CHANNELS of an image: [N, 2, T, E], channel 0 = non-static,
  channel 1 = static.
- `ConvBranch(k)` holds one `conv` = nn.Conv2D(2, 8, kernel_size=(k, 16)) that spans the whole
  embedding width -> [N, 8, T - k + 1, 1]; squeeze, F.relu, then paddle.max over time: ReLU
  BEFORE the max, pooling inline in the branch (no pooling module).
- model() gives both tables, the conv biases and the fc bias trained-looking (seeded, non-zero)
  values: paddle initialises Conv2D / Linear biases to zero.

The torch side (port_textcnn_torch.py) was written independently: a Conv1d over [N, 2E, T]
(static and dynamic vectors concatenated along the feature axis, STATIC first), the three
convolutions as separately named attributes of one `MultiKernelConv` module with shared pool and
activation modules, max BEFORE the ReLU.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_padding_idx       -> the non-static table is built with padding_idx=0 (copied from the
                              torch reference, where it only zeroes the init / gradient of row 0);
                              paddle's lookup returns ZEROS for id 0, whatever the row holds
  paddle_dropout_downscale -> nn.Dropout(0.5, mode="downscale_in_infer"): in eval paddle then
                              multiplies by 1 - p = 0.5 (torch's dropout is identity in eval)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, EMB, SEQ, N_CLASSES = 50, 16, 12, 5
KERNELS, N_FILTERS = (2, 3, 4), 8
BATCH = 2
OWN_BUGS = {"paddle_padding_idx", "paddle_dropout_downscale"}
OTHER_BUGS = {"torch_static_fp16", "torch_pool_avg"}


class ConvBranch(nn.Layer):
    def __init__(self, k):
        super().__init__()
        self.conv = nn.Conv2D(2, N_FILTERS, kernel_size=(k, EMB), data_format="NCHW")

    def forward(self, img):  # [N, 2, T, E]
        y = F.relu(self.conv(img).squeeze(3))  # [N, F, T - k + 1]
        return paddle.max(y, axis=2)  # [N, F]


class TextCNN(nn.Layer):
    def __init__(self, padding_idx=None, dropout_mode="upscale_in_train"):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, EMB, padding_idx=padding_idx)
        self.static_embedding = nn.Embedding(VOCAB, EMB, weight_attr=paddle.ParamAttr(trainable=False))
        self.branches = nn.LayerList([ConvBranch(k) for k in KERNELS])
        self.dropout = nn.Dropout(0.5, mode=dropout_mode)
        self.fc = nn.Linear(N_FILTERS * len(KERNELS), N_CLASSES)

    def forward(self, input_ids):
        img = paddle.stack([self.embedding(input_ids), self.static_embedding(input_ids)], axis=1)
        h = paddle.concat([branch(img) for branch in self.branches], axis=1)  # [N, 24]
        return self.fc(self.dropout(h))


def _trained_look(m):
    rng = np.random.default_rng(31)
    m.embedding.weight.set_value(rng.normal(0.0, 0.5, (VOCAB, EMB)).astype("float32"))
    m.static_embedding.weight.set_value(rng.normal(0.0, 0.5, (VOCAB, EMB)).astype("float32"))
    for branch in m.branches:
        branch.conv.bias.set_value(rng.normal(0.0, 0.1, N_FILTERS).astype("float32"))
    m.fc.bias.set_value(rng.normal(0.0, 0.1, N_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_textcnn paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = TextCNN(padding_idx=0 if bug == "paddle_padding_idx" else None,
                dropout_mode="downscale_in_infer" if bug == "paddle_dropout_downscale" else "upscale_in_train")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(7)
    ids = rng.integers(1, VOCAB, (BATCH, SEQ)).astype("int64")
    ids[0, -1:] = 0
    ids[1, -3:] = 0
    return ids


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 5]
    return (output**2).mean()
