"""Parts held along a new axis: one side keeps ``B`` ``[N, S, 2]`` (a complex parameter as real and
imaginary parts in its last axis), the other ``B_real`` and ``B_imag`` ``[N, S]``: a pass of the
weight matcher's last resort (``_weightmatch``).

The parts' names say it: each is the holder's local name with a suffix (``B`` -> ``B_real``,
``B_imag``), they sit in one module, as many as the holder's axis is long, each of the holder's
shape without that axis, in the block the holder belongs to. They pair with the holder's slices
along that axis in registration order (real before imaginary, as ``view_as_real`` lays them
out). A holder whose shape fits along more than one axis, or that several groups fit, stays
unpaired.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Callable

from ._weighttensors import MTensor

__all__ = ["pair_new_axis_parts"]

logger = logging.getLogger(__name__)

Pair = Callable[..., None]  # the matcher's ``pair(x, y, how, x_part, y_part, axis, used=...)``
_MAX_PARTS = 4  # real|imag, or a few parts stacked: a longer axis is data, not parts
_SUFFIX = re.compile(r"^[._]?[a-z]+\d*$")


def _parts(y: MTensor, other: list[MTensor]) -> list[tuple[int, list[MTensor]]]:
    """(axis, y's parts in registration order) for every axis of ``y`` a group fits."""
    by_module: dict[str, list[MTensor]] = defaultdict(list)
    for x in other:
        rest = x.local[len(y.local):] if x.local.startswith(y.local) else ""
        if not x.used and x.info.trainable and rest and _SUFFIX.match(rest) and (x.key == y.key or not x.key or not y.key):
            by_module[x.info.module].append(x)
    out = []
    for axis, n in enumerate(y.cshape):
        if not 2 <= n <= _MAX_PARTS:
            continue
        rest_shape = y.cshape[:axis] + y.cshape[axis + 1 :]
        for xs in by_module.values():
            fit = sorted((x for x in xs if x.cshape == rest_shape), key=lambda t: t.index)
            if len(fit) == n:
                out.append((axis, fit))
    return out


def pair_new_axis_parts(la: list[MTensor], lb: list[MTensor], pair: Pair) -> dict[str, tuple[int, ...]]:
    """Pair every left-over tensor holding a group of the other side's along a new axis (see the
    module docstring); returns each holder's name -> the order its canonical axes were taken in
    (the parts' axis first), for the map to say."""
    moved: dict[str, tuple[int, ...]] = {}
    for one, other in ((la, lb), (lb, la)):
        for y in one:
            if y.used or not y.info.trainable or len(y.cshape) < 2:
                continue
            found = _parts(y, other)
            if len(found) != 1:
                continue
            axis, xs = found[0]
            if any(x.used for x in xs):
                continue
            order = (axis, *[k for k in range(len(y.cshape)) if k != axis])  # the parts' axis first
            base = y.perm if y.perm is not None else tuple(range(len(y.cshape)))
            y.perm, y.cshape = tuple(base[k] for k in order), tuple(y.cshape[k] for k in order)
            moved[y.info.name] = order
            logger.info("paired %s along axis %d with %s", y.info.name, axis, ", ".join(x.info.name for x in xs))
            for i, x in enumerate(xs):
                pair(x, y, "stacked", None, (i, i + 1), 0, used=False)
                x.used = True
            y.used = True
    return moved
