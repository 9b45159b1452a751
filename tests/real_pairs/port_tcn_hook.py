"""port_tcn transform: the paddle side has ONE dilated Conv1D per block with 2C = 32 output
channels (rows 0:16 = the tanh filter half, rows 16:32 = the sigmoid gate half: paddle.chunk on the
channel axis); the torch side has two Conv1d of 16 channels, `conv_filter` and `conv_gate`, whose
weights are under torch.nn.utils.parametrizations.weight_norm(dim=0):
weight = original0 * original1 / ||original1||, the norm per output channel over dims 1 and 2,
original0 (g) [16, 1, 1], original1 (v) [16, 16, 3].

  "paddle rows A:B ..."                -> paddle_array[A:B] as is (a weight slice goes to
                                          original1 = v, a bias slice to the conv's bias)
  "weight_norm g of paddle rows A:B ..." -> the per-output-channel L2 norm of paddle_array[A:B]
                                          over dims 1 and 2, shaped [B-A, 1, 1]

With g = ||v|| and v = W, g * v / ||v|| == W (up to fp32 rounding)."""
import re

import numpy as np

_ROWS = re.compile(r"^(weight_norm g of )?paddle rows (\d+):(\d+)")


def convert(transform, paddle_array, torch_array):
    m = _ROWS.match(transform)
    if m is None:
        return None
    a, b = int(m.group(2)), int(m.group(3))
    part = paddle_array[a:b]
    if m.group(1):
        g = np.sqrt((part.astype(np.float64) ** 2).sum(axis=(1, 2)))
        return g.reshape(torch_array.shape).astype(torch_array.dtype)
    return np.ascontiguousarray(part).reshape(torch_array.shape)
