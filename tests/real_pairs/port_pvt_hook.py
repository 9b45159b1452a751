"""port_pvt transform: the paddle side keeps each stage's position embedding in TOKEN layout
[1, N, C] (N = H * W tokens, row-major over the grid); the torch side keeps it in GRID layout
[1, C, H, W] and flattens it (flatten(2).transpose(1, 2)) before adding it to the tokens.

Transform: "paddle tokens [1, N, C] to torch grid [1, C, H, W]"
  torch_array = paddle_array.reshape(1, H, W, C).transpose(0, 3, 1, 2)   (H, W, C from torch)
"""
import numpy as np

_TOKENS_TO_GRID = "paddle tokens [1, N, C] to torch grid [1, C, H, W]"


def convert(transform, paddle_array, torch_array):
    if transform != _TOKENS_TO_GRID:
        return None
    _, c, h, w = torch_array.shape
    if paddle_array.shape != (1, h * w, c):
        raise ValueError(f"port_pvt hook: {paddle_array.shape} does not fit {torch_array.shape}")
    return np.ascontiguousarray(paddle_array.reshape(1, h, w, c).transpose(0, 3, 1, 2))
