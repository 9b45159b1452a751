"""Randomness inside forward, recorded on one side and replayed on the other.

Two correct models in train mode draw their own dropout masks: nothing after the first
dropout can be compared. The recorder therefore records every random draw made inside a
module's forward (a dropout's keep-mask, the values of ``rand``-like calls) as a
``Kind.RANDOM`` record, and a recorder given ``random_from=TRACE`` replays the draws of
that trace at its own matching calls: the k-th draw of a given kind and shape in a step on
one side is the k-th draw of that kind and shape on the other.

Recording never changes the recorded model's numbers: the original function runs and the
mask is read off its output (``out != 0``, and where the input was already 0, kept: the
value is 0 either way). A replaying model keeps its own ``p`` and scaling convention, so a
dropout probability that differs still shows at that module. Randomness inside a fused
kernel (attention with ``dropout_p``) cannot be replayed; it is recorded as such (no data)
and the report names the module.

What is intercepted is data: ``RANDOM_OPS`` below, one list per framework.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from padiff_trace import Kind, UserError, open_trace

from ._adapter import Adapter
from ._patch import patched

__all__ = ["RANDOM_OPS", "RandomOp", "RandomSource", "intercept_random", "REPLAYED", "DRAWN", "FUSED", "OFF", "rated"]

logger = logging.getLogger(__name__)

# the position of a RANDOM record says what happened at that draw
DRAWN = "drawn"  # the model drew its own numbers (recorded: the mask or the values)
REPLAYED = "replayed"  # the numbers came from the source trace
FUSED = "fused"  # randomness inside a kernel: neither recorded nor replayable
OFF = "off"  # a dropout called in training with a rate of 0: nothing drawn (no data), its place recorded


@dataclass(frozen=True)
class RandomOp:
    """One framework function that draws random numbers.

    ``how``: "mask" (a dropout: keep-mask times a scale), "value" (returns random numbers),
    "inplace" (a tensor method that fills itself), "fused" (randomness inside a kernel).
    ``p``/``training``/``mode``: argument names read from the call (bound by signature)."""

    owner: str
    name: str
    how: str
    p: str = "p"
    training: str | None = "training"
    mode: str | None = None  # paddle's "upscale_in_train" / "downscale_in_infer"


def _ops(owner: str, how: str, *names: str, **kw: Any) -> tuple[RandomOp, ...]:
    return tuple(RandomOp(owner, n, how, **kw) for n in names)


RANDOM_OPS: dict[str, tuple[RandomOp, ...]] = {
    "torch": (
        *_ops("torch.nn.functional", "mask", "dropout", "dropout1d", "dropout2d", "dropout3d"),
        *_ops("torch.nn.functional", "fused", "alpha_dropout", "feature_alpha_dropout"),
        RandomOp("torch.nn.functional", "scaled_dot_product_attention", "fused", p="dropout_p", training=None),
        *_ops("torch", "value", "rand", "randn", "rand_like", "randn_like", "bernoulli", "randint", "randint_like",
              "normal", "randperm", "multinomial"),
        *_ops("torch.Tensor", "inplace", "bernoulli_", "uniform_", "normal_", "exponential_", "geometric_"),
    ),
    "paddle": (
        RandomOp("paddle.nn.functional", "dropout", "mask", mode="mode"),
        *_ops("paddle.nn.functional", "mask", "dropout2d", "dropout3d"),
        *_ops("paddle.nn.functional", "fused", "alpha_dropout", "feature_alpha_dropout"),
        RandomOp("paddle.nn.functional", "scaled_dot_product_attention", "fused", p="dropout_p"),
        *_ops("paddle", "value", "rand", "randn", "uniform", "normal", "standard_normal", "bernoulli", "randint",
              "randint_like", "randperm", "multinomial", "poisson"),
        *_ops("paddle.Tensor", "inplace", "bernoulli_", "uniform_", "normal_", "exponential_"),
    ),
}


class Site(Protocol):
    """What the interceptor needs from the recorder."""

    def random_site(self) -> tuple[str, int] | None:
        """(innermost module path, step) while a module's forward runs, else None."""

    def emit_random(self, step: int, module: str, op: str, index: int, what: str, value: Any) -> None:
        """Record one draw (``value``: a tensor, or None for a fused one)."""


