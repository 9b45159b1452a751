"""What the shared recorder needs from a framework; one thin adapter per framework.

Adapters are registered by name with the module they live in and imported only
when a model of that framework is recorded (``detect`` looks at the model's class
hierarchy without importing anything).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from padiff_trace import Deferred, UserError

__all__ = ["Adapter", "HostTensor", "detect", "get_adapter"]

_ADAPTERS = {"torch": "padiff_trace.recorder.torch_", "paddle": "padiff_trace.recorder.paddle_"}

HostTensor = tuple["np.ndarray | Deferred", str, tuple[int, ...], str]  # data, logical dtype, shape, device

PreHook = Callable[[Any, tuple[Any, ...], dict[str, Any]], None]
PostHook = Callable[[Any, tuple[Any, ...], dict[str, Any], Any], None]


class Adapter(ABC):
    """Converts between one framework and the recorder; holds no recording state."""

    name: str
    # Python frames the framework adds to every module call once it has hooks (compensated in
    # the recursion limit while recording, so a deep model recurses as deep as it does bare)
    hook_frames: int = 0
    # in-place changes the framework's counter does not count (a collective writing into its tensor,
    # ``_collectives``): part of ``tensor_version``, so no host copy taken before one stands for after it
    untracked_changes: int = 0

    @abstractmethod
    def version(self) -> str: ...

    def numerics(self) -> dict[str, Any]:
        """The framework's settings that can change numbers, as they are now: ``{key: value}``
        with keys ``"<name>.<setting>"`` documented in ``padiff_trace.matching.NUMERICS_EFFECTS``
        (TF32, threads, oneDNN, determinism flags; trace meta ``numerics``, see ``_numerics``)."""
        return {}

    def process_group(self) -> tuple[int, int, str | None] | None:
        """(rank, world size, backend) of the framework's initialised default process group, or
        None when it has none (``_distributed``: a launcher's environment is read besides)."""
        return None

    def end_process_group(self) -> None:
        """Close the default process group a spec opened, once its recording is written (a spec
        process exits next; a group left to the interpreter's exit can abort it). None to close: nothing."""
        return None

    @abstractmethod
    def framework_modules(self) -> list[Any]:
        """The framework's top-level module(s), whose frames are hidden from stacks."""

    @abstractmethod
    def call_plumbing(self) -> tuple[str, ...]:
        """Framework files that only dispatch a module/op call (never a call site)."""

    @abstractmethod
    def is_tensor(self, x: Any) -> bool: ...

    @abstractmethod
    def to_host(self, t: Any) -> HostTensor:
        """A private host copy of ``t`` (later in-place changes of ``t`` must not show)."""

    def host_view(self, t: Any) -> tuple[np.ndarray, str, tuple[int, ...], str] | None:
        """A zero-copy host view of ``t`` (array in storage dtype, logical dtype, shape, device)
        when the tensor already lives in host memory, else None. Only read synchronously
        (statistics of a record that keeps no data), never queued."""
        return None

    @abstractmethod
    def tensor_version(self, t: Any) -> int:
        """The tensor's in-place modification counter (plus ``untracked_changes``)."""

    def storage_key(self, t: Any) -> Hashable | None:
        """What identifies the bytes ``t`` shows (address, shape, strides, dtype, device), for a
        framework that hands out several wrapper objects of one tensor (paddle gives each grad
        hook its own); None when object identity suffices. Only compared while the earlier
        wrapper is alive, so the address cannot have been reused."""
        return None

    @abstractmethod
    def requires_grad(self, t: Any) -> bool: ...

    @abstractmethod
    def register_grad_hook(self, t: Any, fn: Callable[[Any], None]) -> Any: ...

    @abstractmethod
    def named_modules(self, model: Any) -> Iterator[tuple[str, Any]]: ...

    @abstractmethod
    def module_aliases(self, model: Any) -> Iterator[tuple[str, Any]]:
        """Every path a module is registered under: one instance held by two parents appears twice."""

    @abstractmethod
    def register_forward_hooks(self, module: Any, pre: PreHook, post: PostHook) -> list[Any]:
        """Hooks around every call; ``post`` must also run when forward raises."""

    @abstractmethod
    def named_state(self, model: Any) -> Iterator[tuple[str, Any, bool]]:
        """(full name, tensor, is_parameter) for every parameter and buffer, deduplicated."""

    def nonpersistent_buffers(self, model: Any) -> set[str]:
        """Full names of buffers kept out of the state dict (derived state: position ids, rotary
        tables). The weight matcher never copies them."""
        return set()

    @abstractmethod
    def grad_of(self, param: Any) -> Any | None: ...

    @abstractmethod
    def device_of(self, model: Any) -> str: ...

    @abstractmethod
    def default_dtype(self) -> str: ...

    @abstractmethod
    def tensor_like(self, arr: np.ndarray, dtype: str, like: Any) -> Any:
        """A new tensor holding ``arr`` as logical ``dtype``, on ``like``'s device and
        requiring grad when ``like`` does."""

    @abstractmethod
    def assign(self, target: Any, arr: np.ndarray, index: slice | None = None) -> None:
        """Copy ``arr`` into a parameter/buffer in place (optionally into rows ``index``)."""

    @abstractmethod
    def intercept_ops(
        self, on_op: Callable[[str, tuple[Any, ...], dict[str, Any], Any], None], internal: Callable[[str], bool]
    ) -> AbstractContextManager[Any]:
        """While active, call ``on_op(name, args, kwargs, out)`` after every framework op
        whose calling frame's file is not ``internal``."""

    @abstractmethod
    def straight_through(self, local: Any, value: Any) -> Any:
        """A tensor equal to ``value`` whose gradient flows unchanged into ``local``."""

    @abstractmethod
    def seed(self, seed: int) -> None: ...

    @abstractmethod
    def no_grad(self) -> AbstractContextManager[Any]: ...

    def autocast(self, dtype: str, device: str = "cpu") -> AbstractContextManager[Any]:
        """The framework's autocast (AMP level O1) in float ``dtype`` ("bfloat16", "float16")
        for a model on ``device`` (as ``device_of`` names it); forward and loss run inside it,
        backward outside (both frameworks' recommendation)."""
        raise UserError(f"{self.name}: autocast is not supported by this adapter")

    def autocast_active(self, device: str = "cpu") -> bool | None:
        """Inside ``autocast``: whether the framework's autocast is on for ``device`` (a framework
        may turn it off where its AMP does not run); None where the framework cannot tell."""
        return None

    @abstractmethod
    def zero_grad(self, model: Any, optimizer: Any | None) -> None: ...

    @abstractmethod
    def cast_model(self, model: Any, dtype: str) -> None:
        """The model's floating parameters and buffers in ``dtype``, and the framework's default
        dtype with them: a float64 run (the referee) is float64 throughout, also in tensors the
        model's code creates without a dtype (HF's causal mask filled with ``finfo(dtype).min``)."""

    @abstractmethod
    def cast_tensor(self, t: Any, dtype: str) -> Any:
        """``t`` converted to float ``dtype`` (a leaf keeps its requires-grad flag)."""

    def is_floating(self, t: Any) -> bool:
        return "float" in self.dtype_name(t)

    @abstractmethod
    def dtype_name(self, t: Any) -> str: ...

    def remove(self, handles: list[Any]) -> None:
        for h in handles:
            h.remove()


def detect(model: Any) -> str:
    """'torch' or 'paddle', from the model's class hierarchy (no import)."""
    for cls in type(model).__mro__:
        top = (cls.__module__ or "").split(".")[0]
        if top in _ADAPTERS:
            return top
    raise UserError(
        f"cannot tell the framework of model type {type(model).__module__}.{type(model).__qualname__}: "
        "expected a torch.nn.Module or a paddle.nn.Layer"
    )


def get_adapter(name: str) -> Adapter:
    """The adapter of framework ``name`` ('torch' or 'paddle'); imports that framework."""
    try:
        mod = importlib.import_module(_ADAPTERS[name])
    except KeyError:
        raise UserError(f"unknown framework {name!r}; known: {', '.join(_ADAPTERS)}") from None
    adapter: Adapter = mod.make_adapter()
    return adapter
