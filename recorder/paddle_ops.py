"""Op-level interception for Paddle: wrap a maintained list of public functions.

Paddle has no function-mode hook like torch's ``TorchFunctionMode``, so while an
op-level recording is active the functions below are replaced by thin wrappers
that call the original and report the call; on exit every attribute is restored to
the exact original object (also when the model raises). Calls are only seen when
made through the module attribute at call time (``paddle.matmul(...)``,
``F.softmax(...)``, ``x @ y``); a name imported earlier with ``from paddle import
matmul`` is bound to the original and stays invisible.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from ._patch import patched

__all__ = ["PADDLE_OPS", "intercept_paddle_ops"]

_FUNCS = ["matmul", "mm", "bmm", "add", "subtract", "multiply", "divide", "scale", "exp", "log", "log1p", "logsumexp", "sqrt", "rsqrt", "pow", "square", "tanh", "sigmoid", "abs", "neg", "sum", "mean", "max", "min", "maximum", "minimum", "where", "transpose", "reshape", "concat", "stack", "split", "chunk", "squeeze", "unsqueeze", "flatten", "einsum", "cumsum", "clip", "masked_fill", "tile", "expand", "gather", "index_select", "cast", "erf", "sin", "cos", "softmax"]
_FUNCTIONAL = ["linear", "softmax", "log_softmax", "layer_norm", "batch_norm", "group_norm", "gelu", "relu", "relu6", "silu", "swish", "sigmoid", "tanh", "leaky_relu", "elu", "softplus", "mish", "hardswish", "dropout", "embedding", "conv1d", "conv2d", "conv3d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "interpolate", "pad", "normalize", "one_hot", "cross_entropy", "mse_loss", "scaled_dot_product_attention"]
_METHODS = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__matmul__", "__rmatmul__", "__neg__", "__pow__", "__getitem__", "matmul", "transpose", "reshape", "exp", "log", "sqrt", "rsqrt", "pow", "sum", "mean", "max", "min", "tanh", "sigmoid", "softmax", "unsqueeze", "squeeze", "flatten", "astype", "cast", "masked_fill", "abs", "scale"]

# (module or class path, attribute names): the maintained, documented list.
PADDLE_OPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("paddle", tuple(_FUNCS)),
    ("paddle.nn.functional", tuple(_FUNCTIONAL)),
    ("paddle.Tensor", tuple(_METHODS)),
)

OnOp = Callable[[str, tuple[Any, ...], dict[str, Any], Any], None]


def _resolve(path: str) -> Any:
    if path == "paddle.Tensor":
        return importlib.import_module("paddle").Tensor
    return importlib.import_module(path)


def _wrap(original: Any, name: str, on_op: OnOp, internal: Callable[[str], bool]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        if not internal(sys._getframe(1).f_code.co_filename):
            on_op(name, args, kwargs, out)
        return out

    wrapper.__padiff_original__ = original  # type: ignore[attr-defined]
    return wrapper


def intercept_paddle_ops(on_op: OnOp, internal: Callable[[str], bool]) -> AbstractContextManager[None]:
    """Install wrappers for ``PADDLE_OPS``; restore the originals exactly on exit."""

    def label(path: str, name: str) -> str:
        return name.strip("_") if path == "paddle.Tensor" and name.startswith("__") else name

    def wrapper_of(lab: str) -> Callable[[Any], Callable[..., Any]]:
        return lambda original: _wrap(original, lab, on_op, internal)

    return patched(
        (owner, name, wrapper_of(label(path, name)))
        for path, names in PADDLE_OPS
        for owner in (_resolve(path),)
        for name in names
    )
