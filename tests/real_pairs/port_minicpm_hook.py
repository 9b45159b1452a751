"""port_minicpm transform: the paddle side has separate q_proj / k_proj Linears (weight [32, 32],
[in, out]) and rotates HALF-SPLIT pairs (rotate_half: dim i of a head pairs with dim i + D/2);
the torch side has ONE fused `Wqkv` Linear (weight [96, 32], [out, in], rows [q | k | v]) and
rotates INTERLEAVED pairs (dims 2i, 2i+1 of a head). So the q (k) rows of Wqkv are the paddle
q_proj (k_proj) output columns permuted within each head:
  torch row A + h*D + 2i + c  =  paddle column h*D + c*D/2 + i   (c = 0, 1; A = row offset)
The q.k dot product is unchanged by the permutation; v needs only the plain slice.

Transform: "rope permute into torch rows A:B of Wqkv: paddle transposed, half-split -> interleaved, N heads of D"
  torch_array[A:B] = paddle_array.T.reshape(N, 2, D // 2, in).transpose(0, 2, 1, 3).reshape(N * D, in)
"""
import re

_ROPE = re.compile(
    r"^rope permute into torch rows (\d+):(\d+) of Wqkv: paddle transposed, half-split -> interleaved, "
    r"(\d+) heads of (\d+)$"
)


def convert(transform, paddle_array, torch_array):
    m = _ROPE.match(transform)
    if m is None:
        return None
    a, b, heads, dim = (int(g) for g in m.groups())
    w = paddle_array.T  # [out, in]
    n_in = w.shape[1]
    perm = w.reshape(heads, 2, dim // 2, n_in).transpose(0, 2, 1, 3).reshape(heads * dim, n_in)
    if perm.shape != torch_array[a:b].shape:
        raise ValueError(f"port_minicpm hook: {perm.shape} != {torch_array[a:b].shape}")
    out = torch_array.copy()
    out[a:b] = perm
    return out
