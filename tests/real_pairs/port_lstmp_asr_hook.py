"""port_lstmp_asr transforms outside verify_truth's built-in vocabulary (paddle -> torch).

1. Gate order. The paddle LSTMPCell's `x2gates` / `h2gates` Linears (weight [in, 4H], [in, out];
   bias [4H]) lay their 4H output columns out in TF order (i, j, f, o), j = the cell candidate g,
   H columns each. torch nn.LSTM's weight_ih_l{k} / weight_hh_l{k} ([4H, in], [out, in]) and
   bias_ih_l{k} / bias_hh_l{k} ([4H]) use (i, f, g, o).

   Transform: "paddle gate blocks (i, j, f, o) to torch (i, f, g, o)[, transposed]"
     torch block k takes paddle block (0, 2, 1, 3)[k]; weights are transposed after reordering.

2. Flatten order. The paddle ConvSubsample flattens [B, C, T, F] frequency-major (feature f*C + c)
   and the torch Conv2dSubsampling4 channel-major (feature c*F + f), so the rows of paddle's
   `proj.weight` [F*C, D] are a permutation of the columns of torch's `out.weight` [D, C*F].

   Transform: "paddle rows (freq, channel) to torch columns (channel, freq), C channels, transposed"
     torch_array = paddle_array.reshape(F, C, D).transpose(1, 0, 2).reshape(C*F, D).T
"""
import re

import numpy as np

_GATES = re.compile(r"^paddle gate blocks \(i, j, f, o\) to torch \(i, f, g, o\)(, transposed)?$")
_FLAT = re.compile(r"^paddle rows \(freq, channel\) to torch columns \(channel, freq\), (\d+) channels, transposed$")
_ORDER = (0, 2, 1, 3)


def convert(transform, paddle_array, torch_array):
    m = _GATES.match(transform)
    if m is not None:
        h = paddle_array.shape[-1] // 4
        out = np.concatenate([paddle_array[..., b * h:(b + 1) * h] for b in _ORDER], axis=-1)
        if m.group(1):
            out = out.T
    else:
        m = _FLAT.match(transform)
        if m is None:
            return None
        c = int(m.group(1))
        rows, d = paddle_array.shape
        out = paddle_array.reshape(rows // c, c, d).transpose(1, 0, 2).reshape(rows, d).T
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_lstmp_asr hook: {out.shape} != {torch_array.shape}")
    return out
