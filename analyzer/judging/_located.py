"""What the culprit search names (``_culprit``): the call on each side and why, with the
sentences the report shows for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from padiff_trace import Record

from ..alignment._calls import Call
from ..alignment._pairing import CallPair
from ..alignment._records import RecordLike

__all__ = ["Located", "PairResult", "R", "Side"]


class PairResult(Protocol):
    """What is read of a measured pair (``_pairview.PairResult``)."""

    @property
    def role(self) -> str: ...
    @property
    def step(self) -> int: ...
    @property
    def order(self) -> tuple[int, int, int]: ...
    @property
    def passed(self) -> bool: ...
    @property
    def a(self) -> RecordLike: ...
    @property
    def b(self) -> RecordLike: ...
    @property
    def call_pair(self) -> CallPair | None: ...
    @property
    def reason(self) -> str: ...


R = TypeVar("R", bound=PairResult)

@dataclass(frozen=True)
class Side:
    """The module call named on one side, and why."""

    call: Call
    why: str  # "own code", "inline code", "one side only", "counterpart", "unverified", "unchecked", "share", "compared across", "state", "backward", "handed on", "passed on", "rate", "ids"
    first: Record | None  # the first differing record inside ``call`` on this side
    fine: tuple[Call, ...]  # paired calls inside it that ran before ``first`` and agreed
    unchecked: tuple[Call, ...] = ()  # "unchecked": this side's calls inside it nothing compares
    suspects: tuple[Call, ...] = ()  # every unchecked call weighed, in the order they returned (``_across``)
    detail: str = ""  # what the records say there, in words (the rate a dropout was called with)

    def as_dict(self) -> dict[str, Any]:
        site = _site(self.call)
        return {
            "module": self.call.module,
            "call_index": self.call.call_index,
            "module_type": self.call.module_type,
            "why": self.why,
            "stack": [list(f) for f in site],
            "first": self.first.name if self.first is not None else None,
            "first_stack": [list(f) for f in self.first.stack] if self.first is not None else [],
            "fine": [c.label for c in self.fine],
            "unchecked": [c.label for c in self.unchecked],
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Located(Generic[R]):
    """The first divergence named on both sides (see the module docstring)."""

    pair: R  # the first differing record inside the named pair (its output, or a child's input)
    a: Side
    b: Side

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a.as_dict(), "b": self.b.as_dict()}

    def sentences(self) -> list[tuple[str, str]]:
        """(code, sentence) per side: the call named, why, and what agreed before it (the
        report's diagnosis shows them as findings)."""
        out: list[tuple[str, str]] = []
        for tag, s in (("A", self.a), ("B", self.b)):
            site = _site(s.call)
            where = f" ({site[-1].file}:{site[-1].line})" if site else ""
            text = f"{tag}: the error is made in {s.call.label} [{s.call.module_type}]{where}: {_WHY[s.why]}"
            if s.why in ("inline code", "unverified", "unchecked") and s.first is not None and s.first.stack:
                f = s.first.stack[-1]
                text += f"; the first differing value is {s.first.name} ({f.file}:{f.line})"
            if s.detail:
                text += f" ({s.detail})"
            if s.unchecked:
                text += "; unchecked: " + ", ".join(c.label for c in s.unchecked)
            if s.fine:
                text += "; agreed before it: " + ", ".join(c.module.rsplit(".", 1)[-1] or "<root>" for c in s.fine)
            out.append((f"made_in_{tag.lower()}", text))
        return out


_WHY = {
    "own code": "its inputs agree and its output differs",
    "inline code": "its inputs agree; its own code between its children made the difference",
    "scaled after": "its own code scales what the module before it returned by a constant, where the other side's "
                    "module scales inside (the values differ by a constant): the constants differ",
    "one side only": "a module recorded on this side only, whose inputs agree where they were compared and whose "
                     "output is the differing value",
    "counterpart": "a module recorded on this side only, at the place of the other side's call named: what it "
                   "returned is the value compared with the differing value the other side's call returned",
    "unverified": "a module recorded on this side only, which ran before the first differing value and returned "
                  "a value that no record of the other side compares (everything compared before it agrees): "
                  "the difference is made by it or by the code between it and that value",
    "unchecked": "its inputs agree and its output differs; inside it, calls recorded on this side only returned "
                 "values nothing compares: one of them, or its own code around them, made the difference",
    "share": "a module recorded on this side only, whose output is one of the shares the first differing value "
             "is put together from: the other side's value holds every other share, slice by slice, but not this "
             "one's",
    "compared across": "a module recorded on this side only, whose output no pair compared: set against the other "
                       "side's module of its own at the same place (as many of them, outputs of one shape, in one "
                       "order) after the calls before it agreed, it is the first whose value differs",
    "state": "a weight or buffer of it differs (compared before the forward pass)",
    "handed on": "a module recorded on this side only that received what the call paired with the other "
                 "side's returned, a value that agrees with the other side's where a pair compares it (the two "
                 "calls return it in other shapes): the difference is made by it or by the code after it",
    "rate": "a dropout is called here with another rate than the other side's at the same place (the masks were "
            "shared, the rates are not): the values after it differ for that reason",
    "passed on": "a module recorded on this side only that returned, unchanged, the value a call inside it made, "
                 "where the other side's call named computes a step on that value: the step is missing from its "
                 "code",
    "ids": "a lookup table inside it returned its table's rows (the table agrees) at ids that differ: they were "
           "made by this call's code",
    "backward": "every forward value agrees, and the first gradient that differs is the one it passes back for "
                "an input (the output of the call before it): its backward made the difference",
}


def _site(c: Call) -> tuple[Any, ...]:
    rec = next(iter(c.inputs or c.outputs), None)
    return tuple(rec.stack[-2:]) if rec is not None else ()
