"""Single-step replay: modules receive the other trace's recorded inputs (forward) and
output gradients (backward), so each module's error is its own, not inherited.

The plan (which module call of this model gets which records of the other trace) is
computed by the analyzer from the two traces' alignment and handed over as JSON:

    {"trace": "<other trace>", "calls": {"<step>|<module>|<call_index>":
        {"inputs": [[position, seq, perm|null], ...], "grads": [[position, seq, perm|null], ...]}}}

Replacement values enter the graph through a straight-through op (exact forward
value, identity gradient), so gradients still reach the modules before.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from padiff_trace import UserError, open_trace

from ._adapter import Adapter
from ._nest import flatten_call, rebuild

__all__ = ["SingleStep"]

logger = logging.getLogger(__name__)


class SingleStep:
    """Single-step replay in a live model: paired module calls receive the other trace's
    recorded inputs (forward) and output gradients (backward), as the plan file says."""

    def __init__(self, plan_path: str | os.PathLike[str], adapter: Adapter) -> None:
        try:
            plan = json.loads(Path(plan_path).read_text())
            self._calls: dict[str, dict[str, list[list[Any]]]] = plan["calls"]
            trace = plan["trace"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{plan_path}: not a single-step plan ({exc})") from None
        self._trace = open_trace(trace)
        self._adapter = adapter
        self.replaced_inputs = 0
        self.replaced_grads = 0
        self.kept_own = 0  # values of another shape than the plan's: not replaced

    def close(self) -> None:
        self._trace.close()

    def _value(self, seq: int, perm: list[int] | None, like: Any) -> Any | None:
        """A's recorded value for this tensor, or None where the two libraries hand this module
        the argument in another shape (position ids [2, S] vs [1, S]), or where it is integer
        data (one side's sequence lengths against the other's packed-sequence indices): this side
        keeps its own value there, and the comparison shows what it was."""
        if not self._adapter.is_floating(like):  # ids, lengths, indices: data, not a computed value
            self.kept_own += 1
            return None
        arr = self._trace.read(int(seq))
        if perm:
            arr = np.ascontiguousarray(np.transpose(arr, perm))
        ad = self._adapter
        if tuple(arr.shape) != tuple(like.shape):
            self.kept_own += 1
            logger.info("%s: record %s has shape %s, the module's tensor %s: the module keeps its own value",
                        self._trace.path, seq, list(arr.shape), list(like.shape))
            return None
        return ad.tensor_like(arr, ad.dtype_name(like), like)

    def inputs(self, step: int, path: str, idx: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        entry = self._calls.get(f"{step}|{path}|{idx}")
        if not entry or not entry.get("inputs"):
            return None
        ad = self._adapter
        local = dict(flatten_call(args, kwargs, ad.is_tensor))
        replace = {}
        for pos, seq, perm in entry["inputs"]:
            leaf = local.get(pos)
            if ad.is_tensor(leaf):
                value = self._value(seq, perm, leaf)
                if value is not None:
                    replace[pos] = ad.straight_through(leaf, value)
        if not replace:
            return None
        self.replaced_inputs += len(replace)
        new_args = rebuild(tuple(args), "args", replace, ad.is_tensor)
        new_kwargs = {k: rebuild(v, f'kwargs["{k}"]', replace, ad.is_tensor, 1) for k, v in kwargs.items()}
        return tuple(new_args), new_kwargs

    def grad(self, step: int, path: str, idx: int, position: str, own: Any) -> Any | None:
        entry = self._calls.get(f"{step}|{path}|{idx}")
        if not entry:
            return None
        for pos, seq, perm in entry.get("grads", ()):
            if pos == position:
                value = self._value(seq, perm, own)
                self.replaced_grads += value is not None
                return value
        return None
