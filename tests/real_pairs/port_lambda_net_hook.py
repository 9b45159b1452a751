"""port_lambda_net transform: the relative position embedding table is [R, R, k, u] on the paddle
side (`rel_pos_emb`, R = 2n - 1 offsets along rows, then columns) and [k, u, R, R] on the torch
side (`rel_emb`).

Transform: "paddle [R, R, k, u] table to torch [k, u, R, R]"
  torch_array = paddle_array.transpose(2, 3, 0, 1)
"""
import numpy as np

_RELPOS = "paddle [R, R, k, u] table to torch [k, u, R, R]"


def convert(transform, paddle_array, torch_array):
    if transform != _RELPOS:
        return None
    out = np.ascontiguousarray(paddle_array.transpose(2, 3, 0, 1))
    if out.shape != torch_array.shape:
        raise ValueError(f"port_lambda_net hook: {out.shape} != {torch_array.shape}")
    return out
