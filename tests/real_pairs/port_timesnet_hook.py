"""port_timesnet transform: the paddle side keeps each inception block as three parallel Conv2D
branches (kernel 1x1, 3x3, 5x5, padding k // 2, averaged); the torch side folds the block into ONE
5x5 Conv2d. Because every branch is linear and the padding keeps the centres aligned, the mean of
the branches equals one 5x5 conv whose kernel is the mean of the branch kernels zero-padded
(centred) to 5x5 and whose bias is the mean of the branch biases.

Transform: "inception mean of N into the fused KxK kernel: paddle kxk branch, zero-padded, first
(overwrites)" and "... added"
  kernel: out = zeros (first) or the partly filled torch array (added);
          out[:, :, c:c+k, c:c+k] += paddle_array / N, c = (K - k) // 2
Transform: "inception mean of N into the fused bias: paddle kxk branch, first (overwrites)" /
  "... added": out = zeros / partly filled; out += paddle_array / N

Several paddle tensors fill one torch tensor: the truth lists, for each torch tensor, the "first"
pair before the "added" pairs (verify_truth.transfer applies the pairs in order and hands the
hook the partly filled array).
"""
import re

import numpy as np

_KERNEL = re.compile(r"^inception mean of (\d+) into the fused (\d+)x\2 kernel: paddle (\d+)x\3 branch, "
                     r"zero-padded, (first \(overwrites\)|added)$")
_BIAS = re.compile(r"^inception mean of (\d+) into the fused bias: paddle (\d+)x\2 branch, "
                   r"(first \(overwrites\)|added)$")


def convert(transform, paddle_array, torch_array):
    m = _KERNEL.match(transform)
    if m is not None:
        n, big, k, mode = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)
        if torch_array.shape[2:] != (big, big) or paddle_array.shape[2:] != (k, k) \
                or paddle_array.shape[:2] != torch_array.shape[:2]:
            raise ValueError(f"port_timesnet hook: {paddle_array.shape} -> {torch_array.shape} ({transform})")
        out = np.zeros_like(torch_array) if mode.startswith("first") else torch_array.copy()
        c = (big - k) // 2
        out[:, :, c:c + k, c:c + k] += paddle_array / n
        return out
    m = _BIAS.match(transform)
    if m is not None:
        n, mode = int(m.group(1)), m.group(3)
        if paddle_array.shape != torch_array.shape:
            raise ValueError(f"port_timesnet hook: {paddle_array.shape} -> {torch_array.shape} ({transform})")
        out = np.zeros_like(torch_array) if mode.startswith("first") else torch_array.copy()
        out += paddle_array / n
        return out
    return None
