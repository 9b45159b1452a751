"""Matching primitives shared by the analyzer and the recorder's ``--weights-from``.

numpy only. Three things live here:

* ``canonical_type`` / ``types_equivalent``: which paddle layer class is which
  torch module class (``Conv2D`` ~ ``Conv2d``, ``SimpleRNN`` ~ ``RNN``...). The
  table is data (``EQUIVALENT_TYPES``); a class name found nowhere in it is a
  user-defined class, for which equivalence is unknown (``None``).
* ``align``: global sequence alignment (Needleman-Wunsch, gaps free) of two
  sequences given a pairwise score matrix, as diff tools do.
"""

from __future__ import annotations

import numpy as np

__all__ = ["EQUIVALENT_TYPES", "canonical_type", "types_equivalent", "is_known_type", "align"]

# Each entry: canonical name -> the class names (any case) of both frameworks that
# denote it. A canonical name is the lower-cased torch spelling.
EQUIVALENT_TYPES: dict[str, tuple[str, ...]] = {
    "linear": ("Linear", "NonDynamicallyQuantizableLinear"),  # torch MHA out_proj
    "bilinear": ("Bilinear",),
    "conv1d": ("Conv1d", "Conv1D"),
    "conv2d": ("Conv2d", "Conv2D"),
    "conv3d": ("Conv3d", "Conv3D"),
    "convtranspose1d": ("ConvTranspose1d", "Conv1DTranspose"),
    "convtranspose2d": ("ConvTranspose2d", "Conv2DTranspose"),
    "convtranspose3d": ("ConvTranspose3d", "Conv3DTranspose"),
    "batchnorm": ("BatchNorm",),  # paddle's rank-generic BatchNorm: equivalent to all three
    "batchnorm1d": ("BatchNorm1d", "BatchNorm1D"),
    "batchnorm2d": ("BatchNorm2d", "BatchNorm2D"),
    "batchnorm3d": ("BatchNorm3d", "BatchNorm3D"),
    "syncbatchnorm": ("SyncBatchNorm",),
    "layernorm": ("LayerNorm",),
    "rmsnorm": ("RMSNorm",),
    "groupnorm": ("GroupNorm",),
    "instancenorm1d": ("InstanceNorm1d", "InstanceNorm1D"),
    "instancenorm2d": ("InstanceNorm2d", "InstanceNorm2D"),
    "instancenorm3d": ("InstanceNorm3d", "InstanceNorm3D"),
    "localresponsenorm": ("LocalResponseNorm",),
    "embedding": ("Embedding",),
    "lstm": ("LSTM",),
    "gru": ("GRU",),
    "rnn": ("RNN", "SimpleRNN"),
    "lstmcell": ("LSTMCell",),
    "grucell": ("GRUCell",),
    "rnncell": ("RNNCell", "SimpleRNNCell"),
    "multiheadattention": ("MultiheadAttention", "MultiHeadAttention"),
    "transformerencoder": ("TransformerEncoder",),
    "transformerencoderlayer": ("TransformerEncoderLayer",),
    "transformerdecoder": ("TransformerDecoder",),
    "transformerdecoderlayer": ("TransformerDecoderLayer",),
    "transformer": ("Transformer",),
    "relu": ("ReLU",),
    "relu6": ("ReLU6",),
    "gelu": ("GELU",),
    "sigmoid": ("Sigmoid",),
    "logsigmoid": ("LogSigmoid",),
    "tanh": ("Tanh",),
    "softmax": ("Softmax",),
    "logsoftmax": ("LogSoftmax",),
    "softplus": ("Softplus",),
    "softsign": ("Softsign",),
    "silu": ("SiLU", "Silu", "Swish"),
    "mish": ("Mish",),
    "elu": ("ELU",),
    "selu": ("SELU",),
    "celu": ("CELU",),
    "glu": ("GLU",),
    "prelu": ("PReLU",),
    "leakyrelu": ("LeakyReLU",),
    "hardswish": ("Hardswish",),
    "hardsigmoid": ("Hardsigmoid",),
    "hardtanh": ("Hardtanh",),
    "hardshrink": ("Hardshrink",),
    "softshrink": ("Softshrink",),
    "tanhshrink": ("Tanhshrink",),
    "threshold": ("Threshold", "ThresholdedReLU"),
    "dropout": ("Dropout",),
    "dropout1d": ("Dropout1d", "Dropout1D"),
    "dropout2d": ("Dropout2d", "Dropout2D"),
    "dropout3d": ("Dropout3d", "Dropout3D"),
    "alphadropout": ("AlphaDropout",),
    "identity": ("Identity",),
    "flatten": ("Flatten",),
    "unflatten": ("Unflatten",),
    "maxpool1d": ("MaxPool1d", "MaxPool1D"),
    "maxpool2d": ("MaxPool2d", "MaxPool2D"),
    "maxpool3d": ("MaxPool3d", "MaxPool3D"),
    "avgpool1d": ("AvgPool1d", "AvgPool1D"),
    "avgpool2d": ("AvgPool2d", "AvgPool2D"),
    "avgpool3d": ("AvgPool3d", "AvgPool3D"),
    "adaptiveavgpool1d": ("AdaptiveAvgPool1d", "AdaptiveAvgPool1D"),
    "adaptiveavgpool2d": ("AdaptiveAvgPool2d", "AdaptiveAvgPool2D"),
    "adaptiveavgpool3d": ("AdaptiveAvgPool3d", "AdaptiveAvgPool3D"),
    "adaptivemaxpool1d": ("AdaptiveMaxPool1d", "AdaptiveMaxPool1D"),
    "adaptivemaxpool2d": ("AdaptiveMaxPool2d", "AdaptiveMaxPool2D"),
    "adaptivemaxpool3d": ("AdaptiveMaxPool3d", "AdaptiveMaxPool3D"),
    "upsample": ("Upsample",),
    "upsamplingnearest2d": ("UpsamplingNearest2d", "UpsamplingNearest2D"),
    "upsamplingbilinear2d": ("UpsamplingBilinear2d", "UpsamplingBilinear2D"),
    "pixelshuffle": ("PixelShuffle",),
    "pixelunshuffle": ("PixelUnshuffle",),
    "zeropad2d": ("ZeroPad2d", "ZeroPad2D"),
    "unfold": ("Unfold",),
    "fold": ("Fold",),
    "cosinesimilarity": ("CosineSimilarity",),
    "pairwisedistance": ("PairwiseDistance",),
    "sequential": ("Sequential",),
    "crossentropyloss": ("CrossEntropyLoss",),
    "mseloss": ("MSELoss",),
    "l1loss": ("L1Loss",),
    "nllloss": ("NLLLoss",),
    "bceloss": ("BCELoss",),
    "bcewithlogitsloss": ("BCEWithLogitsLoss",),
    "smoothl1loss": ("SmoothL1Loss",),
    "kldivloss": ("KLDivLoss",),
}

