"""port_dla transform: the paddle classifier is an nn.Linear(32, 10) with weight [in, out]; the
torch classifier is dla.py's 1x1 conv nn.Conv2d(32, 10, 1) with weight [out, in, 1, 1].

Transform: "paddle Linear weight [in, out] to a 1x1 conv weight [out, in, 1, 1]"
  torch_array = paddle_array.T.reshape(out, in, 1, 1)
"""
import numpy as np

_FC = "paddle Linear weight [in, out] to a 1x1 conv weight [out, in, 1, 1]"


def convert(transform, paddle_array, torch_array):
    if transform != _FC:
        return None
    out = np.ascontiguousarray(paddle_array.T).reshape(torch_array.shape)
    if paddle_array.shape != (torch_array.shape[1], torch_array.shape[0]):
        raise ValueError(f"port_dla hook: {paddle_array.shape} vs {torch_array.shape}")
    return out
