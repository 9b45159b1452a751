"""A scale one side applies inside a module and the other just after it, with another constant.

Two correct libraries may draw the boundary of a constant scale elsewhere: MiniCPM's embedding
scale inside the embedding module on one side, in the model's code after a plain embedding on
the other (``_boundary`` passes such a pair where the next comparable values agree). Where the
constants differ, the pair is the first divergence, and both sides' modules return values that
differ by a constant. The side whose module returns a value no later call receives as it is (its
caller scales it before handing it on) computes the scale in its caller's code: that caller is
named there, the module on the other side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..alignment._calls import TraceView
from ._located import Located, Side
from ._relations import BOUNDARY_RELATIONS
from ._sides import consumer

if TYPE_CHECKING:
    from ._pairview import PairResult as PairView

__all__ = ["scaled_outside"]

_MAX_READ = 1 << 22  # elements read to test a constant scale


def scaled_outside(found: Located[PairView], va: TraceView, vb: TraceView) -> Located[PairView]:
    """``found`` with the side that scales outside its module named at that module's caller
    (module docstring); ``found`` itself where the pair's outputs are not a constant apart, or
    both sides or neither hand the module's output on as it is."""
    pair = found.pair
    if pair.role != "output" or found.a.why != "own code" or found.b.why != "own code":
        return found
    ra, rb = pair.a, pair.b
    if (found.a.call.id != ra.call or found.b.call.id != rb.call or not (ra.has_data and rb.has_data)
            or ra.numel != rb.numel or not 0 < ra.numel <= _MAX_READ):
        return found
    try:
        a = np.asarray(ra.read(), np.float64).ravel()
        b = np.asarray(rb.read(), np.float64).ravel()
    except (OSError, ValueError, KeyError):
        return found
    if not (np.isfinite(a).all() and np.isfinite(b).all()) or BOUNDARY_RELATIONS["scale"](a, b) is None:
        return found
    handed = (consumer(va, found.a.call, ra.position) is not None, consumer(vb, found.b.call, rb.position) is not None)
    if handed[0] == handed[1]:
        return found
    side, view = ("a", va) if not handed[0] else ("b", vb)
    named = getattr(found, side)
    caller = next(view.ancestors(named.call), None)
    if caller is None:
        return found
    there = Side(caller, "scaled after", None, ())
    return Located(pair, there, found.b) if side == "a" else Located(pair, found.a, there)
