"""Random draws inside forward (dropout masks, ``rand`` values): which were replayed.

A recorder given ``--random-from`` replays the other trace's draws at its matching calls
(``recorder._random``); each draw is a ``Kind.RANDOM`` record whose position says what
happened: "drawn" (the model's own numbers), "replayed" (the other trace's), "fused" (inside
a kernel: not replayable). This module counts them and says, in sentences, what the
comparison of train-mode randomness can and cannot show.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from padiff_trace import Kind, Record

if TYPE_CHECKING:
    from ..alignment._calls import Call, TraceView

__all__ = ["DRAWN", "OFF", "REPLAYED", "RandomDraws", "random_draws", "random_inside", "randomness_sentences"]

DRAWN, REPLAYED, FUSED, OFF = "drawn", "replayed", "fused", "off"  # OFF: a dropout at rate 0, no draw


@dataclass
class RandomDraws:
    """One trace's random draws inside forward."""

    counts: Counter[str] = field(default_factory=Counter)  # position -> draws
    steps: set[int] = field(default_factory=set)
    modules: dict[str, list[str]] = field(default_factory=dict)  # position -> "module [op]" (first of each, in order)
    first: dict[str, tuple[int, str, str]] = field(default_factory=dict)  # position -> (step, module, op)

    def as_dict(self) -> dict[str, Any]:
        return {"counts": dict(self.counts), "steps": len(self.steps), "modules": self.modules}


def random_inside(view: TraceView, call: Call) -> list[Record]:
    """The random records of ``call``'s step made inside ``call`` (its module or one inside it),
    in the order they were recorded."""
    inside = call.module + "."
    return sorted((r for r in view.trace.select(kind=Kind.RANDOM, step=call.step)
                   if not call.module or r.module == call.module or r.module.startswith(inside)), key=lambda r: r.seq)


def random_draws(view: TraceView) -> RandomDraws:
    t = view.trace
    rows = t.table
    out = RandomDraws()
    sel = np.flatnonzero(rows["kind"] == int(Kind.RANDOM))
    strings = t.strings
    for i in sel.tolist():
        r = rows[i]
        what, module, op, step = strings[r["position"]], strings[r["module"]], strings[r["module_type"]], int(r["step"])
        out.counts[what] += 1
        out.steps.add(step)
        label = f"{module or '<root>'} [{op}]"
        seen = out.modules.setdefault(what, [])
        if label not in seen:
            seen.append(label)
        out.first.setdefault(what, (step, module or "<root>", op))
    return out


def randomness_sentences(a: RandomDraws, b: RandomDraws) -> list[tuple[str, str, bool]]:
    """(code, sentence, is_hint) about the two traces' random draws."""
    out: list[tuple[str, str, bool]] = []
    for side, me, _other in (("A", a, b), ("B", b, a)):
        n = me.counts[REPLAYED]
        if n:
            o = "B" if side == "A" else "A"
            mods = me.modules[REPLAYED]
            out.append(("random_replayed", f"randomness replayed: {side} used {o}'s {n} random draw(s) (dropout masks, "
                        f"random values) at {len(mods)} site(s) over {len(me.steps)} step(s): {_few(mods)}", False))
    replaying = a.counts[REPLAYED] or b.counts[REPLAYED]
    for side, me, source in (("A", a, b), ("B", b, a)):
        if not me.counts[REPLAYED]:
            continue  # ``me`` replays ``source``'s draws
        own = me.counts[DRAWN]
        if own:
            step, module, op = me.first[DRAWN]
            out.append(("random_not_replayed", f"{side} drew {own} random number set(s) of its own, first at step {step} "
                        f"in {module} [{op}]: the other trace has no draw of that kind and shape there, so outputs "
                        "after it cannot match (a dropout on one side only, or a different shape)", True))
        left = source.counts[DRAWN] - me.counts[REPLAYED]
        if left > 0 and not own:
            out.append(("random_unused", f"{left} of the other trace's {source.counts[DRAWN]} random draws had no "
                        f"matching call in {side} (a dropout on one side only, or fused into a kernel)", False))
    if not replaying and a.counts[DRAWN] and b.counts[DRAWN]:
        out.append(("random_independent", f"A and B each drew their own random numbers ({a.counts[DRAWN]} and "
                    f"{b.counts[DRAWN]} draws: dropout in train mode): outputs after the first draw cannot match; record "
                    "B with --random-from A's trace ('run' does this) to replay A's masks", True))
    for side, me in (("A", a), ("B", b)):
        if me.counts[FUSED]:
            step, module, op = me.first[FUSED]
            out.append(("random_fused", f"{side}: randomness inside a fused kernel cannot be replayed ({me.counts[FUSED]} "
                        f"call(s), first {module} [{op}] at step {step}): set its dropout to 0 or use the eager "
                        "attention path to compare it", True))
    return out


def _few(items: list[str], n: int = 3) -> str:
    more = f" and {len(items) - n} more" if len(items) > n else ""
    return ", ".join(items[:n]) + more
