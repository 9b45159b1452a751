"""port_mobilenetv4 transform: the paddle MQA block has ONE fused key/value 1x1 conv `kv_proj`
(weight [2 * kd, C, 1, 1]: output channels 0:kd are the key, kd:2kd the value); the torch side has
separate `attn.key.proj` / `attn.value.proj` convs (weight [kd, C, 1, 1] each). Conv weights have
the same [out, in, kh, kw] layout on both sides, so the torch tensor is a slice of the paddle one.

Transform: "paddle output channels A:B (key / value part of the fused kv 1x1 conv)"
  torch_array = paddle_array[A:B]
"""
import re

import numpy as np

_OUT = re.compile(r"^paddle output channels (\d+):(\d+)\b")


def convert(transform, paddle_array, torch_array):
    m = _OUT.match(transform)
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    out = np.ascontiguousarray(paddle_array[a:b])
    if out.shape != torch_array.shape:
        raise ValueError(f"port_mobilenetv4 hook: {out.shape} != {torch_array.shape}")
    return out
