"""port_dgcnn transform: the paddle side's shared point / edge layers are nn.Linear (weight
[in, out], applied to channels-last maps); the torch side's are 1x1 convolutions (nn.Conv2d
weight [out, in, 1, 1] on the [B, 2C, N, k] edge map, nn.Conv1d weight [out, in, 1] on [B, C, N]).

Transform: "transpose, then reshape to the torch 1x1 conv kernel [out, in, 1(, 1)]"
  torch_array = paddle_array.T.reshape(torch_array.shape)
"""
import numpy as np

_KERNEL = "transpose, then reshape to the torch 1x1 conv kernel"


def convert(transform, paddle_array, torch_array):
    if not transform.startswith(_KERNEL):
        return None
    out = np.ascontiguousarray(paddle_array.T)
    if out.size != torch_array.size or out.shape != tuple(torch_array.shape[:2]):
        raise ValueError(f"port_dgcnn hook: {paddle_array.shape} -> {torch_array.shape}")
    return out.reshape(torch_array.shape)
