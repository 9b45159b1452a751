"""port_resmlp transform outside verify_truth's vocabulary.

The paddle side mixes tokens with an nn.Linear(16, 16) over the transposed tensor (weight
[16, 16] laid out [in, out]); the torch side uses an nn.Conv1d(16, 16, kernel_size=1) over the
[B, N, C] tensor (weight [16, 16, 1] laid out [out, in, k]).

Transform: "paddle linear [in, out] as torch conv1d kernel [out, in, 1]"
  torch_array = paddle_array.T[:, :, None]
"""
import numpy as np

_CONV1D = "paddle linear [in, out] as torch conv1d kernel [out, in, 1]"


def convert(transform, paddle_array, torch_array):
    if not transform.startswith(_CONV1D):
        return None
    out = np.ascontiguousarray(paddle_array.T[:, :, None])
    if out.shape != torch_array.shape:
        raise ValueError(f"port_resmlp hook: {out.shape} != {torch_array.shape}")
    return out
