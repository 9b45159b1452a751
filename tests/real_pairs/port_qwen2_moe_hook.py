"""port_qwen2_moe transform outside verify_truth's built-in vocabulary.

The torch side stores the 4 routed experts STACKED in two 3-d parameters: `w13` [4, 48, 32]
(expert e: rows 0:24 = gate, 24:48 = up, [out, in]) and `w2` [4, 32, 24] ([out, in]). The paddle
side has one module per expert with [in, out] Linear weights: gate_proj / up_proj [32, 24],
down_proj [24, 32].

Transform: "paddle transposed, torch expert E rows A:B"
  torch_array[E, A:B, :] = paddle_array.T
"""
import re

_EXPERT = re.compile(r"^paddle transposed, torch expert (\d+) rows (\d+):(\d+)$")


def convert(transform, paddle_array, torch_array):
    m = _EXPERT.match(transform)
    if m is None:
        return None
    e, a, b = int(m.group(1)), int(m.group(2)), int(m.group(3))
    out = torch_array.copy()
    if out[e, a:b, :].shape != paddle_array.T.shape:
        raise ValueError(f"port_qwen2_moe hook: {paddle_array.T.shape} != {out[e, a:b, :].shape}")
    out[e, a:b, :] = paddle_array.T
    return out
