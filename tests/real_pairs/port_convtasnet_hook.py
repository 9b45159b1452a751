"""port_convtasnet transform: the paddle decoder is an nn.Conv1DTranspose(16, 1, 8, stride=4)
whose weight is [in_channels, out_channels, kernel] = [16, 1, 8]; the torch decoder is a Linear
basis `basis_signals` nn.Linear(16, 8, bias=False) (weight [out, in] = [8, 16]) followed by an
overlap-add with hop 4. Frame k of the transposed conv adds sum_n x[n, k] * W[n, 0, l] at sample
4k + l, which is the Linear's output l for frame k when its weight is W[:, 0, :].T.

Transform: "paddle conv-transpose kernel [N, 1, L] squeezed to [N, L] and transposed (Linear basis [L, N])"
  torch_array = paddle_array[:, 0, :].T
"""
import re

import numpy as np

_DECONV = re.compile(r"^paddle conv-transpose kernel \[(\d+), 1, (\d+)\] squeezed to \[\d+, \d+\] and transposed")


def convert(transform, paddle_array, torch_array):
    m = _DECONV.match(transform)
    if m is None:
        return None
    n, k = int(m.group(1)), int(m.group(2))
    if paddle_array.shape != (n, 1, k):
        raise ValueError(f"port_convtasnet hook: paddle kernel {paddle_array.shape} != {(n, 1, k)}")
    out = np.ascontiguousarray(paddle_array[:, 0, :].T)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_convtasnet hook: {out.shape} != {torch_array.shape}")
    return out
