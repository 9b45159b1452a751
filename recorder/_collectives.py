"""Collective calls (all-reduce and friends) seen while recording, and recorded as op records.

A collective is where one rank's numbers meet the others': an error of the reduction itself
(the order of summation, a bf16 accumulation, MAX for SUM) or a NaN arriving from another rank
enters there. With ``collectives`` (``--collectives``) every collective call made inside a
module's forward is recorded like an op of ``--ops`` (``recorder/_session.py``, ``_on_op``):

* ``op_input`` records: the tensors it reads, copied *before* the call (an all-reduce writes
  into its argument), at position ``in`` (``in[0]``... for a list); the reduce op as a
  ``reduce_op=SUM`` record (a Python ``True``: a record has no attributes), the size of the
  group (``group_size``) and the source or destination rank (``src``/``dst``) as Python numbers;
* ``op_output`` records: what it wrote (the same tensor after an in-place call, each tensor of an
  output list) or returned, at position ``out`` (``out[0]``...).

Their op name (the record's ``module_type``) is the same in every framework (``all_reduce``;
paddle's ``alltoall`` is ``all_to_all``), their module the enclosing module call, numbered per
module and op like every op record, so the analyzer pairs them as it pairs ops.

What is a collective is data: ``COLLECTIVES``, one ``Family`` per framework (by adapter name).
Each function is replaced, while recording, by a wrapper that calls the original; on exit the
exact originals are back (``_patch``). Only the attribute is replaced: a name bound earlier
(``from torch.distributed import all_reduce``) is not seen, and neither are collectives the
framework makes in C++ (DDP's gradient buckets). A module not imported yet when recording starts
(``torch.distributed.nn``) is left alone.

The wrappers are installed for every recording, with or without ``collectives``: an in-place
collective changes a tensor without moving the framework's in-place counter, so the recorder
counts it itself (``Adapter.untracked_changes``); a host copy of the tensor taken before the call
is then never reused for it after the call.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import logging
import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from padiff_trace import Kind, RecordHeader, TraceWriteError

from ._adapter import Adapter
from ._nest import flatten
from ._options import RecordOptions
from ._patch import patched

__all__ = ["COLLECTIVES", "COLLECTIVE_OPS", "Collective", "Family", "intercept_collectives"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Collective:
    """One collective function: ``owner.name``, recorded as op ``op``. ``reads``: the parameter
    holding its input; ``writes``: the one it writes its result into, None when it returns it;
    ``reduce``/``root``: the parameters naming the reduce op and the source or destination rank."""

    owner: str
    name: str
    op: str
    reads: str
    writes: str | None
    reduce: str | None = None
    root: str | None = None


@dataclass(frozen=True)
class Family:
    """A framework's collectives and how to read a call: the function giving a group's size
    (``world_size(group)`` of module ``module``), the flag that makes a call asynchronous (its
    name, and the value that does), and the names of reduce ops given as integers."""

    module: str
    calls: tuple[Collective, ...]
    async_flag: tuple[str, bool]
    world_size: str = "get_world_size"
    group: str = "group"
    reduce_names: Mapping[int, str] = field(default_factory=dict)


def _row(owner: str, name: str, reads: str, writes: str | None, op: str = "", **kw: str) -> Collective:
    return Collective(owner, name, op or name, reads, writes, **kw)


_TD, _TF, _PD = "torch.distributed", "torch.distributed.nn.functional", "paddle.distributed"

COLLECTIVES: dict[str, Family] = {
    "torch": Family(_TD, (
        _row(_TD, "all_reduce", "tensor", "tensor", reduce="op"),
        _row(_TD, "all_gather", "tensor", "tensor_list"),
        _row(_TD, "all_gather_into_tensor", "input_tensor", "output_tensor"),
        _row(_TD, "reduce_scatter", "input_list", "output", reduce="op"),
        _row(_TD, "reduce_scatter_tensor", "input", "output", reduce="op"),
        _row(_TD, "broadcast", "tensor", "tensor", root="src"),
        _row(_TD, "reduce", "tensor", "tensor", reduce="op", root="dst"),
        _row(_TD, "all_to_all_single", "input", "output"),
        _row(_TD, "all_to_all", "input_tensor_list", "output_tensor_list"),
        # autograd-aware: they return their result (and call the ones above, which are then not recorded again)
        _row(_TF, "all_reduce", "tensor", None, reduce="op"),
        _row(_TF, "all_gather", "tensor", None),
        _row(_TF, "reduce_scatter", "input_list", None, reduce="op"),
        _row(_TF, "broadcast", "tensor", None, root="src"),
        _row(_TF, "reduce", "tensor", None, reduce="op", root="dst"),
        _row(_TF, "all_to_all_single", "input", None),
        _row(_TF, "all_to_all", "input_tensor_list", None),
    ), async_flag=("async_op", True)),
    "paddle": Family(_PD, (
        _row(_PD, "all_reduce", "tensor", "tensor", reduce="op"),
        _row(_PD, "all_gather", "tensor", "tensor_list"),
        _row(_PD, "broadcast", "tensor", "tensor", root="src"),
        _row(_PD, "reduce", "tensor", "tensor", reduce="op", root="dst"),
        _row(_PD, "reduce_scatter", "tensor_list", "tensor", reduce="op"),
        _row(_PD, "alltoall", "in_tensor_list", "out_tensor_list", op="all_to_all"),
        _row(_PD, "alltoall_single", "in_tensor", "out_tensor", op="all_to_all_single"),
    ), async_flag=("sync_op", False), reduce_names={0: "SUM", 1: "MAX", 2: "MIN", 3: "PROD", 4: "AVG"}),
}

# every op name a collective is recorded under: how a reader tells collective records from other ops
COLLECTIVE_OPS: frozenset[str] = frozenset(c.op for fam in COLLECTIVES.values() for c in fam.calls)


class Site(Protocol):
    """What the interceptor needs from the recorder."""

    options: RecordOptions

    def op_header(self, name: str, skip: int) -> RecordHeader | None:
        """The ``op_input`` header of an op called now inside a module's forward, or None."""


