"""port_gqa transform: the torch side packs q | k | v into one `wqkv` Linear and rotates
INTERLEAVED pairs (dims 2i, 2i+1 of a head, complex numbers), while the paddle side keeps
separate q_proj / k_proj Linears (weight [in, out]) and rotates HALF-SPLIT pairs (dims i, i+4,
rotate_half). Within each head, torch output row h*D + 2i + c = paddle output column
h*D + c*D/2 + i (c = 0, 1); the q.k dot product is unchanged, so v needs no permutation.

Transform: "rope permute: paddle transposed, half-split -> interleaved, N heads of D, into torch rows A:B"
  block = paddle.T.reshape(N, 2, D // 2, in).transpose(0, 2, 1, 3).reshape(N * D, in)
  torch_array[A:B] = block (the rest of the packed torch tensor is left as it is)
"""
import re

_ROPE = re.compile(r"^rope permute: paddle transposed, half-split -> interleaved, (\d+) heads of (\d+), "
                   r"into torch rows (\d+):(\d+)$")


def convert(transform, paddle_array, torch_array):
    m = _ROPE.match(transform)
    if m is None:
        return None
    heads, dim, a, b = (int(g) for g in m.groups())
    w = paddle_array.T  # [out, in]
    n_in = w.shape[1]
    block = w.reshape(heads, 2, dim // 2, n_in).transpose(0, 2, 1, 3).reshape(heads * dim, n_in)
    out = torch_array.copy()
    out[a:b] = block
    return out
