"""speecht5 transform: HF wraps the encoder's positional conv in weight_norm(dim=2)
(parametrizations.weight.original0 = g [1, 1, K], original1 = v [out, in/groups, K], weight = g * v / ||v||
with the norm over dims 0 and 1); paddlenlp 2.8.1 has the weight_norm commented out and holds one plain
conv weight W. Pair W -> original1 as is ("none") and W -> original0 as its per-tap norm, so that
g * v / ||v|| == W."""
import numpy as np


def convert(transform, paddle_array, torch_array):
    if transform.startswith("weight_norm g"):
        g = np.sqrt((paddle_array.astype(np.float64) ** 2).sum(axis=(0, 1)))
        return g.reshape(torch_array.shape).astype(torch_array.dtype)
    return None
