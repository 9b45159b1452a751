"""port_slot_attention transform: the paddle side uses the framework's nn.GRUCell, whose
weight_ih / weight_hh ([3H, in]) and bias_ih / bias_hh ([3H]) hold the gates in r | z | c
order along axis 0; the torch side writes the GRU by hand with two nn.Linear layers `gru_x` /
`gru_h` (weight [3H, in], bias [3H], the same [out, in] layout) whose output chunks are in
z | r | n order. Both apply the reset gate to the hidden projection INCLUDING its bias
(n = tanh(x_n + r * (W_hn h + b_hn))), so only the gate blocks move.

Transform: "paddle GRUCell gate blocks r|z|c to torch z|r|n, H=16"
  torch_array = concat([paddle[H:2H], paddle[0:H], paddle[2H:3H]], axis 0)
"""
import re

import numpy as np

_GATES = re.compile(r"^paddle GRUCell gate blocks r\|z\|c to torch z\|r\|n, H=(\d+)$")


def convert(transform, paddle_array, torch_array):
    m = _GATES.match(transform)
    if m is None:
        return None
    h = int(m.group(1))
    if paddle_array.shape[0] != 3 * h:
        raise ValueError(f"port_slot_attention hook: axis 0 of {paddle_array.shape} is not 3 * {h}")
    out = np.concatenate([paddle_array[h : 2 * h], paddle_array[0:h], paddle_array[2 * h : 3 * h]], axis=0)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_slot_attention hook: {out.shape} != {torch_array.shape}")
    return np.ascontiguousarray(out)
