"""port_moe transform: the torch experts are STACKED 3-D parameters, the paddle experts are
separate Linear layers.

paddle: block_sparse_moe.experts.<e>.w1 / w3 / w2, nn.Linear weights [in, out] (gate / up [32, 48],
down [48, 32]). torch: ffn.experts.w_gate / w_up [E, 32, 48] and w_down [E, 48, 32], used as
x @ W[e] (the same [in, out] layout), so expert e's paddle weight is torch slice [e] as it is:

  "expert E of the stacked torch tensor [E, in, out], paddle [in, out] as is"
      torch[E] = paddle

Four paddle tensors fill one torch tensor (one pair per expert); verify_truth.transfer starts
each pair from the tensor the previous pairs built.
"""
import re

import numpy as np

_SLICE = re.compile(r"^expert (\d+) of the stacked torch tensor")


def convert(transform, paddle_array, torch_array):
    m = _SLICE.match(transform)
    if m is None:
        return None
    e = int(m.group(1))
    out = np.array(torch_array, copy=True)
    if out[e].shape != paddle_array.shape:
        raise ValueError(f"expert {e}: paddle {paddle_array.shape} vs torch slice {out[e].shape}")
    out[e] = paddle_array
    return out
