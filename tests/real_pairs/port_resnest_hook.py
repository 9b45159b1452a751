"""port_resnest transform outside verify_truth's built-in vocabulary (paddle -> torch).

The paddle side writes the split-attention MLP as `GroupLinear` layers: weight [K, in/K, out/K]
(cardinal group g maps its in/K inputs to its out/K outputs, y[b, g, o] = sum_i x[b, g, i] *
W[g, i, o]). The torch side uses nn.Conv2d 1x1 with groups=K: weight [out, in/K, 1, 1], output
channel g*(out/K) + o of group g reading input channel g*(in/K) + i at [.., i, 0, 0].

Transform: "paddle group-linear weight [K, in/K, out/K] to torch grouped 1x1 conv weight"
  torch_array = paddle_array.transpose(0, 2, 1).reshape(K * out/K, in/K, 1, 1)
(The biases, [K, out/K] -> [out], are plain "none": a row-major reshape.)
"""
import numpy as np

_NAME = "paddle group-linear weight [K, in/K, out/K] to torch grouped 1x1 conv weight"


def convert(transform, paddle_array, torch_array):
    if transform != _NAME:
        return None
    k, cin, cout = paddle_array.shape
    out = np.ascontiguousarray(paddle_array.transpose(0, 2, 1).reshape(k * cout, cin, 1, 1))
    if out.shape != torch_array.shape:
        raise ValueError(f"port_resnest hook: {out.shape} != {torch_array.shape}")
    return out
