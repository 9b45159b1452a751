"""Call pairs the weight map rules out, whatever order or shapes say (``_align``).

* A module whose tensors the other side keeps in several modules (a two-layer LSTM against two
  one-layer LSTMs: ``matching.module_splits``) is the call partner of none of them.
* A call of a module holding weights never pairs with a call of a module holding weights when
  each one's weights pair with tensors of modules unrelated to the other (``weighed_apart``).
* A call of a module anchored to one partner never pairs with a call of a module anchored to
  another (block 0's FFN called again where the other side calls block 1's).
* A call of a module whose weights the other side keeps in other modules (``homes``) is not a
  *type difference* of a call of an unrelated module (GraphSAGE's ``neigh_linear``, a part of the
  other side's ``lin``, against that side's ``act``): ``weighed_elsewhere``, for the gap rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._calls import Call

__all__ = ["Apart"]


@dataclass(frozen=True)
class Apart:
    """What the weights rule out: ``splits`` (A module -> B modules it never pairs with) and the
    anchors, numbered (module path -> the number of its anchor pair, on each side)."""

    splits: dict[str, frozenset[str]] = field(default_factory=dict)
    anchor_a: dict[str, int] = field(default_factory=dict)
    anchor_b: dict[str, int] = field(default_factory=dict)
    homes_a: dict[str, frozenset[str]] = field(default_factory=dict)  # A module -> B modules holding its weights' partners
    homes_b: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, splits: dict[str, frozenset[str]] | None, anchors: list[tuple[str, str]],
           homes: tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]] | None = None) -> Apart:
        ha, hb = homes or ({}, {})
        return cls(splits or {}, {x: k for k, (x, _) in enumerate(anchors)}, {y: k for k, (_, y) in enumerate(anchors)},
                   ha, hb)

    def weighed_elsewhere(self, a: Call, b: Call) -> bool:
        """Whether either call's module holds weights whose partners sit in modules that neither
        hold, nor are held by, the other call's module."""
        for m, other, homes in ((a.module, b.module, self.homes_a), (b.module, a.module, self.homes_b)):
            home = homes.get(m)
            if home is not None and not any(_related(h, other) for h in home):
                return True
        return False

    def mask(self, xs: list[Call], ys: list[Call]) -> np.ndarray:
        """[len(xs), len(ys)]: True where the pair is ruled out."""
        out = np.zeros((len(xs), len(ys)), dtype=bool)
        for i, x in enumerate(xs):
            if x.module in self.splits:
                out[i, [j for j, y in enumerate(ys) if y.module in self.splits[x.module]]] = True
        if self.homes_a and self.homes_b:
            for i, x in enumerate(xs):
                if x.module in self.homes_a:
                    out[i, [j for j, y in enumerate(ys) if self.weighed_apart(x.module, y.module)]] = True
        if self.anchor_a:
            ka = np.array([self.anchor_a.get(x.module, -1) for x in xs])
            kb = np.array([self.anchor_b.get(y.module, -1) for y in ys])
            out |= (ka[:, None] >= 0) & (kb[None, :] >= 0) & (ka[:, None] != kb[None, :])
        return out

    def weighed_apart(self, ma: str, mb: str) -> bool:
        """Whether modules ``ma`` (A) and ``mb`` (B) both hold weights, each one's partners in modules
        unrelated to the other (A's ``col_query``, a part of B's ``column.to_qkv``, against B's
        ``row.q``, a part of A's ``row_qkv``): two different computations, whatever their names say."""
        ha, hb = self.homes_a.get(ma), self.homes_b.get(mb)
        return (ha is not None and hb is not None and not any(_related(h, mb) for h in ha)
                and not any(_related(h, ma) for h in hb))

    def allows(self, a: Call, b: Call) -> bool:
        ka, kb = self.anchor_a.get(a.module, -1), self.anchor_b.get(b.module, -1)
        return (b.module not in self.splits.get(a.module, ()) and not (ka >= 0 and kb >= 0 and ka != kb)
                and not self.weighed_apart(a.module, b.module))


def _related(x: str, y: str) -> bool:
    """One module path is the other, or holds it (the root holds every module)."""
    return x == y or not x or not y or x.startswith(y + ".") or y.startswith(x + ".")
