"""Recording options, each declared once.

A field of ``RecordOptions`` declared with ``option(...)`` carries its command-line form
in its metadata (flag, help, metavar, choices, parser). From that one declaration come
the flags of ``padiff-trace record`` and ``run`` (``option_fields`` is what the CLI
reads), the conversion of parsed flags back to options, and the JSON options of the job
file a ``run`` child receives (``to_dict``/``from_dict``). The machinery (``option``,
``option_fields``, ``build_options``, ``check_options``) is the core's
``padiff_trace.options``, shared with the analyzer's ``CompareOptions``; its names are
re-exported here for the recorder's callers.

No argparse and no framework here: this module only describes the options.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from padiff_trace import Kind, Phase, UserError, WriterOptions
from padiff_trace.options import (
    OptionField,
    OptionValueError,
    build_options,
    check_options,
    option,
    option_fields,
    parse_size,
    parse_tag,
)

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["OptionField", "OptionValueError", "RecordOptions", "build_options", "check_options", "option", "option_fields",
           "parse_size", "parse_tag"]


@dataclass(frozen=True)
class RecordOptions:
    """What ``recorder.record`` records; each field is also a flag of ``record`` and ``run``."""

    include: tuple[str, ...] = option((), metavar="GLOB", help="only modules matching (repeatable)")
    exclude: tuple[str, ...] = option((), metavar="GLOB", help="skip modules matching (repeatable)")
    phases: tuple[str, ...] = option((), flag="--phase", choices=("forward", "backward", "other"), help="only these phases (repeatable)")
    kinds: tuple[str, ...] = option((), flag="--kind", metavar="KIND", help="only these record kinds (repeatable)")
    steps: tuple[int, ...] = option((), flag="--only-step", metavar="N", help="record only step N (repeatable)")
    every: int = option(1, metavar="K", help="record every K-th step")
    input_grads: bool = option(False, help="also record gradients w.r.t. module inputs")
    weights: str = option("steps", choices=("steps", "start", "none"), help="when to record weights")
    stats_only: bool = option(False, help="statistics and metadata only, no tensor data")
    max_tensor_bytes: int | None = option(None, metavar="SIZE", parse=parse_size, help="larger tensors keep statistics only")
    full_stack: bool = option(False, help="keep framework and library frames in stacks")
    ops: bool = option(False, help="op-level records: framework calls inside forward")
    ops_include: tuple[str, ...] = option((), metavar="GLOB", help="ops only inside these modules")
    ops_internal: bool = option(False, help="also ops made by the framework's own layers")
    collectives: bool = option(False, help="op records of collective calls (all_reduce and friends) inside forward: inputs before, outputs after")
    compression: str | None = option(None, choices=("gzip", "lzf"), help="lossless compression of tensor data")
    flush_records: int = option(10_000, metavar="N", help="flush (crash-safe point) at least every N records")
    flush_seconds: float = option(2.0, metavar="SECONDS", help="flush (crash-safe point) at least this often")
    queue_bytes: int = option(512 << 20, metavar="SIZE", parse=parse_size, help="writer queue bound (back-pressure)")
    tags: dict[str, str] = option(default_factory=dict, flag="--tag", metavar="KEY=VALUE", help="store a tag (repeatable)")  # noqa: RUF009 (a default_factory)
    seed: int | None = option(None, help="seed python, numpy and the framework before model()")
    autocast: str | None = option(None, choices=("bfloat16", "float16"),
                                  help="run each step's forward and loss under the framework's autocast (AMP O1) in this dtype")

    def __post_init__(self) -> None:
        check_options(self)  # the declared choices (phases, weights, compression, autocast)
        for k in self.kinds:
            if k.upper() not in Kind.__members__:
                raise UserError(f"unknown record kind {k!r}; one of: {', '.join(m.label for m in Kind)}")
        if self.every < 1:
            raise UserError(f"every={self.every}: must be >= 1")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any]) -> Self:
        """Keyword arguments of ``recorder.record``; an unknown one is a ``TypeError``."""
        return build_options(cls, kwargs, error=TypeError, what="recording")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The inverse of ``to_dict`` (a job file's options); an unknown one is a ``UserError``."""
        return build_options(cls, data, what="recording")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: every field by name (tuples become lists in JSON)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

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
        return not self.kinds or kind.label in self.kinds

    def phase_wanted(self, phase: Phase) -> bool:
        return not self.phases or phase.label in self.phases

    def step_wanted(self, step: int) -> bool:
        if self.steps and step not in self.steps:
            return False
        return step % self.every == 0
