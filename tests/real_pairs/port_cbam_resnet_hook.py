"""port_cbam_resnet transforms outside verify_truth's vocabulary.

1. "paddle Linear [in, out] transposed to a 1x1 conv kernel [out, in, 1, 1]": the paddle
   ChannelGate MLP is nn.Linear (weight [in, out]); the torch ChannelAttn MLP is nn.Conv2d with
   kernel 1 (weight [out, in, 1, 1]).
   torch_array = paddle_array.T[:, :, None, None]
2. "7x7 kernel input channels swapped (paddle [max, mean] -> torch [mean, max])": the paddle
   SpatialGate pools cat([max, mean]) over channels, the torch SpatialAttn cat([mean, max]), so
   the two input channels of the [1, 2, 7, 7] kernel are exchanged.
   torch_array = paddle_array[:, ::-1]
"""
import numpy as np


def convert(transform, paddle_array, torch_array):
    if transform == "paddle Linear [in, out] transposed to a 1x1 conv kernel [out, in, 1, 1]":
        out = paddle_array.T[:, :, None, None]
    elif transform == "7x7 kernel input channels swapped (paddle [max, mean] -> torch [mean, max])":
        out = paddle_array[:, ::-1]
    else:
        return None
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_cbam_resnet hook: {out.shape} != {torch_array.shape}")
    return out