# Canonical names that are equivalent although spelled differently (generic vs ranked).
_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"batchnorm", "batchnorm1d", "batchnorm2d", "batchnorm3d"}),
)

_CANON: dict[str, str] = {alias.lower(): canon for canon, names in EQUIVALENT_TYPES.items() for alias in names}
_GROUP_OF: dict[str, frozenset[str]] = {c: g for g in _GROUPS for c in g}


def canonical_type(type_name: str) -> str:
    """The framework-neutral name of a layer class: ``Conv2D``/``Conv2d`` -> ``conv2d``.

    Known classes map through ``EQUIVALENT_TYPES``; any other name is lower-cased.
    """
    key = type_name.strip().lower()
    return _CANON.get(key, key)


def is_known_type(type_name: str) -> bool:
    """Whether ``type_name`` is a built-in layer class of paddle or torch we know."""
    return type_name.strip().lower() in _CANON


def types_equivalent(a: str, b: str) -> bool | None:
    """True/False for two known framework layer classes; None if either is user-defined."""
    if not (is_known_type(a) and is_known_type(b)):
        return None
    ca, cb = canonical_type(a), canonical_type(b)
    if ca == cb:
        return True
    group = _GROUP_OF.get(ca)
    return group is not None and cb in group


# traceback codes
_UP, _DIAG, _LEFT = 0, 1, 2


def align(score: np.ndarray) -> list[tuple[int, int]]:
    """Monotone pairs ``(i, j)`` maximising the summed ``score[i, j]``; gaps cost nothing.

    Global sequence alignment (Needleman-Wunsch with zero gap cost, i.e. a
    maximum-weight common subsequence). Only pairs with ``score > 0`` may match;
    NaN counts as no match. Rows are vectorised: O(n*m) time in numpy, an int8
    traceback of n*m bytes. Ties prefer matching, then the earlier ``j``.
    """
    s = np.asarray(score)
    if s.ndim != 2:
        raise ValueError(f"align: score must be 2-D, got shape {s.shape}")
    n, m = s.shape
    if n == 0 or m == 0:
        return []
    back = np.empty((n, m), dtype=np.int8)
    prev = np.zeros(m + 1)
    row = np.empty(m + 1)
    for i in range(n):
        up = prev[1:]
        srow = s[i].astype(np.float64)
        diag = prev[:-1] + np.where(srow > 0, srow, -np.inf)  # NaN > 0 is False: no match
        best = np.maximum(up, diag)
        row[0] = 0.0
        row[1:] = best
        np.maximum.accumulate(row, out=row)
        code = np.where(diag >= up, _DIAG, _UP).astype(np.int8)
        code[row[1:] > best] = _LEFT
        back[i] = code
        prev, row = row, prev
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0 and j > 0:
        c = back[i - 1, j - 1]
        if c == _DIAG:
            pairs.append((i - 1, j - 1))
            i -= 1
            j -= 1
        elif c == _UP:
            i -= 1
        else:
            j -= 1
    pairs.reverse()
    return pairs
