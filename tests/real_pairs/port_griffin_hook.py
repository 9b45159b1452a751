"""port_griffin transforms (paddle recurrentgemma layout -> torch HF-like layout).

  "plus one (Gemma zero-centred RMSNorm scale -> direct weight)"
      torch_array = 1 + paddle_array
  "log of softplus (a_param -> Mamba-style a_log)"
      torch_array = log(softplus(paddle_array))         (computed in float64)
  "block-diagonal [H, in, out] to grouped 1x1 conv1d kernel"
      paddle w [H, b, b] with y_j = sum_i x_i w[h, i, j]; torch nn.Conv1d(D, D, 1, groups=H)
      weight [D, b, 1] with weight[h*b + j, i, 0] = w[h, i, j]
  "transpose, as a depthwise conv1d kernel [D, 1, K]"
      paddle Conv1D w [K, D] (tap K-1 on x_t) -> torch weight [D, 1, K] = w.T[:, None, :]
      (nn.Conv1d with padding K-1, first T outputs kept: tap K-1 also lands on x_t)
  "paddle block N of [2, in, out], transposed"
      torch_array = paddle_array[N].T                   (fused ffw_up_w -> gate_proj / up_proj)
  "paddle row N"
      torch_array = paddle_array[N]                     (fused ffw_up_b -> gate / up bias)
"""
import re

import numpy as np

_BLOCK = re.compile(r"^paddle block (\d+) of \[2, in, out\], transposed$")
_ROW = re.compile(r"^paddle row (\d+)$")


def _check(out, torch_array):
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_griffin hook: {out.shape} != {torch_array.shape}")
    return out


def convert(transform, paddle_array, torch_array):
    if transform.startswith("plus one"):
        return _check(1.0 + paddle_array, torch_array)
    if transform.startswith("log of softplus"):
        x = paddle_array.astype(np.float64)
        sp = np.logaddexp(0.0, x)
        return _check(np.log(sp).astype(paddle_array.dtype), torch_array)
    if transform == "block-diagonal [H, in, out] to grouped 1x1 conv1d kernel":
        h, b, _ = paddle_array.shape
        return _check(paddle_array.transpose(0, 2, 1).reshape(h * b, b, 1), torch_array)
    if transform == "transpose, as a depthwise conv1d kernel [D, 1, K]":
        return _check(paddle_array.T[:, None, :], torch_array)
    m = _BLOCK.match(transform)
    if m is not None:
        return _check(paddle_array[int(m.group(1))].T, torch_array)
    m = _ROW.match(transform)
    if m is not None:
        return _check(paddle_array[int(m.group(1))], torch_array)
    return None
