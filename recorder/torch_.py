"""PyTorch adapter. Imported only when a torch model is recorded."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from types import FrameType
from typing import Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from padiff_trace import Deferred

from . import _random
from ._adapter import Adapter, HostTensor, PostHook, PreHook
from .torch_nodes import NodeKeeper

__all__ = ["TorchAdapter", "make_adapter"]

_BITS: dict[Any, tuple[Any, Any, str]] = {torch.bfloat16: (torch.int16, np.uint16, "bfloat16")}
for _name, _np in (("float8_e4m3fn", np.uint8), ("float8_e5m2", np.uint8)):
    if hasattr(torch, _name):
        _BITS[getattr(torch, _name)] = (torch.uint8, _np, _name)

_NP_TO_TORCH = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "bool": torch.bool,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
}


class TorchAdapter(Adapter):
    name = "torch"
    hook_frames = 1  # nn.Module._call_impl runs forward through an inner() closure when hooks exist

    def __init__(self) -> None:
        # the autograd nodes this recording hooked, freed one at a time (torch_nodes.py: a chain of
        # ~40k hooked nodes freed at once overflows the C stack)
        self._nodes = NodeKeeper()

    def version(self) -> str:
        return str(torch.__version__)

    def numerics(self) -> dict[str, Any]:
        b = torch.backends
        probes: dict[str, Callable[[], Any]] = {  # keys: NUMERICS_EFFECTS "torch.*"
            "torch.version": self.version,
            "torch.cuda": lambda: torch.version.cuda,
            "torch.cudnn": lambda: b.cudnn.version() if b.cudnn.is_available() else None,
            "torch.matmul_allow_tf32": lambda: bool(b.cuda.matmul.allow_tf32),
            "torch.cudnn_allow_tf32": lambda: bool(b.cudnn.allow_tf32),
            "torch.float32_matmul_precision": torch.get_float32_matmul_precision,
            "torch.matmul_allow_fp16_reduced_precision_reduction":
                lambda: bool(b.cuda.matmul.allow_fp16_reduced_precision_reduction),
            "torch.matmul_allow_bf16_reduced_precision_reduction":
                lambda: bool(b.cuda.matmul.allow_bf16_reduced_precision_reduction),
            "torch.cudnn_deterministic": lambda: bool(b.cudnn.deterministic),
            "torch.cudnn_benchmark": lambda: bool(b.cudnn.benchmark),
            "torch.deterministic_algorithms": torch.are_deterministic_algorithms_enabled,
            "torch.num_threads": torch.get_num_threads,
            "torch.num_interop_threads": torch.get_num_interop_threads,
            "torch.mkldnn_enabled": lambda: bool(b.mkldnn.enabled) and b.mkldnn.is_available(),
            "torch.cpu_capability": lambda: b.cpu.get_cpu_capability(),  # noqa: PLW0108 (an older torch lacks it)
        }
        out: dict[str, Any] = {}
        for key, probe in probes.items():
            try:
                value = probe()
            except Exception:  # an API this torch lacks: not recorded
                continue
            if value is not None:
                out[key] = value if isinstance(value, (bool, int, float)) else str(value)
        return out

    def process_group(self) -> tuple[int, int, str | None] | None:
        dist = torch.distributed
        if not (dist.is_available() and dist.is_initialized()):
            return None
        return dist.get_rank(), dist.get_world_size(), str(dist.get_backend())

    def end_process_group(self) -> None:
        dist = torch.distributed  # gloo's threads torn down at exit: "terminate called without an active exception"
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()

    def framework_modules(self) -> list[Any]:
        return [torch]

    def call_plumbing(self) -> tuple[str, ...]:
        return (torch.nn.modules.module.__file__ or "", torch.overrides.__file__ or "")

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, torch.Tensor)

    def dtype_name(self, t: Any) -> str:
        return str(t.dtype).removeprefix("torch.")

    def to_host(self, t: Any) -> HostTensor:
        t = t.detach()
        shape = tuple(t.shape)
        device = str(t.device)
        bits = _BITS.get(t.dtype)
        logical = bits[2] if bits else self.dtype_name(t)
        if bits:
            t = t.contiguous().view(bits[0])
        if t.device.type != "cpu":
            # Async copy into pinned memory; the writer thread waits on the event,
            # so the model's stream is never synchronised per tensor.
            host = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
            host.copy_(t, non_blocking=True)
            event = torch.cuda.Event() if t.device.type == "cuda" else None
            if event is not None:
                event.record()

            def fetch(host: torch.Tensor = host, event: Any = event, bits: Any = bits) -> np.ndarray:
                if event is not None:
                    event.synchronize()
                return _numpy_view(host, bits)

            return Deferred(host.numel() * host.element_size(), fetch), logical, shape, device
        return np.array(_numpy_view(t, bits), copy=True, order="C"), logical, shape, device

    def host_view(self, t: Any) -> tuple[np.ndarray, str, tuple[int, ...], str] | None:
        if t.device.type != "cpu" or t.is_conj() or t.is_neg() or t.layout != torch.strided:
            return None
        t = t.detach()
        bits = _BITS.get(t.dtype)
        try:
            arr = _numpy_view(t.contiguous().view(bits[0]) if bits else t, bits)
        except (TypeError, RuntimeError):
            return None
        return arr, bits[2] if bits else self.dtype_name(t), tuple(t.shape), "cpu"

    def tensor_version(self, t: Any) -> int:
        return int(t._version) + (self.untracked_changes << 32)

    def requires_grad(self, t: Any) -> bool:
        return bool(t.requires_grad)

    def register_grad_hook(self, t: Any, fn: Callable[[Any], None]) -> Any:
        handle = t.register_hook(fn)
        self._nodes.keep(t)
        return handle

    def remove(self, handles: list[Any]) -> None:
        """The session's teardown: its module hooks go, and the hooked nodes of graphs that are
        still alive are left to ``NodeKeeper`` until those graphs are freed."""
        super().remove(handles)
        self._nodes.close()

    def named_modules(self, model: Any) -> Iterator[tuple[str, Any]]:
        return iter(model.named_modules())

    def module_aliases(self, model: Any) -> Iterator[tuple[str, Any]]:
        return iter(model.named_modules(remove_duplicate=False))

    def register_forward_hooks(self, module: Any, pre: PreHook, post: PostHook) -> list[Any]:
        return [
            module.register_forward_pre_hook(pre, with_kwargs=True),
            module.register_forward_hook(post, with_kwargs=True, always_call=True),
        ]

    def named_state(self, model: Any) -> Iterator[tuple[str, Any, bool]]:
        for name, p in model.named_parameters():
            yield name, p, True
        for name, b in model.named_buffers():
            yield name, b, False

    def nonpersistent_buffers(self, model: Any) -> set[str]:
        out: set[str] = set()
        for path, m in self.named_modules(model):
            for n in getattr(m, "_non_persistent_buffers_set", ()) or ():
                out.add(f"{path}.{n}" if path else n)
        return out

    def grad_of(self, param: Any) -> Any | None:
        return param.grad

    def device_of(self, model: Any) -> str:
        for p in model.parameters():
            return str(p.device)
        return "cpu"

    def default_dtype(self) -> str:
        return self.dtype_name(torch.empty(0))

    def tensor_like(self, arr: np.ndarray, dtype: str, like: Any) -> Any:
        t = torch.from_numpy(np.array(arr, copy=True)).to(_NP_TO_TORCH.get(dtype, torch.float32))
        t = t.to(like.device)
        return t.requires_grad_(bool(like.requires_grad) and t.is_floating_point())

    def assign(self, target: Any, arr: np.ndarray, index: slice | None = None) -> None:
        with torch.no_grad():
            if getattr(target, "placements", None) is not None and hasattr(target, "to_local"):
                target = target.to_local()  # a DTensor: this rank's shard (no grad: the very local tensor)
            src = torch.from_numpy(np.require(arr, requirements="C")).to(dtype=target.dtype, device=target.device)
            dst = target if index is None else target[index]
            if tuple(dst.shape) != tuple(src.shape):
                raise ValueError(f"shape {tuple(src.shape)} does not fit {tuple(dst.shape)}")
            dst.copy_(src)

    def seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def straight_through(self, local: Any, value: Any) -> Any:
        if not local.requires_grad:
            return value
        return _StraightThrough.apply(local, value.detach())

    def intercept_ops(
        self, on_op: Callable[[str, tuple[Any, ...], dict[str, Any], Any], None], internal: Callable[[str], bool]
    ) -> AbstractContextManager[Any]:
        return _OpMode(on_op, internal)

    def no_grad(self) -> AbstractContextManager[Any]:
        return torch.no_grad()

    def autocast(self, dtype: str, device: str = "cpu") -> AbstractContextManager[Any]:
        # "cuda:0" -> "cuda"; CPU autocast supports bfloat16 and float16 (matmul/linear/conv)
        return torch.autocast(device_type=torch.device(device).type, dtype=_NP_TO_TORCH[dtype])

    def autocast_active(self, device: str = "cpu") -> bool | None:
        return bool(torch.is_autocast_enabled(torch.device(device).type))

    def zero_grad(self, model: Any, optimizer: Any | None) -> None:
        if optimizer is not None:
            optimizer.zero_grad(set_to_none=True)
        else:
            model.zero_grad(set_to_none=True)

    def cast_model(self, model: Any, dtype: str) -> None:
        want = _NP_TO_TORCH[dtype]
        model.to(want)
        torch.set_default_dtype(want)

        def cast(t: Any) -> Any:
            return t.to(want) if isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != want else t

        def own_dtype(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            # the model's own code made a tensor in another dtype (``one_hot(...).float()``): the
            # layer would refuse it against its cast weights
            if not any(isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != want
                       for t in (*args, *kwargs.values())):
                return None
            return tuple(cast(t) for t in args), {k: cast(v) for k, v in kwargs.items()}

        for m in model.modules():  # only layers with floating weights of their own (now ``want``)
            if any(p.is_floating_point() for p in m.parameters(recurse=False)):
                m.register_forward_pre_hook(own_dtype, prepend=True, with_kwargs=True)

    def cast_tensor(self, t: Any, dtype: str) -> Any:
        return t.detach().to(_NP_TO_TORCH[dtype]).requires_grad_(t.requires_grad)


_OVERRIDES = torch.overrides.__file__
_RANDOM = _random.__file__  # the recorder's randomness wrappers only pass a call on


class _StraightThrough(torch.autograd.Function):
    """Forward: the replacement value, exactly. Backward: the gradient, to the original."""

    @staticmethod
    def forward(ctx: Any, local: Any, value: Any) -> Any:
        return value.clone()

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return grad, None


class _OpMode(TorchFunctionMode):
    """Reports every torch function / Tensor method call (torch's own interception)."""

    def __init__(self, on_op: Callable[[str, tuple[Any, ...], dict[str, Any], Any], None], internal: Callable[[str], bool]) -> None:
        super().__init__()
        self._on_op = on_op
        self._internal = internal

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        frame: FrameType | None = sys._getframe(1)
        own = getattr(func, "__code__", None)
        while frame is not None and (frame.f_code.co_filename in (_OVERRIDES, _RANDOM) or frame.f_code is own):
            frame = frame.f_back
        if frame is not None and not self._internal(frame.f_code.co_filename):
            name = getattr(func, "__name__", None) or str(func)
            if name == "__get__":  # attribute access such as x.T
                name = getattr(getattr(func, "__self__", None), "__name__", name)
            self._on_op(name, args, kwargs, out)
        return out


def _numpy_view(t: Any, bits: Any) -> np.ndarray:
    """Zero-copy numpy view of a detached CPU tensor (already viewed as ``bits[0]`` when
    numpy lacks its dtype), in storage dtype."""
    arr = t.numpy()
    return arr.view(bits[1]) if bits else arr


def make_adapter() -> TorchAdapter:
    return TorchAdapter()
