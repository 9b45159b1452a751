"""Looking closer where the module records could not decide (``run``).

Two correct libraries draw module boundaries differently: a rotary table, an activation or a
mask is built by a module of its own on one side and inline on the other. When the first
divergence is named at such a call that nothing on the other side checks ("unverified": the
difference was made by it *or* by the code after it; "unchecked": by one of several such
calls or the code around them), the module records cannot tell which. The operations inside
can: both models are recorded again with their operations inside the two calls named
(``RecordOptions.ops_include``), and the comparison of those operations names the first one
that differs. That run's report is kept when it names another place inside the same two
calls: an op whose operands were compared and agree, that did not read a value the one-sided
call returned (nothing compares that operand: the op says nothing about the call that made it);
otherwise the first run stands.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from padiff_trace import MappingError, RecordingFailedError, analyzer
from padiff_trace.analyzer import CompareOptions, Report
from padiff_trace.recorder import RecordJob

from ._children import Children
from ._runsteps import Progress, RunTraces, record_child, variant

__all__ = ["look_closer"]

logger = logging.getLogger(__name__)

# what a side of the first divergence is named for when the module records leave it open
_OPEN = frozenset({"unverified", "unchecked"})


def _enclosing(side: Any, first: Any) -> str:
    """The module of the named pair's call on one side: the innermost module holding both the
    call the side names and the first differing record the pair holds."""
    named, other = side.call.module.split("."), first.module.split(".")
    common = []
    for x, y in zip(named, other, strict=False):
        if x != y:
            break
        common.append(x)
    return ".".join(common)


def _named(report: Report) -> tuple[str, str] | None:
    """The modules the first divergence is named at on each side: where the culprit search
    settled, or the modules of an operation that differs (an op's record is its module's) whose
    operands were compared and agree; None where none is named, a side is still named for a
    call nothing checked, or the op's operands were not compared."""
    d = report.first_divergence
    if d is None:
        return None
    if d.located is not None:
        if {d.located.a.why, d.located.b.why} & _OPEN:
            return None
        return d.located.a.call.module, d.located.b.call.module
    if d.input_rel_l2 is None or d.inputs_failed:  # an op whose operands nothing compared: its
        return None  # difference may have come in with them (made by an op paired with none)
    return d.pair.a.module, d.pair.b.module


def _inside(module: str, holder: str) -> bool:
    return not holder or module == holder or module.startswith(holder + ".")


def _patterns(module: str) -> tuple[str, ...]:
    return ("*",) if not module else (module, module + ".*")


def look_closer(kids: Children, say: Progress, report: Report, traces: RunTraces, opts: CompareOptions,
                job_a: Callable[..., RecordJob], job_b: Callable[..., RecordJob],
                mapping: str | None) -> tuple[Report, RunTraces]:
    """Where a side of the first divergence is named for a call nothing checked (see the module
    docstring): record A and B again with the operations inside the two calls, compare, and keep
    that report when it names another place inside them. ``job_a(trace, **changes)`` and
    ``job_b(trace, mapping, **changes)`` make the children's jobs; ``mapping``: the mapping file
    B was recorded with (None: the names' pairing). Returns the report and traces kept."""
    d = report.first_divergence
    loc = d.located if d is not None else None
    if loc is None or not ({loc.a.why, loc.b.why} & _OPEN):
        return report, traces
    held_a, held_b = _enclosing(loc.a, loc.pair.a), _enclosing(loc.b, loc.pair.b)
    base = job_a(traces.a).options
    if base.ops:  # the run already recorded the operations
        return report, traces
    alt_a, alt_b = variant(traces.a, "ops"), variant(traces.b, "ops")
    say(f"the first divergence is named at a call nothing on the other side checks ({loc.a.call.label} / "
        f"{loc.b.call.label}); recording both again with the operations inside {held_a or '<root>'} / "
        f"{held_b or '<root>'} -> {alt_a.name}, {alt_b.name}")
    try:
        for what, j in ((alt_a.stem, job_a(alt_a, options=dataclasses.replace(base, ops=True, ops_include=_patterns(held_a)))),
                        (alt_b.stem, job_b(alt_b, mapping, options=dataclasses.replace(base, ops=True, ops_include=_patterns(held_b))))):
            record_child(kids, f"recording {what}", j)
        other = analyzer.compare(alt_a, alt_b, opts if mapping is None else dataclasses.replace(opts, mapping=mapping))
    except (RecordingFailedError, MappingError) as exc:
        logger.warning("the operations were not compared: %s", exc)
        return report, traces
    named = _named(other)
    # an op that read what the one-sided call returned does not clear it: nothing compared that operand
    cleared = not any(s.why in _OPEN and analyzer.fed_by(other, tag, s.call.module) for tag, s in (("a", loc.a), ("b", loc.b)))
    kept = (named is not None and other.exit_code == 1 and cleared and _inside(named[0], held_a)
            and _inside(named[1], held_b) and named != (loc.a.call.module, loc.b.call.module))
    if named is None or not kept:
        logger.info("the operations inside %s / %s name no other place: the first run stands", held_a, held_b)
        other.close()
        return report, traces
    for c in report.conventions:  # what the first run already said (a pairing the values chose)
        if c.get("kind") == "convention":
            other.add_convention(c["text"])
    other.add_convention(
        f"looked closer: the module records named {loc.a.call.label} / {loc.b.call.label}, where nothing on the other "
        f"side checks the value; the operations inside {held_a or '<root>'} / {held_b or '<root>'}, recorded again, "
        f"name {named[0] or '<root>'} / {named[1] or '<root>'} ({alt_a.name}, {alt_b.name}; the first recordings kept beside)")
    report.close()
    return other, dataclasses.replace(traces, a=alt_a, b=alt_b)
