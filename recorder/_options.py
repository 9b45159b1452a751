"""Recording options, each declared once.

A field of ``RecordOptions`` declared with ``option(...)`` carries its command-line form
in its metadata (flag, help, metavar, choices, parser). From that one declaration come
the flags of ``padiff-trace record`` and ``run`` (``option_fields`` is what the CLI
reads), the conversion of parsed flags back to options, and the JSON options of the job
file a ``run`` child receives (``to_dict``/``from_dict``). The value shape follows the
annotation: ``bool`` is a switch, ``tuple[X, ...]`` a repeatable flag, ``dict`` a
repeatable ``KEY=VALUE`` flag, anything else one value (``X | None``: optional).

No argparse and no framework here: this module only describes the options.
"""

from __future__ import annotations

import fnmatch
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

from padiff_trace import Kind, Phase, UserError, WriterOptions

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["OptionField", "RecordOptions", "build_options", "option", "option_fields", "parse_size", "parse_tag"]

_META_KEY = "padiff_trace.option"
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.I)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}

OptionsT = TypeVar("OptionsT")


def parse_size(text: str) -> int:
    """``4096``, ``64MB``, ``1GiB`` -> bytes; ``ValueError`` on anything else."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"not a size: {text!r} (e.g. 4096, 64MB, 1GiB)")
    unit = (m.group(2) or "").lower()[:1]
    return int(float(m.group(1)) * _UNITS[unit])


def parse_tag(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` -> ``(KEY, VALUE)``; ``ValueError`` without a key or an ``=``."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"tag {text!r}: expected KEY=VALUE")
    return key, value


def option(
    default: Any = MISSING,
    *,
    help: str,
    flag: str | None = None,
    metavar: str | None = None,
    choices: tuple[str, ...] | None = None,
    parse: Callable[[str], Any] | None = None,
    default_factory: Callable[[], Any] | Any = MISSING,
) -> Any:
    """A dataclass field that is also a command-line option (flag default: ``--field-name``).
    ``parse`` turns one flag value (a string) into the field's value, or one item of it."""
    meta = {_META_KEY: {"help": help, "flag": flag, "metavar": metavar, "choices": choices, "parse": parse}}
    if default_factory is not MISSING:
        return field(default_factory=default_factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class OptionField:
    """One option as the command line and job files see it (read from a dataclass field)."""

    name: str
    flag: str
    help: str
    default: Any
    shape: str  # "switch" (bool), "value", "list" (repeatable -> tuple), "pairs" (repeatable KEY=VALUE -> dict)
    parse: Callable[[str], Any]  # one flag value (a string) -> the value, or one item of it
    choices: tuple[str, ...] | None
    metavar: str | None

    def coerce(self, value: Any) -> Any:
        """A parsed or JSON-decoded value as the field holds it (lists -> tuple, pairs -> dict)."""
        if self.shape == "list" and value is not None:
            return tuple(value)
        if self.shape == "pairs" and value is not None:
            return {str(k): str(v) for k, v in (value.items() if isinstance(value, Mapping) else value)}
        return value


def _shape(hint: Any) -> tuple[str, Callable[[str], Any]]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bool:
        return "switch", str
    if origin is tuple:
        return "list", args[0]
    if origin is dict:
        return "pairs", parse_tag
    if args and type(None) in args:  # X | None
        (inner,) = [a for a in args if a is not type(None)]
        return "value", inner
    return "value", hint


def option_fields(cls: type) -> tuple[OptionField, ...]:
    """The options declared with ``option(...)`` on the dataclass ``cls``, in field order."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in fields(cls):
        meta = f.metadata.get(_META_KEY)
        if meta is None:
            continue
        shape, scalar = _shape(hints[f.name])
        default = f.default_factory() if f.default_factory is not MISSING else f.default
        out.append(
            OptionField(
                name=f.name,
                flag=meta["flag"] or "--" + f.name.replace("_", "-"),
                help=meta["help"],
                default=default,
                shape=shape,
                parse=meta["parse"] or scalar,
                choices=meta["choices"],
                metavar=meta["metavar"],
            )
        )
    return tuple(out)


def build_options(cls: type[OptionsT], values: Mapping[str, Any], *, error: type[Exception] = UserError) -> OptionsT:
    """``cls(**values)`` with list/pair values coerced; unknown names raise ``error``."""
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - known)
    if unknown:
        raise error(f"unknown recording option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    by_name = {o.name: o for o in option_fields(cls)}
    return cls(**{k: by_name[k].coerce(v) if k in by_name else v for k, v in values.items()})


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
    compression: str | None = option(None, choices=("gzip", "lzf"), help="lossless compression of tensor data")
    flush_records: int = option(10_000, metavar="N", help="flush (crash-safe point) at least every N records")
    flush_seconds: float = option(2.0, metavar="SECONDS", help="flush (crash-safe point) at least this often")
    queue_bytes: int = option(512 << 20, metavar="SIZE", parse=parse_size, help="writer queue bound (back-pressure)")
    tags: dict[str, str] = option(default_factory=dict, flag="--tag", metavar="KEY=VALUE", help="store a tag (repeatable)")  # noqa: RUF009 (a default_factory)
    seed: int | None = option(None, help="seed python, numpy and the framework before model()")
    autocast: str | None = option(None, choices=("bfloat16", "float16"),
                                  help="run each step's forward and loss under the framework's autocast (AMP O1) in this dtype")

    def __post_init__(self) -> None:
        for o in option_fields(type(self)):
            value = getattr(self, o.name)
            values = value if o.shape == "list" else () if value is None else (value,)
            bad = [v for v in values if o.choices is not None and v not in o.choices]
            if bad:
                raise UserError(f"{o.name}={bad[0]!r}: expected one of {', '.join(o.choices or ())}")
        for k in self.kinds:
            if k.upper() not in Kind.__members__:
                raise UserError(f"unknown record kind {k!r}; one of: {', '.join(m.label for m in Kind)}")
        if self.every < 1:
            raise UserError(f"every={self.every}: must be >= 1")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any]) -> Self:
        """Keyword arguments of ``recorder.record``; an unknown one is a ``TypeError``."""
        return build_options(cls, kwargs, error=TypeError)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The inverse of ``to_dict`` (a job file's options); an unknown one is a ``UserError``."""
        return build_options(cls, data)

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