Emit = Callable[[RecordHeader, Any], None]


def intercept_collectives(adapter: Adapter, internal: Callable[[str], bool], site: Site | None,
                          emit: Emit) -> AbstractContextManager[None]:
    """While active, every collective call counts as an in-place change of what it writes; with a
    ``site`` (the ``collectives`` option), calls made inside a module's forward from a file that is
    not ``internal`` are recorded through ``emit``. Restores the originals on exit."""
    family = COLLECTIVES.get(adapter.name)
    if family is None:
        return contextlib.nullcontext()
    it = _Interceptor(adapter, family, internal, site, emit)
    return patched(
        (owner, c.name, functools.partial(it.wrap, c))
        for c in family.calls
        for owner in ([sys.modules[c.owner]] if c.owner in sys.modules else [])
    )


class _Interceptor:
    def __init__(self, adapter: Adapter, family: Family, internal: Callable[[str], bool], site: Site | None, emit: Emit) -> None:
        self.adapter, self.family, self.internal, self.site, self.emit = adapter, family, internal, site, emit
        self.busy = False  # inside a recorded collective: the collectives it calls itself are its own business

    def wrap(self, c: Collective, original: Any) -> Callable[..., Any]:
        try:
            sig: inspect.Signature | None = inspect.signature(original)
        except (TypeError, ValueError):  # a builtin without a signature: its arguments cannot be named
            sig = None

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            header = None
            if self.site is not None and not self.busy and sig is not None and not self.internal(sys._getframe(1).f_code.co_filename):
                header = self.site.op_header(c.op, 2)
            if header is not None:
                return self._recorded(c, sig, header, original, args, kwargs)
            out = original(*args, **kwargs)
            self._changed(c)
            return out

        wrapper.__padiff_original__ = original  # type: ignore[attr-defined]
        return wrapper

    def _recorded(self, c: Collective, sig: Any, header: RecordHeader, original: Any, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            given = dict(bound.arguments)
        except TypeError:  # the call itself is wrong: the framework says how
            out = original(*args, **kwargs)
            self._changed(c)
            return out
        failure = self._inputs(c, header, given)
        self.busy = True
        try:
            out = original(*args, **kwargs)
        finally:
            self.busy = False
        self._changed(c)
        if failure is not None:
            raise failure
        flag, when = self.family.async_flag
        if c.writes is not None and bool(given.get(flag, not when)) == when and callable(getattr(out, "wait", None)):
            out.wait()  # an asynchronous call: its result is there once waited for (the model's own wait returns at once)
        value = out if c.writes is None else given.get(c.writes)
        is_tensor = self.adapter.is_tensor
        for pos, leaf in flatten(value, "out", is_tensor):
            if is_tensor(leaf):
                self.emit(dataclasses.replace(header, kind=Kind.OP_OUTPUT, position=pos), leaf)
        return out

    def _changed(self, c: Collective) -> None:
        """``c`` wrote into a tensor: no host copy taken before stands for it now."""
        if c.writes is not None:
            self.adapter.untracked_changes += 1

    def _inputs(self, c: Collective, header: RecordHeader, given: dict[str, Any]) -> TraceWriteError | None:
        """Record the call's inputs now, before it runs; never keep this rank from the call (the
        other ranks would wait for it forever): a write error is returned, raised after the call."""
        assert self.site is not None
        if not self.site.options.kind_wanted(Kind.OP_INPUT):
            return None
        try:
            for pos, value in self._attributes(c, given):
                self.emit(dataclasses.replace(header, position=pos), value)
            is_tensor = self.adapter.is_tensor
            for pos, leaf in flatten(given.get(c.reads), "in", is_tensor):
                if is_tensor(leaf):
                    self.emit(dataclasses.replace(header, position=pos), leaf)
        except TraceWriteError as exc:
            return exc
        except Exception as exc:  # a recorder error must not leave the other ranks waiting
            logger.warning("%s in %s: not recorded (%s: %s)", c.op, header.module or "<root>", type(exc).__name__, exc)
        return None

    def _attributes(self, c: Collective, given: dict[str, Any]) -> list[tuple[str, Any]]:
        """The call's small attributes as Python values: ``reduce_op=SUM`` (True), ``group_size``, ``src``/``dst``."""
        out: list[tuple[str, Any]] = []
        if c.reduce is not None and c.reduce in given:
            out.append((f"reduce_op={_reduce_name(given[c.reduce], self.family.reduce_names)}", True))
        size = getattr(sys.modules.get(self.family.module), self.family.world_size, None)
        if size is not None:
            with contextlib.suppress(Exception):  # a group this framework cannot size: not recorded
                out.append(("group_size", int(size(given.get(self.family.group)))))
        if c.root is not None and isinstance(given.get(c.root), int):
            out.append((c.root, int(given[c.root])))
        return out


def _reduce_name(op: Any, names: Mapping[int, str]) -> str:
    """``SUM``, ``MAX``...: an enum's name (torch), or the name of an integer code (paddle)."""
    name = getattr(op, "name", None)
    if isinstance(name, str):
        return name.upper()
    if isinstance(op, int) and op in names:
        return names[op]
    return str(op).rpartition(".")[2].upper() or "?"
