"""port_gru_nmt transforms: the paddle decoder cell is hand-written, with `input_proj` /
`hidden_proj` Linears (weight [in, 3H], [in, out]; bias [3H]) whose 3H output columns hold the
gates in the order [z | r | n] (update, reset, candidate). The torch decoder is an nn.GRU whose
`weight_ih_l0` / `weight_hh_l0` ([3H, in], [out, in]) and biases hold them in the order
[r | z | n]. Same equations on both sides (the reset gate multiplies W_hn h + b_hn).

Transforms:
  "paddle [z r n] gate columns as torch [r z n] gate rows, transposed"
      torch_array = concat(paddle[:, H:2H], paddle[:, 0:H], paddle[:, 2H:3H], axis=1).T
  "paddle [z r n] gate elements as torch [r z n] gate elements"
      torch_array = concat(paddle[H:2H], paddle[0:H], paddle[2H:3H])
"""
import numpy as np

_W = "paddle [z r n] gate columns as torch [r z n] gate rows, transposed"
_B = "paddle [z r n] gate elements as torch [r z n] gate elements"


def _zrn_to_rzn(a, axis):
    z, r, n = np.split(a, 3, axis=axis)
    return np.concatenate([r, z, n], axis=axis)


def convert(transform, paddle_array, torch_array):
    if transform == _W:
        out = np.ascontiguousarray(_zrn_to_rzn(paddle_array, axis=1).T)
    elif transform == _B:
        out = _zrn_to_rzn(paddle_array, axis=0)
    else:
        return None
    if out.shape != torch_array.shape:
        raise ValueError(f"port_gru_nmt hook: {out.shape} != {torch_array.shape}")
    return out
