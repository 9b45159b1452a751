"""port_dpn transform: the paddle classifier is an nn.Linear(64, 10) (weight [64, 10], [in, out]);
the torch classifier is a 1x1 nn.Conv2d(64, 10, 1) (weight [10, 64, 1, 1], [out, in, kh, kw]).

Transform: "paddle linear transposed into a 1x1 conv kernel"
  torch_array = paddle_array.T.reshape(out, in, 1, 1)
"""
import numpy as np

_NAME = "paddle linear transposed into a 1x1 conv kernel"


def convert(transform, paddle_array, torch_array):
    if transform != _NAME:
        return None
    out = np.ascontiguousarray(paddle_array.T).reshape(torch_array.shape)
    if out.shape[2:] != (1, 1) or out.shape[:2] != paddle_array.T.shape:
        raise ValueError(f"port_dpn hook: {paddle_array.shape} -> {torch_array.shape}")
    return out
