"""port_tsmixer transform: the paddle MixerBlock keeps the series channel-first [B, 5, 24] and its
BatchNorm1D(120) layers normalise the plane flattened FEATURE-MAJOR (channel index f * 24 + t);
the torch TimeBatchNorm2d normalises the time-major [B, 24, 5] plane flattened TIME-MAJOR
(channel index t * 5 + f). Every BatchNorm vector (weight, bias, running mean, running var)
is therefore the same 120 numbers in a different order.

Transform: "paddle feature-major (F, L) BatchNorm vector reordered to time-major (L, F)", e.g.
"paddle feature-major (5, 24) BatchNorm vector reordered to time-major (24, 5)":
  torch_array = paddle_array.reshape(F, L).T.reshape(-1)
"""
import re

import numpy as np

_BN = re.compile(r"^paddle feature-major \((\d+), (\d+)\) BatchNorm vector reordered to time-major \((\d+), (\d+)\)$")


def convert(transform, paddle_array, torch_array):
    m = _BN.match(transform)
    if m is None:
        return None
    f, n, n2, f2 = (int(g) for g in m.groups())
    if (f, n) != (f2, n2):
        raise ValueError(f"port_tsmixer hook: inconsistent transform {transform!r}")
    out = np.ascontiguousarray(paddle_array.reshape(f, n).T.reshape(-1))
    if out.shape != torch_array.shape:
        raise ValueError(f"port_tsmixer hook: {out.shape} != {torch_array.shape}")
    return out
