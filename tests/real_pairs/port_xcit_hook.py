"""port_xcit transform: the paddle XCA keeps the per-head temperature as a plain multiplier,
`temperature` [heads, 1, 1]; the torch side keeps it in log space, `log_temp` [heads], and
multiplies the scores by log_temp.exp().

Transform: "log of paddle temperature [H, 1, 1], flattened to [H]"
  torch_array = log(paddle_array).reshape(H)
(The gradients then relate by the chain rule: d/d log_temp = temperature * d/d temperature.)
"""
import re

import numpy as np

_LOG = re.compile(r"^log of paddle temperature \[(\d+), 1, 1\], flattened to \[(\d+)\]$")


def convert(transform, paddle_array, torch_array):
    m = _LOG.match(transform)
    if m is None:
        return None
    if paddle_array.shape != (int(m.group(1)), 1, 1) or (paddle_array <= 0).any():
        raise ValueError(f"port_xcit hook: bad temperature {paddle_array.shape} / {paddle_array.ravel()}")
    out = np.log(paddle_array.astype(np.float64)).astype(np.float32).reshape(torch_array.shape)
    return np.ascontiguousarray(out)
