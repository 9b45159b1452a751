"""Recording options; the CLI flags of ``padiff-trace record`` mirror these fields."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, fields
from typing import Any

from padiff_trace import Kind, Phase, UserError, WriterOptions

__all__ = ["RecordOptions"]

_WEIGHTS = ("steps", "start", "none")


@dataclass(frozen=True)
class RecordOptions:
    include: tuple[str, ...] = ()  # module path globs to record ("" = root); empty = all
    exclude: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()  # forward / backward / other; empty = all
    kinds: tuple[str, ...] = ()  # Kind labels; empty = all (grad_input is opt-in below)
    steps: tuple[int, ...] = ()  # record only these steps; empty = all
    every: int = 1  # record every k-th step
    input_grads: bool = False  # GRAD_INPUT records (gradient w.r.t. each module input)
    weights: str = "steps"  # steps: at start and after every step; start: once; none
    stats_only: bool = False  # no tensor data, except what replay needs (model inputs, step-0 weights)
    max_tensor_bytes: int | None = None  # larger tensors keep statistics only
    full_stack: bool = False
    ops: bool = False  # op-level records (framework functions called inside forward)
    ops_include: tuple[str, ...] = ()  # only ops inside modules matching these globs
    ops_internal: bool = False  # also ops called by the framework's own layers
    compression: str | None = None
    flush_records: int = 10_000
    flush_seconds: float = 2.0
    queue_bytes: int = 512 << 20
    tags: dict[str, str] = field(default_factory=dict)
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.weights not in _WEIGHTS:
            raise UserError(f"weights={self.weights!r}: expected one of {', '.join(_WEIGHTS)}")
        for k in self.kinds:
            if k.upper() not in Kind.__members__:
                raise UserError(f"unknown record kind {k!r}; one of: {', '.join(m.label for m in Kind)}")
        for p in self.phases:
            if p.upper() not in Phase.__members__:
                raise UserError(f"unknown phase {p!r}; one of: forward, backward, other")
        if self.every < 1:
            raise UserError(f"every={self.every}: must be >= 1")

    @classmethod
    def from_kwargs(cls, kwargs: dict[str, Any]) -> RecordOptions:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise TypeError(f"unknown recording option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        conv = {k: tuple(v) if k in ("include", "exclude", "phases", "kinds", "steps", "ops_include") else v for k, v in kwargs.items()}
        return cls(**conv)

    def writer_options(self) -> WriterOptions:
        return WriterOptions(
            flush_records=self.flush_records,
            flush_seconds=self.flush_seconds,
            queue_bytes=self.queue_bytes,
            compression=self.compression,
            stats_only=False,  # the recorder decides per record (see keep_data)
            max_data_bytes=self.max_tensor_bytes,
        )

    def module_wanted(self, path: str) -> bool:
        if self.include and not any(fnmatch.fnmatchcase(path, p) for p in self.include):
            return False
        return not any(fnmatch.fnmatchcase(path, p) for p in self.exclude)

    def keep_data(self, kind: Kind, step: int) -> bool:
        """Whether a record keeps its tensor data. Stats-only still keeps the model inputs
        and the initial weights, so that another recorder can replay them."""
        if not self.stats_only:
            return True
        return kind == Kind.MODEL_INPUT or (kind in (Kind.PARAM, Kind.BUFFER) and step == 0)

    def ops_wanted(self, path: str) -> bool:
        return self.ops and (not self.ops_include or any(fnmatch.fnmatchcase(path, p) for p in self.ops_include))

    def kind_wanted(self, kind: Kind) -> bool:
        if kind == Kind.GRAD_INPUT and not self.input_grads:
            return False
        if self.kinds and kind.label not in self.kinds:
            return False
        return True

    def phase_wanted(self, phase: Phase) -> bool:
        return not self.phases or phase.label in self.phases

    def step_wanted(self, step: int) -> bool:
        if self.steps and step not in self.steps:
            return False
        return step % self.every == 0
