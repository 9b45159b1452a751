"""Flatten nested inputs/outputs into (position, leaf) pairs and back.

Positions read like Python: ``args[0]``, ``kwargs["mask"]``, ``out[1]["logits"]``,
``out.last_hidden_state`` (dataclass-like objects). Leaves are tensors or anything
else (noted by type name, not recorded as data).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["MAX_OP_SCALARS", "PY_SCALARS", "flatten", "flatten_call", "op_scalar", "rebuild"]

_MAX_DEPTH = 8


def flatten(obj: Any, prefix: str, is_tensor: Callable[[Any], bool], depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Yield (position, leaf) for every leaf of ``obj`` in a deterministic order."""
    if is_tensor(obj) or depth >= _MAX_DEPTH:
        yield prefix, obj
    elif isinstance(obj, (tuple, list)):
        fields = getattr(obj, "_fields", None)  # namedtuple
        for i, item in enumerate(obj):
            pos = f"{prefix}.{fields[i]}" if fields else f"{prefix}[{i}]"
            yield from flatten(item, pos, is_tensor, depth + 1)
    elif isinstance(obj, Mapping):
        for key, item in obj.items():
            yield from flatten(item, f"{prefix}[{key!r}]".replace("'", '"'), is_tensor, depth + 1)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from flatten(getattr(obj, f.name), f"{prefix}.{f.name}", is_tensor, depth + 1)
    else:
        yield prefix, obj


def flatten_call(
    args: tuple[Any, ...], kwargs: Mapping[str, Any] | None, is_tensor: Callable[[Any], bool]
) -> Iterator[tuple[str, Any]]:
    """Positions ``args[i]...`` then ``kwargs["name"]...``."""
    yield from flatten(tuple(args), "args", is_tensor)
    if kwargs:
        for key, val in kwargs.items():
            yield from flatten(val, f'kwargs["{key}"]', is_tensor, 1)


def rebuild(obj: Any, prefix: str, replace: Mapping[str, Any], is_tensor: Callable[[Any], bool], depth: int = 0) -> Any:
    """A copy of ``obj`` whose leaves at the given positions are replaced."""
    if prefix in replace:
        return replace[prefix]
    if is_tensor(obj) or depth >= _MAX_DEPTH:
        return obj
    if isinstance(obj, (tuple, list)):
        fields = getattr(obj, "_fields", None)
        items = [
            rebuild(item, f"{prefix}.{fields[i]}" if fields else f"{prefix}[{i}]", replace, is_tensor, depth + 1)
            for i, item in enumerate(obj)
        ]
        if fields:
            return type(obj)(*items)
        return type(obj)(items) if isinstance(obj, list) else tuple(items)
    if isinstance(obj, Mapping):
        return {
            k: rebuild(v, f"{prefix}[{k!r}]".replace("'", '"'), replace, is_tensor, depth + 1) for k, v in obj.items()
        }
    return obj


PY_SCALARS = (bool, int, float)
MAX_OP_SCALARS = 16  # python scalar arguments recorded per op (flags, axes, shapes)


def op_scalar(v: Any) -> bool:
    """A python scalar argument of an op worth a record: a bool, or a number that fits 64 bits."""
    return isinstance(v, PY_SCALARS) and -(2**63) <= v < 2**63
