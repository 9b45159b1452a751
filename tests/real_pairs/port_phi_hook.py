"""port_phi transform: the paddle side has separate `q_proj` / `k_proj` Linears (weight [32, 32],
[in, out]; bias [32]) whose heads use the GPT-NeoX "rotate_half" rotary layout (rotary feature i
pairs with i + rotary/2); the torch side has ONE fused `Wqkv` Linear (weight [96, 32], [out, in];
bias [96], rows q | k | v) whose heads use the GPT-J INTERLEAVED layout (rotary features 2i and
2i + 1 pair). So within each head the first `rotary` output features are re-ordered: torch
feature 2i = paddle feature i, torch feature 2i + 1 = paddle feature i + rotary/2 (for rotary 4:
torch [0, 1, 2, 3] = paddle [0, 2, 1, 3]); the pass-through features keep their place. q . k is
unchanged because q and k get the same permutation.

Transform: "torch rows A:B of Wqkv (X part), rotary features of each head interleaved, N heads of
D, rotary R, paddle transposed" for a weight, "torch elements A:B of Wqkv bias (X part), rotary
features of each head interleaved, N heads of D, rotary R" for a bias:
  perm = for each head h: [h*D + p for p in interleave(R)] + [h*D + R .. h*D + D - 1]
  torch_array[A:B] = (paddle_array.T if transposed else paddle_array)[perm]
"""
import re

import numpy as np

_ROT = re.compile(r"^torch (rows|elements) (\d+):(\d+) .*rotary features of each head interleaved, "
                  r"(\d+) heads of (\d+), rotary (\d+)(, paddle transposed)?$")


def _perm(heads, dim, rot):
    half = rot // 2
    inner = [i // 2 if i % 2 == 0 else half + i // 2 for i in range(rot)] + list(range(rot, dim))
    return np.array([h * dim + p for h in range(heads) for p in inner])


def convert(transform, paddle_array, torch_array):
    m = _ROT.match(transform)
    if m is None:
        return None
    a, b = int(m.group(2)), int(m.group(3))
    heads, dim, rot = int(m.group(4)), int(m.group(5)), int(m.group(6))
    val = paddle_array.T if m.group(7) else paddle_array
    out = torch_array.copy()
    out[a:b] = val[_perm(heads, dim, rot)]
    return out
