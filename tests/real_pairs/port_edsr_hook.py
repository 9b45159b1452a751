"""port_edsr transform: the paddle up-conv feeds nn.PixelShuffle(r), which reads output channel
c, sub-pixel (i, j) from conv channel c * r * r + i * r + j (CRD order); the torch up-conv feeds a
hand-written TF-style depth-to-space, which reads it from conv channel (i * r + j) * C + c (DCR
order). So the torch conv's output channels (weight [out, in, kh, kw] axis 0, bias axis 0) are the
paddle conv's permuted:

Transform: "pixel-shuffle CRD -> depth-to-space DCR output channels, r R, C N"
  torch_array[(i * R + j) * N + c] = paddle_array[c * R * R + i * R + j]
"""
import re

import numpy as np

_D2S = re.compile(r"^pixel-shuffle CRD -> depth-to-space DCR output channels, r (\d+), C (\d+)$")


def crd_index_for_dcr(r, c_out):
    """idx[k_torch] = k_paddle."""
    idx = np.empty(r * r * c_out, dtype=np.int64)
    for i in range(r):
        for j in range(r):
            for c in range(c_out):
                idx[(i * r + j) * c_out + c] = c * r * r + i * r + j
    return idx


def convert(transform, paddle_array, torch_array):
    m = _D2S.match(transform)
    if m is None:
        return None
    r, c_out = int(m.group(1)), int(m.group(2))
    out = np.ascontiguousarray(paddle_array[crd_index_for_dcr(r, c_out)])
    if out.shape != torch_array.shape:
        raise ValueError(f"port_edsr hook: {out.shape} != {torch_array.shape}")
    return out
