"""port_capsnet transform: the capsule transformation matrices are stored as
[in_caps, out_caps, out_dim, in_dim] on the paddle side (used with matmul: W @ u) and as
[out_caps, in_caps, in_dim, out_dim] on the torch side (used with einsum "bid,jide->bije").

  "permute axes (1, 0, 3, 2) ..." -> np.transpose(paddle_array, (1, 0, 3, 2))"""
import re

import numpy as np

_PERM = re.compile(r"permute axes \((\d), (\d), (\d), (\d)\)")


def convert(transform, paddle_array, torch_array):
    m = _PERM.search(transform)
    if m is None:
        return None
    out = np.transpose(paddle_array, tuple(int(a) for a in m.groups()))
    return np.ascontiguousarray(out).reshape(torch_array.shape)
