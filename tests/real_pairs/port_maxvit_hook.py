"""port_maxvit transform: the paddle side keeps each relative position bias table Swin-style,
[(2P-1)^2, heads] (row (dh + P-1) * (2P-1) + (dw + P-1), one column per head); the torch side
keeps it TF-style, [heads, 2P-1, 2P-1] (indexed [head, dh + P-1, dw + P-1]).

Transform: "paddle [(2P-1)^2, heads] bias table, transposed and reshaped to [heads, 2P-1, 2P-1]"
  torch_array = paddle_array.T.reshape(torch_array.shape)
"""
import numpy as np

_TABLE = "paddle [(2P-1)^2, heads] bias table, transposed and reshaped to [heads, 2P-1, 2P-1]"


def convert(transform, paddle_array, torch_array):
    if transform != _TABLE:
        return None
    heads, a, b = torch_array.shape
    if paddle_array.shape != (a * b, heads):
        raise ValueError(f"port_maxvit hook: {paddle_array.shape} does not fit {torch_array.shape}")
    return np.ascontiguousarray(paddle_array.T.reshape(heads, a, b))
