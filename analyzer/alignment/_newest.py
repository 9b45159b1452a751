"""Leaves of a decoder step with a key/value cache against the whole prefix of one without.

One port feeds each decoding step the newest token only (``[b, 1, d]``) and keeps the keys and
values of the earlier ones in a cache it passes in and returns; the other computes the whole
prefix again (``[b, s, d]``). Shapes pair neither the states nor the cache: ``newest_pairs``
pairs the leaves whose shapes differ only by that sequence axis (``newest_axis``), and the
cache pairs with nothing.
"""

from __future__ import annotations

from padiff_trace import Record
from padiff_trace.arrays import newest_axis

__all__ = ["newest_pairs"]


def newest_pairs(left_a: list[Record], left_b: list[Record]) -> list[tuple[Record, Record, None]]:
    """Leaves no shape paired where one side's holds the newest position only and the other's
    all of them (``newest_axis``: a decoder stepping with a key/value cache, whose extra
    arguments and outputs, the cache, pair with nothing): each in order with the one leaf of the
    other side that fits it, of the same dtype kind; none where a leaf fits several."""
    out: list[tuple[Record, Record, None]] = []
    taken: set[int] = set()
    for x in left_a:
        fits = [y for y in left_b if id(y) not in taken and str(x.dtype)[:1] == str(y.dtype)[:1]
                and (newest_axis(tuple(x.shape), tuple(y.shape)) is not None
                     or newest_axis(tuple(y.shape), tuple(x.shape)) is not None)]
        if len(fits) == 1:
            out.append((x, fits[0], None))
            taken.add(id(fits[0]))
    return out
