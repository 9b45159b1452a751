"""port_ghostnet transform: the paddle side computes the squeeze-excite reduce / expand and the
48 -> 64 head as LINEAR layers on the pooled [B, C] vector (weight [in, out]); the torch side uses
1x1 CONVOLUTIONS on the pooled [B, C, 1, 1] map (weight [out, in, 1, 1]).

Transform: "paddle Linear [in, out] transposed to a 1x1 conv kernel [out, in, 1, 1]"
  torch_array = paddle_array.T.reshape(out, in, 1, 1)
"""
import numpy as np

_PREFIX = "paddle Linear [in, out] transposed to a 1x1 conv kernel"


def convert(transform, paddle_array, torch_array):
    if not transform.startswith(_PREFIX):
        return None
    out = np.ascontiguousarray(paddle_array.T).reshape(torch_array.shape)
    if out.shape[2:] != (1, 1) or out.shape[:2] != paddle_array.T.shape:
        raise ValueError(f"port_ghostnet hook: {paddle_array.shape} -> {torch_array.shape}")
    return out
