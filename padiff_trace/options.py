"""Options declared once: a dataclass field made with ``option(...)`` is also a command-line flag.

The field's metadata carries its command-line form (flag, help, metavar, choices, the parser
of one flag value) and the rule its values obey (``choices``, ``check``). Everything else is
read from that one declaration:

* ``option_fields(cls)``: the options of a dataclass, as ``OptionField`` rows; the command
  line (``padiff_trace.cli``) makes one flag per row, with its help and choices;
* ``build_options(cls, values)``: the dataclass from a mapping of values (parsed flags, a
  JSON job file, ``**kwargs``), lists and pairs coerced, unknown names refused;
* ``check_options(obj)``: every value against its declared choices and check, as one
  ``OptionValueError`` that speaks the Python keyword (``atol=-1``) and, on the command
  line (``cli_text``), the flag (``--atol -1``).

The value shape follows the annotation: ``bool`` is a switch, ``tuple[X, ...]`` a repeatable
flag, ``dict`` a repeatable ``KEY=VALUE`` flag, anything else one value (``X | None``:
optional; a union of several types needs ``parse``).

Who declares what: ``recorder.RecordOptions`` and ``recorder.RecordJob`` (how to record),
``analyzer.CompareOptions`` (how to compare). No argparse and no framework here: this
module only describes options; it is part of the trace core, so both sides use it.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, TypeVar

from ._errors import UserError

__all__ = [
    "OptionField",
    "OptionValueError",
    "build_options",
    "check_options",
    "option",
    "option_fields",
    "parse_size",
    "parse_tag",
]

_META_KEY = "padiff_trace.option"
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.I)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}

OptionsT = TypeVar("OptionsT")
Check = Callable[[Any], str | None]  # one value -> what is wrong with it ("expected ..."), or None


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
    check: Check | None = None,
    default_factory: Callable[[], Any] | Any = MISSING,
) -> Any:
    """A dataclass field that is also a command-line option (flag default: ``--field-name``).

    ``parse`` turns one flag value (a string) into the field's value, or one item of it
    (default: the annotation's type). ``choices``: the values allowed (the flag's choices,
    too). ``check``: one value -> what is wrong with it (``"expected a number >= 0"``) or
    None; ``check_options`` applies both (``None``, "not given", is never checked)."""
    meta = {_META_KEY: {"help": help, "flag": flag, "metavar": metavar, "choices": choices, "parse": parse, "check": check}}
    if default_factory is not MISSING:
        return field(default_factory=default_factory, metadata=meta)
    return field(default=default, metadata=meta)


class OptionValueError(UserError):
    """A declared option holds a value its declaration does not allow. The message speaks the
    Python keyword (``atol=-1.0: expected ...``), ``cli_text`` the flag (``--atol -1.0: ...``);
    ``problem`` is the part after the colon, for callers with words of their own."""

    def __init__(self, message: str, *, flag: str = "", value: Any = None, problem: str = "") -> None:
        super().__init__(message)
        self.flag, self.value, self.problem = flag, value, problem or message

    def cli_text(self) -> str:
        """The message as the command line prints it: the flag instead of the keyword."""
        return f"{self.flag} {self.value!r}: {self.problem}" if self.flag else super().cli_text()


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
    check: Check | None = None

    def coerce(self, value: Any) -> Any:
        """A parsed or JSON-decoded value as the field holds it (lists -> tuple, pairs -> dict)."""
        if self.shape == "list" and value is not None:
            return tuple(value)
        if self.shape == "pairs" and value is not None:
            return {str(k): str(v) for k, v in (value.items() if isinstance(value, Mapping) else value)}
        return value

    def problem(self, value: Any, *, what: str = "") -> str | None:
        """What is wrong with ``value`` (one item of a list option), or None. ``what`` names the
        options in a refused choice: ``unknown compare mode``."""
        if self.choices is not None and value not in self.choices:
            unknown = f"unknown {what} {self.name}; " if what else ""
            return f"{unknown}expected one of {', '.join(self.choices)}"
        return self.check(value) if self.check is not None else None

    def validate(self, value: Any, *, what: str = "") -> None:
        """``OptionValueError`` if the declaration does not allow ``value`` (the field's whole
        value: every item of a list; ``None`` is "not given" and always allowed)."""
        if self.shape == "pairs" or value is None:
            return
        for item in value if self.shape == "list" else (value,):
            problem = self.problem(item, what=what)
            if problem is not None:
                raise OptionValueError(f"{self.name}={item!r}: {problem}", flag=self.flag, value=item, problem=problem)


def _shape(hint: Any) -> tuple[str, Callable[[str], Any]]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bool:
        return "switch", str
    if origin is tuple:
        return "list", args[0]
    if origin is dict:
        return "pairs", parse_tag
    if args and type(None) in args:  # X | None
        inner = [a for a in args if a is not type(None)]
        return "value", inner[0] if len(inner) == 1 else str  # several types: the declaration's parse says
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
                check=meta.get("check"),
            )
        )
    return tuple(out)


def check_options(obj: Any, *, what: str = "") -> None:
    """Every option of the dataclass instance ``obj`` against its declaration (call it from
    ``__post_init__``); the first value not allowed raises ``OptionValueError``."""
    for o in option_fields(type(obj)):
        o.validate(getattr(obj, o.name), what=what)


def build_options(
    cls: type[OptionsT], values: Mapping[str, Any], *, error: type[Exception] = UserError, what: str = ""
) -> OptionsT:
    """``cls(**values)`` with list/pair values coerced; unknown names raise ``error``
    (``unknown {what} option(s) ...; known: ...``: ``TypeError`` for keyword arguments)."""
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - known)
    if unknown:
        noun = f"{what} option(s)" if what else "option(s)"
        raise error(f"unknown {noun} {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    by_name = {o.name: o for o in option_fields(cls)}
    return cls(**{k: by_name[k].coerce(v) if k in by_name else v for k, v in values.items()})
