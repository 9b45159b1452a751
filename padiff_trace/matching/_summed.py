"""One bias against the biases of several modules: a pass of the weight matcher's last resort
(``_weightmatch``).

A module that reads a concatenation (``Linear(cat([h0, h1, h2]))``) computes what several
modules reading one part each compute when their outputs are added (``head0(h0) + head1(h1) +
head2(h2)``): its weight is theirs side by side along the input axis (the packed pass pairs
those), and its one bias is the sum of their biases. A hand-written recurrent cell does the
same with one Linear over ``[x, h]`` against ``weight_ih``/``weight_hh`` with ``bias_ih`` and
``bias_hh``. No one-to-one pairing exists for those biases, and none is needed: the pair is
``summed`` (``summed_groups``). A transfer writes the one bias into the first partner and zeros
into the others (or the partners' sum into the one), and a comparison sets the one against the
partners' sum. Only left-over trainable vectors as long as the weight's output axis, in the
modules holding the parts, are taken: at most one per part's module, or, where one module holds
every part (a cell), at most one per part.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ._weightmap import SUMMED, WeightPair
from ._weighttensors import MTensor

__all__ = ["pair_summed_biases"]

logger = logging.getLogger(__name__)

Pair = Callable[..., None]  # the matcher's ``pair(x, y, how, ...)``
_INPUT_AXIS = 1  # of a weight in the canonical layout [out, in, ...]


def _input_packs(pairs: list[WeightPair]) -> dict[tuple[str, str], list[str]]:
    """(side, packed weight) -> the other side's weights it holds along the input axis, in order."""
    out: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for p in pairs:
        if p.axis != _INPUT_AXIS or (p.a_part is None) == (p.b_part is None) or p.a_groups > 1 or p.b_groups > 1:
            continue
        side, whole, part, at = ("a", p.a, p.b, p.a_part) if p.a_part is not None else ("b", p.b, p.a, p.b_part)
        assert at is not None
        out.setdefault((side, whole), []).append((at[0], part))
    return {k: [n for _, n in sorted(v)] for k, v in out.items() if len(v) > 1}


def _vectors(live: list[MTensor], module: str, rows: int) -> list[MTensor]:
    return [t for t in live if t.module == module and t.info.trainable and t.cshape == (rows,)]


def pair_summed_biases(la: list[MTensor], lb: list[MTensor], pairs: list[WeightPair], pair: Pair) -> None:
    """Pair each left-over bias of a weight packed along its input axis with the left-over
    biases of its parts' modules, as one sum (see the module docstring)."""
    live = {"a": la, "b": lb}
    for (side, whole), parts in _input_packs(pairs).items():
        other = "b" if side == "a" else "a"
        module = whole.rpartition(".")[0]
        mine = [t for t in live[side] if t.module == module and t.info.trainable and len(t.cshape) == 1]
        if len(mine) != 1:
            continue
        rows = mine[0].cshape[0]
        modules = list(dict.fromkeys(n.rpartition(".")[0] for n in parts))
        per_module = [_vectors(live[other], m, rows) for m in modules]
        theirs = [t for vs in per_module for t in vs]
        if not 2 <= len(theirs) <= len(parts) or (len(modules) > 1 and any(len(vs) > 1 for vs in per_module)):
            continue  # one is a plain pair (the passes after this one); several in one of several modules: unclear
        logger.info("paired %s with the sum of %s: its weight holds theirs along the input axis",
                    mine[0].info.name, ", ".join(t.info.name for t in theirs))
        for t in theirs:
            pair(mine[0], t, SUMMED)
