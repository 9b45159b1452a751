"""port_dcnv2 transforms outside verify_truth's vocabulary.

The paddle side concatenates x0 as sparse | dense (4 fields x 4 embedding dims = paddle features
0:16, then the 6 dense features = paddle 16:22); the torch side as dense | sparse (dense = torch
0:6, embeddings = torch 6:22). Torch feature j is paddle feature PERM[j], PERM = [16..21, 0..15].

  "paddle table rows A:B (field F)"                         torch = paddle[A:B]
  "paddle stacked cross kernel, layer I, feature axes reordered sparse|dense -> dense|sparse, transposed"
                                                            torch = paddle[I][PERM][:, PERM].T
  "paddle stacked cross bias, layer I, reordered sparse|dense -> dense|sparse"
                                                            torch = paddle[I][PERM]
  "paddle input rows 0:22 reordered sparse|dense -> dense|sparse, transposed"
                                                            torch = paddle[PERM + rest].T
"""
import re

import numpy as np

N_DENSE, N_SPARSE = 6, 16
PERM = np.array(list(range(N_SPARSE, N_SPARSE + N_DENSE)) + list(range(N_SPARSE)))

_ROWS = re.compile(r"^paddle table rows (\d+):(\d+) \(field \d+\)$")
_KERNEL = re.compile(r"^paddle stacked cross kernel, layer (\d+), feature axes reordered sparse\|dense -> dense\|sparse, transposed$")
_BIAS = re.compile(r"^paddle stacked cross bias, layer (\d+), reordered sparse\|dense -> dense\|sparse$")
_INPUT = re.compile(r"^paddle input rows 0:22 reordered sparse\|dense -> dense\|sparse, transposed$")


def convert(transform, paddle_array, torch_array):
    out = None
    if m := _ROWS.match(transform):
        out = paddle_array[int(m.group(1)):int(m.group(2))]
    elif m := _KERNEL.match(transform):
        out = paddle_array[int(m.group(1))][PERM][:, PERM].T
    elif m := _BIAS.match(transform):
        out = paddle_array[int(m.group(1))][PERM]
    elif _INPUT.match(transform):
        rows = np.concatenate([PERM, np.arange(len(PERM), paddle_array.shape[0])])
        out = paddle_array[rows].T
    if out is None:
        return None
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_dcnv2 hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
