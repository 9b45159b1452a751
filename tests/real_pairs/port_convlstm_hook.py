"""port_convlstm transform outside verify_truth's built-in vocabulary (paddle -> torch).

The paddle cell has ONE `conv` (weight [4*Hd, in + Hd, 3, 3], bias [4*Hd]) over concat([x, h])
whose output channels are the gates in the order (i, f, o, g), Hd channels each. The torch cell
has `conv_x` (weight [4*Hd, in, 3, 3], with the bias) and `conv_h` (weight [4*Hd, Hd, 3, 3], no
bias) whose summed output is chunked in the order (i, f, g, o).

Transform: "paddle gate blocks (i, f, o, g) reordered to (i, f, g, o)[, input channels A:B (x|h part)]"
  blocks = [0, 1, 3, 2] (torch block k takes paddle block blocks[k]), Hd = rows / 4
  torch_array = concat([paddle_array[b*Hd:(b+1)*Hd] for b in blocks])[:, A:B]   (weights)
  torch_array = concat([paddle_array[b*Hd:(b+1)*Hd] for b in blocks])           (bias)
"""
import re

import numpy as np

_GATES = re.compile(r"^paddle gate blocks \(i, f, o, g\) reordered to \(i, f, g, o\)(?:, input channels (\d+):(\d+))?")
_ORDER = (0, 1, 3, 2)


def convert(transform, paddle_array, torch_array):
    m = _GATES.match(transform)
    if m is None:
        return None
    hd = paddle_array.shape[0] // 4
    out = np.concatenate([paddle_array[b * hd : (b + 1) * hd] for b in _ORDER], axis=0)
    if m.group(1) is not None:
        out = out[:, int(m.group(1)) : int(m.group(2))]
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_convlstm hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
