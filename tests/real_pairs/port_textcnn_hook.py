"""port_textcnn transform: the paddle branches convolve an [N, 2, T, E] image (channel 0 =
non-static table, channel 1 = static) with nn.Conv2D weights [F, 2, k, E]; the torch encoder
convolves [N, 2E, T] (input channels 0:E = static, E:2E = dynamic) with nn.Conv1d weights
[F, 2E, k].

Transform: "paddle Conv2D [F, 2, k, E] (non-static, static) to Conv1d [F, 2E, k] (static, dynamic)"
  torch_array = paddle_array[:, ::-1].transpose(0, 1, 3, 2).reshape(F, 2 * E, k)
"""
import numpy as np

_T = "paddle Conv2D [F, 2, k, E] (non-static, static) to Conv1d [F, 2E, k] (static, dynamic)"


def convert(transform, paddle_array, torch_array):
    if transform != _T:
        return None
    f, c, k, e = paddle_array.shape
    out = np.ascontiguousarray(paddle_array[:, ::-1].transpose(0, 1, 3, 2).reshape(f, c * e, k))
    if out.shape != torch_array.shape:
        raise ValueError(f"port_textcnn hook: {out.shape} != {torch_array.shape}")
    return out
