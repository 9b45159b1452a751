"""PaddlePaddle adapter. Imported only when a paddle model is recorded."""

from __future__ import annotations

import contextlib
import functools
import logging
import warnings
from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import paddle

from ._adapter import Adapter, HostTensor, PostHook, PreHook

__all__ = ["PaddleAdapter", "make_adapter"]

logger = logging.getLogger(__name__)

_BN_STATS = ("_mean", "_variance")


class PaddleAdapter(Adapter):
    name = "paddle"
    hook_frames = 2  # Layer.__call__ goes through _dygraph_call_func and inner() when hooks exist

    def version(self) -> str:
        return str(paddle.__version__)

    def numerics(self) -> dict[str, Any]:
        from padiff_trace.matching import NUMERICS_EFFECTS  # the curated flags: keys "paddle.FLAGS_*"

        core = paddle.base.core
        cuda = paddle.is_compiled_with_cuda()
        probes: dict[str, Callable[[], Any]] = {
            "paddle.version": self.version,
            "paddle.cuda": lambda: paddle.version.cuda() if cuda else None,
            "paddle.cudnn": lambda: paddle.version.cudnn() if cuda else None,
            "paddle.onednn": getattr(core, "is_compiled_with_onednn", None) or core.is_compiled_with_mkldnn,
            "paddle.num_threads": lambda: paddle.get_num_threads() if hasattr(paddle, "get_num_threads") else None,
        }
        for key in NUMERICS_EFFECTS:
            if key.startswith("paddle.FLAGS_") and not key.endswith("*"):
                probes[key] = functools.partial(_flag, key.removeprefix("paddle."))
        out: dict[str, Any] = {}
        for key, probe in probes.items():
            try:
                value = probe()
            except Exception:  # a flag or API this paddle lacks: not recorded
                continue
            if value is not None:
                out[key] = value if isinstance(value, (bool, int, float)) else str(value)
        return out

    def process_group(self) -> tuple[int, int, str | None] | None:
        dist = paddle.distributed
        if not dist.is_initialized():
            return None
        return dist.get_rank(), dist.get_world_size(), str(dist.get_backend())

    def framework_modules(self) -> list[Any]:
        return [paddle]

    def call_plumbing(self) -> tuple[str, ...]:
        import paddle.utils.decorator_utils as deco
        from paddle.nn.layer import layers

        return (layers.__file__ or "", deco.__file__ or "")

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, paddle.Tensor)

    def dtype_name(self, t: Any) -> str:
        return str(t.dtype).removeprefix("paddle.")

    def to_host(self, t: Any) -> HostTensor:
        # Tensor.numpy() returns a private host copy (bfloat16 as its uint16 bits).
        # On GPU paddle offers no event-based async copy through its public API, so
        # this synchronises; untested here (CPU-only machines), see README.
        shape = tuple(t.shape)
        device = _place(t)
        logical = self.dtype_name(t)
        arr = np.ascontiguousarray(t.detach().numpy())
        if logical == "bfloat16" and arr.dtype != np.uint16:
            arr = arr.view(np.uint16)
        return arr, logical, shape, device

    def tensor_version(self, t: Any) -> int:
        return int(t._inplace_version()) + (self.untracked_changes << 32)  # shared by all wrappers of one tensor

    def storage_key(self, t: Any) -> Hashable | None:
        try:
            return (t.data_ptr(), tuple(t.shape), tuple(t.strides), str(t.dtype), str(t.place))
        except (AttributeError, RuntimeError, ValueError):
            return None

    def requires_grad(self, t: Any) -> bool:
        return not bool(t.stop_gradient)

    def register_grad_hook(self, t: Any, fn: Callable[[Any], None]) -> Any:
        return t.register_hook(fn)

    def named_modules(self, model: Any) -> Iterator[tuple[str, Any]]:
        return iter(model.named_sublayers(include_self=True))

    def module_aliases(self, model: Any) -> Iterator[tuple[str, Any]]:
        # named_sublayers lists a shared layer once; walk the children for every path
        todo: list[tuple[str, Any, tuple[int, ...]]] = [("", model, ())]
        while todo:
            path, layer, seen = todo.pop()
            yield path, layer
            above = (*seen, id(layer))  # a layer holding one of its ancestors is not walked into
            kids = [(f"{path}.{n}" if path else n, c) for n, c in layer.named_children()]
            todo.extend((p, c, above) for p, c in reversed(kids) if id(c) not in above)

    def register_forward_hooks(self, module: Any, pre: PreHook, post: PostHook) -> list[Any]:
        return [
            module.register_forward_pre_hook(pre, with_kwargs=True),
            module.register_forward_post_hook(post, with_kwargs=True, always_call=True),
        ]

    def named_state(self, model: Any) -> Iterator[tuple[str, Any, bool]]:
        for name, p in model.named_parameters():
            # BatchNorm running statistics are non-trainable parameters in paddle; they
            # are buffers in torch. Record them as buffers on both sides.
            is_param = not (name.rsplit(".", 1)[-1] in _BN_STATS and not p.trainable)
            yield name, p, is_param
        for name, b in model.named_buffers():
            if not b._is_initialized():  # a placeholder with no memory (an RNN's ``_dropout_state``)
                continue
            yield name, b, False

    def nonpersistent_buffers(self, model: Any) -> set[str]:
        out: set[str] = set()
        for path, m in self.named_modules(model):
            for n in getattr(m, "_non_persistable_buffer_names_set", ()) or ():
                out.add(f"{path}.{n}" if path else n)
        return out

    def grad_of(self, param: Any) -> Any | None:
        return param.grad

    def device_of(self, model: Any) -> str:
        for p in model.parameters():
            return _place(p)
        return "cpu"

    def default_dtype(self) -> str:
        return str(paddle.get_default_dtype())

    def tensor_like(self, arr: np.ndarray, dtype: str, like: Any) -> Any:
        if dtype == "bfloat16":  # the reader decodes bfloat16 to float32, losslessly
            t = paddle.to_tensor(np.asarray(arr, dtype=np.float32), place=like.place).astype("bfloat16")
        else:
            t = paddle.to_tensor(np.array(arr, copy=True), dtype=dtype, place=like.place)
        t.stop_gradient = like.stop_gradient
        return t

    def assign(self, target: Any, arr: np.ndarray, index: slice | None = None) -> None:
        if index is not None:
            full = target.numpy()
            full[index] = arr
            arr = full
        if tuple(target.shape) != tuple(arr.shape):
            raise ValueError(f"shape {tuple(arr.shape)} does not fit {tuple(target.shape)}")
        with paddle.no_grad():
            target.set_value(np.require(arr, requirements="C").astype(target.numpy().dtype, copy=False))

    def seed(self, seed: int) -> None:
        paddle.seed(seed)

    def straight_through(self, local: Any, value: Any) -> Any:
        if local.stop_gradient:
            return value
        return _StraightThrough.apply(local, value.detach())

    def intercept_ops(
        self, on_op: Callable[[str, tuple[Any, ...], dict[str, Any], Any], None], internal: Callable[[str], bool]
    ) -> AbstractContextManager[Any]:
        from .paddle_ops import intercept_paddle_ops

        return intercept_paddle_ops(on_op, internal)

    def no_grad(self) -> AbstractContextManager[Any]:
        return paddle.no_grad()

    def autocast(self, dtype: str, device: str = "cpu") -> AbstractContextManager[Any]:
        return _auto_cast(dtype)

    def autocast_active(self, device: str = "cpu") -> bool | None:
        return bool(paddle.amp.is_autocast_enabled())

    def zero_grad(self, model: Any, optimizer: Any | None) -> None:
        if optimizer is not None:
            optimizer.clear_grad()
        else:
            model.clear_gradients()

    def cast_model(self, model: Any, dtype: str) -> None:
        # paddle's Layer.to(dtype=) casts integer buffers too (a relative-position index, position
        # ids), and fails on a buffer holding no memory yet (nn.LSTM's dropout state); torch's
        # casts floating tensors only: those are set aside and put back as they were
        kept = []
        for layer in model.sublayers(include_self=True):
            for name, buf in list(layer._buffers.items()):
                if buf is not None and (not buf._is_initialized() or not buf.is_floating_point()):
                    kept.append((layer, name, buf if not buf._is_initialized() else buf.clone()))  # .to casts in place
                    del layer._buffers[name]
        try:
            model.to(dtype=dtype)
        finally:
            for layer, name, buf in kept:
                layer._buffers[name] = buf
        paddle.set_default_dtype(dtype)

        def own_dtype(layer: Any, inputs: tuple[Any, ...]) -> Any:
            # the model's own code made a tensor in another dtype (``.astype("float32")``): the
            # layer would refuse it against its cast weights
            odd = [isinstance(t, paddle.Tensor) and t.is_floating_point() and not str(t.dtype).endswith(dtype)
                   for t in inputs]
            return tuple(t.astype(dtype) if o else t for t, o in zip(inputs, odd)) if any(odd) else None

        for layer in model.sublayers(include_self=True):  # only layers with floating weights of their own
            if any(p.is_floating_point() for p in layer.parameters(include_sublayers=False)):
                layer.register_forward_pre_hook(own_dtype)

    def cast_tensor(self, t: Any, dtype: str) -> Any:
        out = t.detach().astype(dtype)
        out.stop_gradient = t.stop_gradient
        return out


class _StraightThrough(paddle.autograd.PyLayer):
    """Forward: the replacement value, exactly. Backward: the gradient, to the original."""

    @staticmethod
    def forward(ctx: Any, local: Any, value: Any) -> Any:
        return value.clone()

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return grad


@contextlib.contextmanager
def _auto_cast(dtype: str) -> Iterator[None]:
    """``paddle.amp.auto_cast`` at level O1. Paddle turns it off where its AMP does not run (CPU
    places), warning at every step; the recorder says it once (``autocast_active``)."""
    with contextlib.ExitStack() as stack:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="amp_guard can only be enabled")
            stack.enter_context(paddle.amp.auto_cast(enable=True, level="O1", dtype=dtype))
        yield


def _place(t: Any) -> str:
    text = str(t.place)
    return text[len("Place(") : -1] if text.startswith("Place(") else text


def _flag(name: str) -> Any:
    """A paddle flag's value (ValueError: a flag this paddle does not have)."""
    return paddle.get_flags([name])[name]


def make_adapter() -> PaddleAdapter:
    return PaddleAdapter()
