"""The framework-independent recorder: hooks -> records -> trace writer."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import logging
import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from padiff_trace import Kind, Phase, RecordHeader, TraceWriteError, exit_reason

from ._adapter import Adapter
from ._aliases import Aliases, under_caller
from ._collectives import intercept_collectives
from ._distributed import place_recording
from ._nest import MAX_OP_SCALARS, flatten, flatten_call, op_scalar
from ._numerics import autocast_policy, numerics
from ._options import RecordOptions
from ._random import intercept_random
from ._replay import module_classes, pack_groups
from ._sink import RecordSink
from ._stack import StackCapture, with_headroom

__all__ = ["Recorder", "active_recorder"]

logger = logging.getLogger(__name__)

_ACTIVE: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar("padiff_trace_recorder", default=None)

def active_recorder() -> Recorder | None:
    return _ACTIVE.get()


@dataclasses.dataclass(slots=True)
class _Call:
    call: int
    path: str  # the path it is recorded under: for a shared instance, where its caller holds it
    hooked: str  # the path its hooks were registered with (``named_modules``)
    mtype: str
    call_index: int
    stack: tuple[Any, ...]


class Recorder:
    """Records one model into one trace. Use through ``recorder.record(...)``."""

    def __init__(
        self,
        model: Any,
        path: str | os.PathLike[str],
        adapter: Adapter,
        options: RecordOptions,
        meta: dict[str, Any] | None = None,
        overwrite: bool = False,
        single_step: Any | None = None,
        random_from: str | None = None,
        random_wait: float = 0.0,
    ) -> None:
        self.path = Path(path)
        self._random_from = random_from  # a trace whose random draws (dropout masks) are replayed
        self._random_wait = random_wait
        self._single = single_step  # a SingleStep plan: replaces inputs and output grads
        self.options = options
        self._adapter = adapter
        self._model: Any = model
        self._extra_meta = dict(meta or {})
        self._overwrite = overwrite
        self._sink = RecordSink(adapter, options)
        self._handles: list[Any] = []
        self._base_limit: int | None = None  # the recursion limit before recording (restored after)
        self._types: dict[str, str] = {}
        self._stack = StackCapture(adapter.framework_modules(), full=options.full_stack, plumbing=adapter.call_plumbing())
        self._calls: list[_Call] = []
        self._ops_seen = 0  # op calls with a tensor result made inside a module's forward
        self._call_counts: Counter[str] = Counter()
        self._next_call = 0
        self._step = 0
        self._grads_done = False
        self._replay_flushed = False  # step 0 weights+inputs flushed to a shard early, for a concurrent replay
        self._token: contextvars.Token[Recorder | None] | None = None
        self._ops: contextlib.ExitStack | None = None
        self._device = "cpu"  # the model's device (``__enter__``): autocast's device type

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Recorder:
        ad, model, opts = self._adapter, self._model, self.options
        meta = {
            "framework": ad.name,
            "framework_version": ad.version(),
            "device": ad.device_of(model),
            "default_dtype": ad.default_dtype(),
            "model_type": type(model).__name__,
            "seed": opts.seed,
            "tags": dict(opts.tags),
            "options": {"stats_only": opts.stats_only, "weights": opts.weights, "every": opts.every},
            # what the weight matcher needs beyond the records: class hierarchies, frozen
            # parameters, buffers outside the state dict
            "module_classes": module_classes(ad, model),
            "pack_groups": pack_groups(ad, model),
            "frozen": [n for n, t, is_param in ad.named_state(model) if is_param and not ad.requires_grad(t)],
            "nonpersistent": sorted(ad.nonpersistent_buffers(model)),
            # what can change the numbers: TF32, threads, oneDNN, determinism flags, CPU (``_numerics``)
            "numerics": numerics(ad),
        }
        self._device = str(meta["device"])
        # the precision policy the steps run under (``autocast``): forward and loss inside, backward outside
        meta["autocast"] = autocast_policy(ad, str(opts.autocast), self._device) if opts.autocast else None
        meta.update(self._extra_meta)
        self.path = place_recording(self.path, ad, meta, model)  # under a launcher: PATH/rank-NNNNN (``_distributed``)
        self._sink.open(self.path, meta, self._overwrite)
        self._base_limit = sys.getrecursionlimit()
        try:
            aliases = Aliases(ad, model)  # an instance held by several parents: named where its caller holds it
            for path, module in ad.named_modules(model):
                names, mtype = aliases.of(module), type(module).__name__
                self._types.update(dict.fromkeys((path, *names), mtype))
                self._handles += ad.register_forward_hooks(module, self._make_pre(path, mtype, names), self._make_post(path))
            if opts.weights != "none":
                self._record_weights()
            self._ops = contextlib.ExitStack()
            # random draws first: an op-level wrapper then sees the replayed value
            self._ops.enter_context(intercept_random(ad, self, self._random_from, self._random_wait))
            internal = (lambda f: False) if opts.ops_internal else self._stack.is_internal
            if opts.ops:
                self._ops.enter_context(ad.intercept_ops(self._on_op, internal))
            self._ops.enter_context(intercept_collectives(ad, internal, self if opts.collectives else None, self._sink.emit))
        except BaseException:
            self._teardown(failed=True, reason="recorder set-up failed")
            raise
        self._token = _ACTIVE.set(self)
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        reason = None if exc_type is None else exit_reason(exc)
        self._teardown(failed=exc_type is not None, reason=reason)
        failure = self._sink.failure if isinstance(exc, Exception) else None
        if failure is not None and not isinstance(exc, TraceWriteError):
            # a hook could not write and the framework re-raised that as an error of its own:
            raise failure from exc  # the trace failed, not the model

    def _teardown(self, failed: bool, reason: str | None) -> None:
        if self._ops is not None:
            self._ops.close()  # restores the framework's functions
            self._ops = None
            if self.options.ops and not self._ops_seen and not failed and not self.options.ops_internal:
                logger.warning("ops: no op was called from the model's own code (its forward is the framework's "
                               "layers); ops_internal (--ops-internal) also records the ops inside those layers")
        self._adapter.remove(self._handles)
        self._handles.clear()
        if self._base_limit is not None:
            sys.setrecursionlimit(self._base_limit)
            self._base_limit = None
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None
        self._model = None
        self._sink.close(failed, reason)

    @property
    def step_index(self) -> int:
        return self._step

    # ------------------------------------------------------------------ user API
    def model_inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Record inputs as model inputs without running the model (a replay export)."""
        header = RecordHeader(self._step, Phase.FORWARD, Kind.MODEL_INPUT, "", self._types.get("", ""))
        for pos, leaf in flatten_call(args, kwargs, self._adapter.is_tensor):
            self._sink.emit(dataclasses.replace(header, position=pos), leaf)

    def autocast(self) -> contextlib.AbstractContextManager[Any]:
        """The framework's autocast in the ``autocast`` option's dtype (a no-op without it):
        ``with rec.autocast(): loss = rec.loss(loss_fn(model(x)))``, then ``loss.backward()``
        outside it. ``run_steps`` (spec files) runs every step's forward and loss inside it."""
        dtype = self.options.autocast
        return self._adapter.autocast(dtype, self._device) if dtype else contextlib.nullcontext()

    def loss(self, loss: Any) -> Any:
        """Record the loss of the current step; returns it unchanged."""
        o = self.options  # step/kind/phase filters apply; module globs do not (the loss is no module's)
        if not (o.step_wanted(self._step) and o.kind_wanted(Kind.LOSS) and o.phase_wanted(Phase.FORWARD)):
            return loss
        self._sink.emit(RecordHeader(self._step, Phase.FORWARD, Kind.LOSS, "", self._types.get("", ""), position="loss"), loss)
        return loss

    def probe(self, name: str, value: Any) -> Any:
        """Record ``value`` under ``name`` inside the innermost active module call."""
        o = self.options  # step/kind/phase filters apply; a probe is named explicitly, module globs do not
        if not (o.step_wanted(self._step) and o.kind_wanted(Kind.PROBE) and o.phase_wanted(Phase.FORWARD)):
            return value
        top = self._calls[-1] if self._calls else None
        path = top.path if top else ""
        key = f"{path}\0{name}"
        idx = self._call_counts[key]
        self._call_counts[key] += 1
        header = RecordHeader(
            self._step,
            Phase.FORWARD,
            Kind.PROBE,
            path,
            top.mtype if top else self._types.get("", ""),
            top.call if top else -1,
            self._calls[-2].call if len(self._calls) > 1 else -1,
            idx,
            name,
            stack=self._stack.capture(2),
        )
        for pos, leaf in flatten(value, name, self._adapter.is_tensor):
            self._sink.emit(dataclasses.replace(header, position=pos), leaf)
        return value

    def random_site(self) -> tuple[str, int] | None:
        """(innermost module path, step) while a module's forward runs (random draws there are
        recorded), else None."""
        return (self._calls[-1].path, self._step) if self._calls and self._sink.writing else None

    def emit_random(self, step: int, module: str, op: str, index: int, what: str, value: Any) -> None:
        """One random draw: its data always kept (another recorder replays it), whatever the filters say."""
        self._sink.emit_kept(RecordHeader(step, Phase.FORWARD, Kind.RANDOM, module, op, call_index=index, position=what), value)

    def optimizer_values(self, values: dict[str, float]) -> None:
        """Record what the optimizer uses in this step, one number each (``recorder._optim``); step filters apply."""
        if not values or not self.options.step_wanted(self._step):
            return
        header = RecordHeader(self._step, Phase.OTHER, Kind.OPTIMIZER, "", self._types.get("", ""))
        for key, value in values.items():
            self._sink.emit(dataclasses.replace(header, position=key), float(value))

    def note(self, key: str, text: str) -> None:
        """Say in the trace's summary something this recording could not do (``summary["notes"]``)."""
        self._sink.note(key, text)

    def backward_done(self) -> None:
        """Record parameter gradients of this step (call after ``loss.backward()``)."""
        if self._sink.failure is not None and not self._sink.writing:
            raise self._sink.failure  # a gradient hook could not write
        if self._grads_done:
            return
        self._grads_done = True
        if not self._recording(Kind.PARAM_GRAD, Phase.BACKWARD, ""):
            return
        for name, tensor, is_param in self._adapter.named_state(self._model):
            grad = self._adapter.grad_of(tensor) if is_param else None
            if grad is not None:
                mod, _, local = name.rpartition(".")
                header = RecordHeader(self._step, Phase.BACKWARD, Kind.PARAM_GRAD, mod, self._types.get(mod, ""), position=local)
                self._sink.emit(header, grad)

    def step(self) -> None:
        """End the current step (after ``optimizer.step()``, before zeroing grads)."""
        if (passes := self._call_counts.get("", 0)) > 1:  # the model ran more than once: gradient accumulation (or a re-run)
            self.optimizer_values({"passes/forward": passes})
        self.backward_done()
        self._step += 1
        self._call_counts.clear()
        self._grads_done = False
        if self.options.weights == "steps":
            self._record_weights()

    # ------------------------------------------------------------------ hooks
    def _depth_limit(self) -> int:
        """The recursion limit while ``len(self._calls)`` module calls are open: the user's
        limit plus the frames the framework adds per hooked call (torch's ``inner``), so the
        model recurses exactly as deep as it does bare."""
        base = self._base_limit if self._base_limit is not None else sys.getrecursionlimit()
        return base + len(self._calls) * self._adapter.hook_frames

    def _make_pre(self, hooked: str, mtype: str, aliases: tuple[str, ...] = ()) -> Callable[..., Any]:
        def pre(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            parent = self._calls[-1].call if self._calls else -1
            path = under_caller(hooked, aliases, self._calls[-1].path if self._calls else None) if aliases else hooked
            idx = self._call_counts[path]
            self._call_counts[path] += 1
            call = _Call(self._next_call, path, hooked, mtype, idx, self._stack.capture(2))
            self._next_call += 1
            self._calls.append(call)
            replaced = None
            own = (args, kwargs)  # single-step: recorded as computed here, run on the plan's values
            if self._single is not None and parent >= 0:
                replaced = self._single.inputs(self._step, path, idx, args, kwargs)
                if replaced is not None:
                    args, kwargs = replaced
            kind = Kind.MODULE_INPUT if parent >= 0 else Kind.MODEL_INPUT
            if parent < 0 and self._step == 0 and not self._replay_flushed:
                self._replay_flushed = True
                flush_after = True  # another recorder may be waiting to replay these inputs and weights
            else:
                flush_after = False
            want_in = self._recording(kind, Phase.FORWARD, path)
            want_igrad = self._recording(Kind.GRAD_INPUT, Phase.BACKWARD, path)  # independent of the input filter
            if not (want_in or want_igrad):
                return replaced
            header = RecordHeader(self._step, Phase.FORWARD, kind, path, mtype, call.call, parent, idx, stack=call.stack)
            used = list(flatten_call(args, kwargs, self._adapter.is_tensor))
            # the input as this model computed it (in single-step: from the plan's values one module
            # earlier, so a difference is the parent's own code: a function between its children);
            # walked again only when the plan replaced it
            computed = used if replaced is None else flatten_call(*own, self._adapter.is_tensor)
            for pos, leaf in computed if want_in else ():
                self._sink.emit(dataclasses.replace(header, position=pos), leaf)
            for pos, leaf in used if want_igrad else ():
                if self._adapter.is_tensor(leaf) and self._adapter.requires_grad(leaf):
                    h = dataclasses.replace(header, position=pos)
                    self._adapter.register_grad_hook(leaf, self._grad_hook(h, Kind.GRAD_INPUT))
            if flush_after:
                self._sink.flush()
            return replaced

        return with_headroom(pre, self._depth_limit)

    def _make_post(self, hooked: str) -> Callable[..., None]:
        def post(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
            if not self._calls or self._calls[-1].hooked != hooked:
                return  # forward raised below us and the stack was already unwound
            call = self._calls.pop()
            path = call.path
            parent = self._calls[-1].call if self._calls else -1
            want_out = self._recording(Kind.MODULE_OUTPUT, Phase.FORWARD, path)
            # grad records do not depend on the output being recorded (e.g. --phase backward)
            record_grad = self._recording(Kind.GRAD_OUTPUT, Phase.BACKWARD, path)
            if not (want_out or record_grad or self._single is not None):
                return
            header = RecordHeader(
                self._step, Phase.FORWARD, Kind.MODULE_OUTPUT, path, call.mtype, call.call, parent, call.call_index, stack=call.stack
            )
            for pos, leaf in flatten(out, "out", self._adapter.is_tensor):
                h = dataclasses.replace(header, position=pos)
                if want_out:
                    self._sink.emit(h, leaf)
                if (record_grad or self._single is not None) and self._adapter.is_tensor(leaf) and self._adapter.requires_grad(leaf):
                    self._adapter.register_grad_hook(leaf, self._grad_hook(h, Kind.GRAD_OUTPUT, record_grad))

        return with_headroom(post, self._depth_limit)

    def op_header(self, name: str, skip: int) -> RecordHeader | None:
        """The ``op_input`` header of an op called now inside a module's forward (``skip``: frames to its call site), or None."""
        if not self._calls or not self._sink.writing:
            return None
        top, key, call = self._calls[-1], f"{self._calls[-1].path}\0op:{name}", self._next_call
        idx, self._next_call = self._call_counts[key], call + 1
        self._call_counts[key] += 1
        if not self._recording(Kind.OP_OUTPUT, Phase.FORWARD, top.path):
            return None
        return RecordHeader(self._step, Phase.FORWARD, Kind.OP_INPUT, top.path, name, call, top.call, idx, stack=self._stack.capture(skip + 1))

    def _on_op(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        if not self._calls or not self._sink.writing or not self.options.ops_wanted(self._calls[-1].path):
            return  # only ops made inside a module's forward
        is_tensor = self._adapter.is_tensor
        outs = [(pos, leaf) for pos, leaf in flatten(out, "out", is_tensor) if is_tensor(leaf)]
        if not outs:
            return  # shape queries and the like
        self._ops_seen += 1
        if (header := self.op_header(name, 3)) is None:
            return
        if self.options.kind_wanted(Kind.OP_INPUT):
            scalars = 0  # python scalars say what the operands mean (transpose_y=True, the dims of a transpose)
            for pos, leaf in flatten_call(args, kwargs, is_tensor):
                if is_tensor(leaf) or (op_scalar(leaf) and scalars < MAX_OP_SCALARS):
                    scalars += not is_tensor(leaf)
                    self._sink.emit(dataclasses.replace(header, position=pos), leaf)
        want_grad = self.options.kind_wanted(Kind.OP_GRAD_OUTPUT) and self.options.phase_wanted(Phase.BACKWARD)
        for pos, leaf in outs:
            h = dataclasses.replace(header, kind=Kind.OP_OUTPUT, position=pos)
            self._sink.emit(h, leaf)
            if want_grad and self._adapter.requires_grad(leaf):
                self._adapter.register_grad_hook(leaf, self._grad_hook(h, Kind.OP_GRAD_OUTPUT))

    def _grad_hook(self, header: RecordHeader, kind: Kind, emit: bool = True) -> Callable[[Any], Any]:
        def hook(grad: Any) -> Any:
            if not self._sink.writing or grad is None:
                return None
            if emit and self.options.kind_wanted(kind):
                try:
                    self._sink.emit(dataclasses.replace(header, phase=Phase.BACKWARD, kind=kind, step=self._step), grad)
                except TraceWriteError:  # never through the framework's autograd engine (paddle re-wraps
                    return None  # it as a bare OSError): backward_done() raises it once backward returned
            if self._single is not None and kind == Kind.GRAD_OUTPUT:
                return self._single.grad(self._step, header.module, header.call_index, header.position, grad)
            return None

        return with_headroom(hook)

    # ------------------------------------------------------------------ writing
    def _recording(self, kind: Kind, phase: Phase, path: str) -> bool:
        o = self.options
        return o.step_wanted(self._step) and o.kind_wanted(kind) and o.phase_wanted(phase) and o.module_wanted(path)

    def _record_weights(self) -> None:
        if not self.options.step_wanted(self._step) or not self.options.phase_wanted(Phase.OTHER):
            return
        for name, tensor, is_param in self._adapter.named_state(self._model):
            kind = Kind.PARAM if is_param else Kind.BUFFER
            mod, _, local = name.rpartition(".")
            if self.options.kind_wanted(kind) and self.options.module_wanted(mod):
                self._sink.emit(RecordHeader(self._step, Phase.OTHER, kind, mod, self._types.get(mod, ""), position=local), tensor)
