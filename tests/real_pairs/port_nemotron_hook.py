"""port_nemotron transforms.

1. LayerNorm1p: the paddle side STORES the norm weight as w - 1 (applied as 1 + w); the torch
   side is a plain nn.LayerNorm holding the applied weight w directly.
   Transform: "paddle LayerNorm1p stores w - 1: torch weight = paddle + 1"
     torch_array = paddle_array + 1

2. Megatron grouped qkv: the paddle side has separate q_proj [32, 32], k_proj / v_proj [32, 16]
   ([in, out]); the torch side has ONE linear_qkv [64, 32] ([out, in]) laid out per query group:
   group g owns rows g*(P+2)*D : (g+1)*(P+2)*D = [q heads g*P .. g*P+P-1 (P*D rows) | k head g
   (D rows) | v head g (D rows)], with P query heads per group and head dim D.
   Transform: "paddle X_proj columns into Megatron grouped linear_qkv rows: X part, G groups of P
   query heads, head dim D, paddle transposed"   (X = q, k or v)
     for each group g: the X block of group g = paddle_array.T[the group's X rows]
"""
import re

_QKV = re.compile(
    r"^paddle ([qkv])_proj columns into Megatron grouped linear_qkv rows: \1 part, (\d+) groups of (\d+) "
    r"query heads, head dim (\d+), paddle transposed$"
)
_LN1P = "paddle LayerNorm1p stores w - 1: torch weight = paddle + 1"


def convert(transform, paddle_array, torch_array):
    if transform == _LN1P:
        return (paddle_array + 1.0).astype(paddle_array.dtype)
    m = _QKV.match(transform)
    if m is None:
        return None
    part = m.group(1)
    groups, per_group, dim = int(m.group(2)), int(m.group(3)), int(m.group(4))
    w = paddle_array.T  # [out, in]
    stride = (per_group + 2) * dim
    out = torch_array.copy()
    for g in range(groups):
        base = g * stride
        if part == "q":
            out[base : base + per_group * dim] = w[g * per_group * dim : (g + 1) * per_group * dim]
        elif part == "k":
            out[base + per_group * dim : base + (per_group + 1) * dim] = w[g * dim : (g + 1) * dim]
        else:
            out[base + (per_group + 1) * dim : base + stride] = w[g * dim : (g + 1) * dim]
    return out
