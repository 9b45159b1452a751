"""port_mla transforms: the paddle side packs what the torch side keeps separate, and ropes
interleaved pairs where the torch side ropes half-split.

Paddle Linear weights are [in, out]; torch's are [out, in]. Rope dims: paddle (interleaved)
pairs (0, 1), (2, 3) rotate with frequencies 0, 1; torch (half-split) pairs (0, 2), (1, 3). So
torch rope index j holds paddle rope index PERM[j], PERM = [0, 2, 1, 3] (j < R/2: 2j; else
2(j - R/2) + 1).

Transforms (N heads, per-head paddle columns [nope A | rope B]):
  "paddle per-head nope columns 0:A of every A+B, N heads, transposed"
      q_b_proj [16, N*(A+B)] -> w_uq [N*A, 16]: cols h*(A+B) + t, t < A
  "paddle per-head rope columns A:A+B of every A+B, interleaved -> half-split, N heads, transposed"
      q_b_proj -> w_qr [N*B, 16]: cols h*(A+B) + A + PERM[j]
  "paddle columns X:Y, transposed"
      kv_a_proj_with_mqa [32, 20] -> w_dkv [16, 32] (latent X:Y = 0:16)
  "paddle columns X:Y, interleaved -> half-split, transposed"
      kv_a_proj_with_mqa -> w_kr [4, 32] (rope key X:Y = 16:20)
"""
import re

import numpy as np

_NOPE = re.compile(r"^paddle per-head nope columns 0:(\d+) of every (\d+), (\d+) heads, transposed$")
_ROPE = re.compile(r"^paddle per-head rope columns (\d+):(\d+) of every (\d+), interleaved -> half-split, "
                   r"(\d+) heads, transposed$")
_COLS = re.compile(r"^paddle columns (\d+):(\d+), (interleaved -> half-split, )?transposed$")


def half_split_perm(r):
    half = r // 2
    return [2 * j if j < half else 2 * (j - half) + 1 for j in range(r)]


def _check(out, torch_array):
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_mla hook: {out.shape} != {torch_array.shape}")
    return out


def convert(transform, paddle_array, torch_array):
    m = _NOPE.match(transform)
    if m:
        a, every, heads = (int(g) for g in m.groups())
        cols = [h * every + t for h in range(heads) for t in range(a)]
        return _check(paddle_array[:, cols].T, torch_array)
    m = _ROPE.match(transform)
    if m:
        a, b, every, heads = (int(g) for g in m.groups())
        perm = half_split_perm(b - a)
        cols = [h * every + a + p for h in range(heads) for p in perm]
        return _check(paddle_array[:, cols].T, torch_array)
    m = _COLS.match(transform)
    if m:
        x, y = int(m.group(1)), int(m.group(2))
        cols = list(range(x, y))
        if m.group(3):
            cols = [x + p for p in half_split_perm(y - x)]
        return _check(paddle_array[:, cols].T, torch_array)
    return None