class RandomSource:
    """The draws recorded in another trace, by step, kind and shape, in call order."""

    def __init__(self, path: str, wait: float = 0.0) -> None:
        self.path = path
        self.wait = wait  # seconds to wait for the source's recorder to finish (run --concurrent)
        self._steps: dict[int, dict[tuple[str, tuple[int, ...]], list[Any]]] = {}
        self._used: dict[int, defaultdict[tuple[str, tuple[int, ...]], int]] = defaultdict(lambda: defaultdict(int))
        self._trace: Any = None

    def close(self) -> None:
        if self._trace is not None:
            self._trace.close()
            self._trace = None

    def _load(self, step: int) -> dict[tuple[str, tuple[int, ...]], list[Any]]:
        if step not in self._steps:
            if self.wait > 0:
                _wait_complete(self.path, self.wait)
                self.wait = 0.0
            table: dict[tuple[str, tuple[int, ...]], list[Any]] = defaultdict(list)
            if self._trace is None:  # opened once: the source is complete (waited for above)
                self._trace = open_trace(self.path)
            for r in self._trace.select(kind=Kind.RANDOM, step=step):
                if r.has_data and r.position in (DRAWN, REPLAYED):
                    table[(_family(r.module_type), tuple(r.shape))].append(r.read())
            self._steps = {step: table}  # one step held at a time
        return self._steps[step]

    def take(self, step: int, family: str, shape: tuple[int, ...]) -> np.ndarray | None:
        """The next recorded draw of ``family`` and ``shape`` in ``step``, or None."""
        key = (family, shape)
        i = self._used[step][key]
        draws = self._load(step).get(key, [])
        if i >= len(draws):
            return None
        self._used[step][key] = i + 1
        return np.asarray(draws[i])


