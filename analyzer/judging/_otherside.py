"""The other side of a named first divergence: what it names once one side has named a call.

``locate`` (``_culprit``) names a call on each side from that side's values. Where one side's
answer says more than the other's, the other side follows it: both unsure sides compared across
(``across``); a placeholder, or a call that handed on unchanged the value a step of the other
side worked on, named at the place of the other side's call of its own (``counterpart``); and
one level for both where one side can only name the pair's call (``level``).
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import TYPE_CHECKING

import numpy as np

from padiff_trace import Record

from ..alignment._calls import Call, TraceView
from ._across import first_across
from ._located import Located, PairResult, Side
from ._moving import passed_on
from ._onesided import placeholder_for
from ._shares import elements_within

if TYPE_CHECKING:
    from ._pairview import PairResult as PairView

__all__ = ["across", "counterpart", "level"]


def across(found: Located[PairView]) -> Located[PairView] | None:
    """Both sides unsure (``_UNSURE``): their unchecked calls compared across (``first_across``),
    the first pair that differs named on both sides (``why`` "compared across")."""
    if found.a.why not in _UNSURE or found.b.why not in _UNSURE:
        return None
    got = first_across(found.a.suspects, found.b.suspects)
    if got is None:
        return None
    return Located(found.pair, Side(got[0], "compared across", found.a.first, ()),
                   Side(got[1], "compared across", found.b.first, ()))


_UNSURE = ("unverified", "unchecked", "one side only")


def counterpart(found: Located[PairView], fwd: Sequence[PairResult], views: tuple[TraceView, TraceView],
                 calls: tuple[Call, Call], paired: tuple[Container[int], Container[int]]) -> Located[PairView]:
    """Where one side names a call of its own that made the differing value (``"one side only"``)
    and the other side does not, the other side's placeholder in its place (``placeholder_for``)
    is named there. Where one side names a call of its own (an activation module) that made or
    may have made the value and the other its pair's code, the other side's call that handed on, unchanged, the value
    that call received (``passed_on``) is named there, where the other side's first differing
    value still holds the values that call received (``_step_skipped``): the step is missing
    from its code."""
    for this, that, other in (("a", "b", 1), ("b", "a", 0)):
        named, partner = getattr(found, this), getattr(found, that)
        there: Side | None = None
        if named.why == "one side only" and partner.why != "one side only":
            hit = placeholder_for(named.call, [(getattr(p, this), getattr(p, that)) for p in fwd if not p.passed],
                                  views[other], calls[other], paired[other])
            there = Side(hit, "counterpart", partner.first, ()) if hit is not None else None
        if (there is None and named.why in ("one side only", "unverified") and partner.why in ("own code", "inline code")
                and _step_skipped(partner.first, named.call)):
            kept = passed_on(named.call, [(getattr(p, this), getattr(p, that)) for p in fwd if p.passed],
                             views[other], calls[other], paired[other])
            there = Side(kept, "passed on", partner.first, ()) if kept is not None else None
        if there is not None:
            return Located(found.pair, there, named) if this == "b" else Located(found.pair, named, there)
    return found


def _step_skipped(shown: Record | None, step: Call) -> bool:
    """Whether ``shown`` (one side's first differing value) holds, element for element, only
    values that the other side's ``step`` received (to 1e-4 of their scale): that side handed on
    what the step works on, where the other side computed the step (a ReLU left out, the
    pre-activation values broadcast by the resize after it). A side that computed a step of its
    own there (a sigmoid inline against the other's softmax module) holds other values."""
    if shown is None or not shown.has_data or not shown.numel or shown.numel > _MAX_READ:
        return False
    ins = [r for r in step.tensor_inputs() if r.has_data and 0 < r.numel <= _MAX_READ]
    if len(ins) != 1:
        return False
    try:
        x = np.asarray(shown.read(), dtype=np.float64)
        z = np.asarray(ins[0].read(), dtype=np.float64)
    except (OSError, ValueError, KeyError):
        return False
    return bool(np.isfinite(x).all() and np.isfinite(z).all()) and elements_within(x, z)


_MAX_READ = 1 << 22  # elements read for ``_step_skipped``


def level(found: Located[PairView], call_a: Call, call_b: Call) -> Located[PairView]:
    """Both sides named at one level: where one side can only name the pair's call (several
    unchecked calls side by side inside it), a call of the other side's own inside the pair is
    not evidence either; the pair's call is named there too, with that call as unchecked."""
    a, b = found.a, found.b
    if a.why == "unchecked" and b.why in _ONE_SIDED:
        b = Side(call_b, "unchecked", b.first, (), (b.call,))
    elif b.why == "unchecked" and a.why in _ONE_SIDED:
        a = Side(call_a, "unchecked", a.first, (), (a.call,))
    return Located(found.pair, a, b)


_ONE_SIDED = ("one side only", "unverified")
