"""port_weightnorm_convlm transform: the paddle side has TWO weight-normalised convolutions per
block (`conv_value`, `conv_gate`, Conv1D(24, 24, 3) under paddle.nn.utils.weight_norm, dim 0),
whose magnitude `weight_g` is a flat vector [24]; the torch side has ONE fused Conv1d(24, 48, 3)
under torch.nn.utils.parametrizations.weight_norm (dim 0), whose magnitude
`parametrizations.weight.original0` is [48, 1, 1] (value half rows 0:24, gate half rows 24:48).

Transform: "paddle weight-norm g [N] into torch g rows A:B, keepdim"
  torch_array[A:B] = paddle_array.reshape(torch_array[A:B].shape)
(The directions v / weight_v are plain "torch rows A:B ..." slices of the built-in vocabulary.)
"""
import re

_G = re.compile(r"^paddle weight-norm g \[(\d+)\] into torch g rows (\d+):(\d+), keepdim$")


def convert(transform, paddle_array, torch_array):
    m = _G.match(transform)
    if m is None:
        return None
    n, a, b = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if paddle_array.shape != (n,) or b - a != n:
        raise ValueError(f"port_weightnorm_convlm hook: {transform!r} on paddle {paddle_array.shape}")
    out = torch_array.copy()
    out[a:b] = paddle_array.reshape(out[a:b].shape)
    return out