def _wait_complete(path: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(UserError, OSError), open_trace(path) as tr:
            if tr.complete:
                return
        if time.monotonic() >= deadline:
            raise UserError(f"{path}: its recording did not finish within {timeout:g} s; its random draws cannot be replayed")
        time.sleep(0.1)


def _family(op: str) -> str:
    """Draws pair within a family: every dropout is a mask, a value draw pairs by its op."""
    op = op.split(" ", 1)[0]  # a dropout's rate after its name (``rated``)
    return "mask" if op.startswith("dropout") or op.endswith("dropout") else op


def rated(op: str, p: float) -> str:
    """A dropout's op name as recorded: its name and the rate it was called with (``dropout
    p=0.1``), so that two traces' rates can be set side by side (``analyzer``'s ``_rates``)."""
    return f"{op} p={p:g}"


def _resolve(owner: str) -> Any:
    mod, _, attr = owner.rpartition(".")
    if attr == "Tensor":
        return importlib.import_module(mod).Tensor
    return importlib.import_module(owner)


class _Interceptor:
    def __init__(self, adapter: Adapter, site: Site, source: RandomSource | None) -> None:
        self.adapter, self.site, self.source = adapter, site, source
        self.counts: defaultdict[int, int] = defaultdict(int)  # draws per step

    def index(self, step: int) -> int:
        i = self.counts[step]
        self.counts[step] = i + 1
        return i

    def wrap(self, op: RandomOp, original: Any) -> Callable[..., Any]:
        sig = _signature(original)
        handler = {"mask": self._mask, "value": self._value, "inplace": self._inplace, "fused": self._fused}[op.how]

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            where = self.site.random_site()
            if where is None:  # outside the model's forward (data, initialisation): untouched
                return original(*args, **kwargs)
            return handler(op, original, sig, where, args, kwargs)

        wrapper.__padiff_original__ = original  # type: ignore[attr-defined]
        return wrapper

    def _mask(self, op: RandomOp, original: Any, sig: inspect.Signature | None, where: tuple[str, int],
              args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        bound = _bind(sig, args, kwargs)
        if bound is None or (not args and not kwargs):
            return original(*args, **kwargs)
        values = list(bound.values())
        x = values[0]
        p = float(bound.get(op.p, 0.5) or 0.0)
        training = bool(bound.get(op.training, True)) if op.training else True
        if not self.adapter.is_tensor(x) or not training:
            return original(*args, **kwargs)
        module, step = where
        name = rated(op.name, p)
        if p <= 0.0:  # called in training with a rate of 0: no draw, but where the other side's may be
            self.site.emit_random(step, module, name, self.index(step), OFF, None)
            return original(*args, **kwargs)
        shape = tuple(x.shape)
        replay = self.source.take(step, "mask", shape) if self.source is not None else None
        index = self.index(step)
        if replay is None:
            zero = x == 0  # where the input is 0 the mask cannot be read off the output: kept
            out = original(*args, **kwargs)
            self.site.emit_random(step, module, name, index, DRAWN, (out != 0) | zero)
            return out
        mode = str(bound.get(op.mode, "upscale_in_train")) if op.mode else "upscale_in_train"
        scale = 0.0 if p >= 1.0 else (1.0 / (1.0 - p) if mode == "upscale_in_train" else 1.0)
        keep = np.asarray(replay, dtype=bool)
        factor = self.adapter.tensor_like(keep.astype(np.float64) * scale, self.adapter.dtype_name(x), x.detach())
        self.site.emit_random(step, module, name, index, REPLAYED, factor != 0)
        return x * factor

    def _value(self, op: RandomOp, original: Any, sig: inspect.Signature | None, where: tuple[str, int],
               args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = original(*args, **kwargs)
        if not self.adapter.is_tensor(out):
            return out
        return self._replace(op, where, out, lambda arr: self.adapter.tensor_like(arr, self.adapter.dtype_name(out), out))

    def _inplace(self, op: RandomOp, original: Any, sig: inspect.Signature | None, where: tuple[str, int],
                 args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = original(*args, **kwargs)
        if not self.adapter.is_tensor(out):
            return out

        def fill(arr: np.ndarray) -> Any:
            with self.adapter.no_grad():
                self.adapter.assign(out, arr)
            return out

        return self._replace(op, where, out, fill)

    def _replace(self, op: RandomOp, where: tuple[str, int], out: Any, put: Callable[[np.ndarray], Any]) -> Any:
        module, step = where
        shape = tuple(out.shape)
        replay = self.source.take(step, op.name, shape) if self.source is not None else None
        index = self.index(step)
        if replay is None:
            self.site.emit_random(step, module, op.name, index, DRAWN, out)
            return out
        new = put(replay)
        self.site.emit_random(step, module, op.name, index, REPLAYED, new)
        return new

    def _fused(self, op: RandomOp, original: Any, sig: inspect.Signature | None, where: tuple[str, int],
               args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        bound = _bind(sig, args, kwargs) or kwargs  # a builtin (torch's sdpa) has no signature: its keywords
        p = float(bound.get(op.p, 0.0) or 0.0) if op.p else 1.0
        training = bool(bound.get(op.training, True)) if op.training else True
        if p > 0.0 and training:
            module, step = where
            self.site.emit_random(step, module, op.name, self.index(step), FUSED, None)
        return original(*args, **kwargs)


def _signature(fn: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature
        return None


def _bind(sig: inspect.Signature | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    if sig is None:
        return None
    try:
        b = sig.bind(*args, **kwargs)
    except TypeError:
        return None
    b.apply_defaults()
    return dict(b.arguments)


def intercept_random(adapter: Adapter, site: Site, source: str | None = None, wait: float = 0.0) -> contextlib.ExitStack:
    """While active, every random draw inside a module's forward is recorded through ``site``;
    with ``source`` (a trace), draws recorded there are replayed. Restores the originals on exit."""
    src = RandomSource(source, wait) if source is not None else None
    it = _Interceptor(adapter, site, src)
    stack = contextlib.ExitStack()
    if src is not None:
        stack.callback(src.close)
    stack.enter_context(patched(
        (owner, op.name, functools.partial(it.wrap, op))
        for op in RANDOM_OPS.get(adapter.name, ())
        for owner in _owners(op.owner)
    ))
    return stack


def _owners(path: str) -> list[Any]:
    """The module or class at ``path`` (none when this framework build lacks it)."""
    try:
        return [_resolve(path)]
    except ImportError:
        return []
