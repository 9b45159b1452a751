"""port_fastspeech_fft transform: the paddle FFN's kernel-1 second layer is an nn.Linear (weight
[in, out] = [64, 32]); the torch side's is an nn.Conv1d(64, 32, kernel_size=1) (weight
[out, in, 1] = [32, 64, 1]).

Transform: "paddle linear [in, out] as torch conv1d kernel-1 weight [out, in, 1]"
  torch_array = paddle_array.T.reshape(torch_array.shape)
"""
import numpy as np


def convert(transform, paddle_array, torch_array):
    if transform != "paddle linear [in, out] as torch conv1d kernel-1 weight [out, in, 1]":
        return None
    out = np.ascontiguousarray(paddle_array.T.reshape(torch_array.shape))
    return out
