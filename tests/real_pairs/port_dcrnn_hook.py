"""port_dcrnn transform: the paddle side keeps ONE bias-free Linear per diffusion term
(`hops.j.weight`, [F, out], [in, out]) in each of its separate convs (reset / update / cand);
the torch side packs all terms of a conv into ONE weight [F * 5, out] whose rows are
feature-major / term-minor (row f * 5 + m multiplies feature f of diffusion term m), with the
reset | update gates fused along the columns (gate_weight [F * 5, 32]: 0:16 = r, 16:32 = u).
The term orders differ: paddle [X, fwd 1, bwd 1, fwd 2, bwd 2], torch [X, fwd 1, fwd 2,
bwd 1, bwd 2], so paddle hop j goes to torch term m = (0, 1, 3, 2, 4)[j]; the transform text
names m directly.

Transform: "paddle hop weight [F, out] into torch interleaved rows f*M+m, columns A:B"
  torch_array[f * M + m, A:B] = paddle_array[f, :] for f in range(F)
"""
import re

import numpy as np

_HOP = re.compile(r"^paddle hop weight \[F, out\] into torch interleaved rows f\*(\d+)\+(\d+), columns (\d+):(\d+)")


def convert(transform, paddle_array, torch_array):
    m = _HOP.match(transform)
    if m is None:
        return None
    n_terms, term, a, b = (int(g) for g in m.groups())
    n_feat = paddle_array.shape[0]
    if torch_array.shape[0] != n_feat * n_terms or paddle_array.shape[1] != b - a:
        raise ValueError(f"port_dcrnn hook: {paddle_array.shape} does not fit {torch_array.shape} ({transform!r})")
    out = torch_array.copy()
    out[np.arange(n_feat) * n_terms + term, a:b] = paddle_array
    return out
