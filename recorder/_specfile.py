"""A spec file: what it must define, how it is imported, how its inputs are read.

Spec contract:
    model()            -> the model (a torch.nn.Module or a paddle.nn.Layer)
    inputs()           -> positional args (tuple), keyword args (dict) or (args, kwargs);
                          a single tensor is taken as one positional argument
    inputs(step)       -> the same, called once per step with the step number (a data loader:
                          each side's own data every step, never replayed from the other side,
                          so a different data order is found and named)
    loss(output)       -> optional; a scalar (default: mean of the first float output)
    optimizer(model)   -> optional; an optimizer, or (optimizer, lr scheduler) whose step() runs
                          after every optimizer step (default: none, weights stay put)
    clip_grad(model)   -> optional; called after backward, before the optimizer step (torch's
                          clip_grad_norm_/clip_grad_value_ there are recorded as the optimizer's)
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from padiff_trace import SpecError

__all__ = ["Spec", "load_spec", "split_inputs"]


@dataclass
class Spec:
    path: Path
    module: ModuleType
    model: Callable[[], Any]
    inputs: Callable[..., Any]  # inputs() or inputs(step)
    loss: Callable[[Any], Any] | None
    optimizer: Callable[[Any], Any] | None
    clip_grad: Callable[[Any], Any] | None = None

    @functools.cached_property
    def per_step_inputs(self) -> bool:
        """``inputs(step)``: the spec's inputs take the step number."""
        try:
            params = inspect.signature(self.inputs).parameters.values()
        except (TypeError, ValueError):
            return False
        return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and (p.default is p.empty or p.name == "step")
                   for p in params)

    def inputs_at(self, step: int) -> Any:
        return self.inputs(step) if self.per_step_inputs else self.inputs()


def load_spec(path: str | os.PathLike[str]) -> Spec:
    p = Path(path)
    if not p.is_file():
        raise SpecError(f"{p}: no such spec file")
    try:  # reading it is ours to report; what its code raises is the user's
        p.open("rb").close()
    except OSError as exc:
        raise SpecError.from_os(p, "read the spec file", exc, "another spec file") from None
    name = f"padiff_spec_{p.stem}"
    mspec = importlib.util.spec_from_file_location(name, p)
    if mspec is None or mspec.loader is None:
        raise SpecError(f"{p}: cannot be imported as a Python file")
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[name] = mod
    sys.path.insert(0, str(p.resolve().parent))  # the spec may import its neighbours
    try:
        mspec.loader.exec_module(mod)
    except SyntaxError as exc:  # not Python: the file and line say all, a traceback through importlib nothing
        raise SpecError(_syntax_error(exc, p)) from None
    missing = [f for f in ("model", "inputs") if not callable(getattr(mod, f, None))]
    if missing:
        raise SpecError(f"{p}: spec must define {' and '.join(f + '()' for f in missing)} (see README: spec files)")
    return Spec(p, mod, mod.model, mod.inputs, getattr(mod, "loss", None), getattr(mod, "optimizer", None),
                getattr(mod, "clip_grad", None))


def _syntax_error(exc: SyntaxError, spec: Path) -> str:
    """``FILE:LINE: SyntaxError: MESSAGE`` for the spec, or for a module it imports (then named too)."""
    other = exc.filename is not None and Path(exc.filename).resolve() != spec.resolve()
    where, by = (exc.filename, f" (imported by the spec {spec})") if other else (spec, "")
    return f"{where}:{exc.lineno}: {type(exc).__name__}: {exc.msg}{by}"


def split_inputs(obj: Any, is_tensor: Callable[[Any], bool], where: Path) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if is_tensor(obj):
        return (obj,), {}
    if isinstance(obj, dict):
        return (), dict(obj)
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], (tuple, list)) and isinstance(obj[1], dict):
        return tuple(obj[0]), dict(obj[1])
    if isinstance(obj, (tuple, list)):
        return tuple(obj), {}
    raise SpecError(f"{where}: inputs() returned {type(obj).__name__}; expected a tuple, a dict or (args, kwargs)")
