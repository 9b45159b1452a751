"""port_videomae transform: the paddle side embeds the tubelets with a Conv3D whose weight is
[O, C, kt, kh, kw] (paddle NCDHW layout); the torch side flattens each tubelet CHANNELS-LAST, in
(kt, kh, kw, C) order, and projects it with a Linear whose weight is [O, kt*kh*kw*C].

Transform: "paddle conv3d [O, C, kt, kh, kw] to torch linear [O, kt*kh*kw*C], channels last"
  torch_array = paddle_array.transpose(0, 2, 3, 4, 1).reshape(O, -1)
"""
import numpy as np

TRANSFORM = "paddle conv3d [O, C, kt, kh, kw] to torch linear [O, kt*kh*kw*C], channels last"


def convert(transform, paddle_array, torch_array):
    if transform != TRANSFORM:
        return None
    out = np.ascontiguousarray(paddle_array.transpose(0, 2, 3, 4, 1).reshape(paddle_array.shape[0], -1))
    if out.shape != torch_array.shape:
        raise ValueError(f"port_videomae hook: {out.shape} != {torch_array.shape}")
    return out
