"""port_levit transforms: the paddle side's fused LeViT projections (`qkv`, `kv`) are laid out
head by head: output column (Linear weight [in, out]) or element (BatchNorm1D vectors) number
h * S + o holds part o of head h, S being the per-head width (q 4 + k 4 + v 8 = 16 in the
attentions, k 4 + v 16 = 20 in the shrinking attention). The torch side has separate q / k / v
projections (weight [out, in], head-major rows) and a fused `kv` in block layout (all heads'
keys, then all heads' values).

Transforms (H heads; the bracket lists the per-head parts in paddle order with their widths):
  "paddle head-interleaved columns, H heads of [q 4, k 4, v 8], X part, transposed"
      torch = paddle[:, cols(X)].T        cols(X) = [h * S + off(X) + t for h, t]
  "paddle head-interleaved elements, H heads of [q 4, k 4, v 8], X part"
      torch = paddle[cols(X)]             (BatchNorm1D weight / bias / mean / variance)
  "... H heads of [k 4, v 16], regrouped into torch blocks k | v[, transposed]"
      torch = paddle[..., cols(k) + cols(v)] (then .T for the Linear weight)
"""
import re

import numpy as np

_RX = re.compile(r"^paddle head-interleaved (columns|elements), (\d+) heads of \[([^\]]+)\], "
                 r"(?:(\w+) part|regrouped into torch blocks ([\w |]+?))(, transposed)?$")


def _cols(heads, layout, name):
    stride = sum(s for _, s in layout)
    off = 0
    for n, s in layout:
        if n == name:
            return [h * stride + off + t for h in range(heads) for t in range(s)]
        off += s
    raise ValueError(f"port_levit hook: no part {name!r} in {layout}")


def convert(transform, paddle_array, torch_array):
    m = _RX.match(transform)
    if m is None:
        return None
    kind, heads = m.group(1), int(m.group(2))
    layout = [(p.split()[0], int(p.split()[1])) for p in m.group(3).split(",")]
    names = [m.group(4)] if m.group(4) else [n.strip() for n in m.group(5).split("|")]
    cols = np.array([c for n in names for c in _cols(heads, layout, n)])
    out = paddle_array[:, cols] if kind == "columns" else paddle_array[cols]
    if m.group(6):
        out = out.T
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_levit hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
