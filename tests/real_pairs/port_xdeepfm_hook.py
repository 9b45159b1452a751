"""port_xdeepfm transforms outside verify_truth's built-in vocabulary.

1. The paddle side keeps ONE shared embedding table (and one shared first-order table) for all
   fields, rows offset per field; the torch side has one table per field. Each torch table takes
   a row slice of the paddle table:
     "paddle rows A:B of the shared table (field Cn)"  ->  paddle_array[A:B]

2. The paddle CIN compresses with nn.Conv1D(F*H, O, 1): weight [O, F*H, 1], input channel
   f*H + h (x0 field f, previous-layer map h). The torch CIN contracts with a weight [H, F, O]
   (einsum "bhd,bmd,hmo->bod"):
     "paddle conv1d kernel [O, F*H, 1] as [O, F, H], permuted to [H, F, O]"
       -> paddle_array[:, :, 0].reshape(O, F, H).transpose(2, 1, 0)
   Layer 0 is split in half, and the two porters follow different conventions: paddle's FIRST
   half of the maps is the direct connection (pytorch-fm), torch's FIRST half is the next hidden
   layer (DeepCTR). So layer 0's output maps swap halves:
     "..., output halves swapped"                -> the same, then the O axis rolled by O / 2
     "paddle elements with output halves swapped" (the conv bias [O]) -> roll by O / 2
"""
import re

import numpy as np

_ROWS = re.compile(r"^paddle rows (\d+):(\d+) of the shared table")
_KERNEL = "paddle conv1d kernel [O, F*H, 1] as [O, F, H], permuted to [H, F, O]"
_BIAS_SWAP = "paddle elements with output halves swapped"


def _check(out, torch_array):
    if out.shape != torch_array.shape:
        raise ValueError(f"port_xdeepfm hook: {out.shape} != {torch_array.shape}")
    return np.ascontiguousarray(out)


def convert(transform, paddle_array, torch_array):
    m = _ROWS.match(transform)
    if m is not None:
        return _check(paddle_array[int(m.group(1)):int(m.group(2))], torch_array)
    if transform.startswith(_KERNEL):
        h, f, o = torch_array.shape
        out = paddle_array[:, :, 0].reshape(o, f, h).transpose(2, 1, 0)
        if transform.endswith("output halves swapped"):
            out = np.roll(out, o // 2, axis=2)
        return _check(out, torch_array)
    if transform == _BIAS_SWAP:
        return _check(np.roll(paddle_array, paddle_array.shape[0] // 2), torch_array)
    return None
