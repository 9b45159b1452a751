"""port_longformer_local transforms outside verify_truth's built-in vocabulary.

The paddle side packs its LOCAL projections into ONE `qkv` nn.Linear(32, 96) (weight [32, 96],
[in, out]; output columns [q | k | v], head-major inside each part); the torch side has separate
`query` / `key` / `value` nn.Linear(32, 32) (weight [out, in]). Each torch tensor takes a slice
of the packed paddle tensor:
  "paddle columns A:B of the packed qkv, transposed"  ->  paddle_array[:, A:B].T   (weights)
  "paddle elements A:B of the packed qkv bias"        ->  paddle_array[A:B]        (biases)

(The other direction, paddle's separate global projections into torch's packed `qkv_global`,
is verify_truth's built-in "torch rows A:B ..." / "torch elements A:B ..." vocabulary.)
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+) of the packed qkv, transposed$")
_ELEMS = re.compile(r"^paddle elements (\d+):(\d+) of the packed qkv bias$")


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m is not None:
        out = paddle_array[:, int(m.group(1)):int(m.group(2))].T
    else:
        m = _ELEMS.match(transform)
        if m is None:
            return None
        out = paddle_array[int(m.group(1)):int(m.group(2))]
    if out.shape != torch_array.shape:
        raise ValueError(f"port_longformer_local hook: {out.shape} != {torch_array.shape}")
    return np.ascontiguousarray(out)
