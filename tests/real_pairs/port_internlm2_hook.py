"""port_internlm2 transform: the torch side has ONE packed `wqkv` Linear (weight [64, 32],
[out, in]) whose output rows are laid out per key/value group, InternLM2 style: viewed as
[kv_groups = G, q_per_kv + 2, head_dim = D], group g holds its q_per_kv query heads
(q heads g*q_per_kv ...), then its key head g, then its value head g. The paddle side has
separate `q_proj` (weight [32, G*Q*D]), `k_proj` / `v_proj` (weight [32, G*D]) Linears,
[in, out], whose output columns are head-major (head h = columns h*D:(h+1)*D).

Transform: "paddle X_proj columns into per-group wqkv rows, X part, G kv groups of Q q heads,
head dim D, paddle transposed" (X = q, k or v)
  group stride S = (Q + 2) * D
  q: torch rows g*S + j*D + t       <- paddle column (g*Q + j)*D + t
  k: torch rows g*S + Q*D + t       <- paddle column g*D + t
  v: torch rows g*S + (Q+1)*D + t   <- paddle column g*D + t
  only the rows of that part are written; the rest of the torch array is kept.
"""
import re

_WQKV = re.compile(
    r"^paddle ([qkv])_proj columns into per-group wqkv rows, \1 part, (\d+) kv groups of (\d+) q heads, "
    r"head dim (\d+), paddle transposed$"
)


def convert(transform, paddle_array, torch_array):
    m = _WQKV.match(transform)
    if m is None:
        return None
    part, groups, qpk, dim = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
    stride = (qpk + 2) * dim
    src = paddle_array.T  # [out, in]
    out = torch_array.copy()
    if out.shape[0] != groups * stride or src.shape[1] != out.shape[1]:
        raise ValueError(f"port_internlm2 hook: {paddle_array.shape} does not fit {torch_array.shape}")
    for g in range(groups):
        if part == "q":
            if src.shape[0] != groups * qpk * dim:
                raise ValueError(f"port_internlm2 hook: q_proj {paddle_array.shape}")
            out[g * stride : g * stride + qpk * dim] = src[g * qpk * dim : (g + 1) * qpk * dim]
        else:
            if src.shape[0] != groups * dim:
                raise ValueError(f"port_internlm2 hook: {part}_proj {paddle_array.shape}")
            slot = qpk if part == "k" else qpk + 1
            out[g * stride + slot * dim : g * stride + (slot + 1) * dim] = src[g * dim : (g + 1) * dim]
    return out
