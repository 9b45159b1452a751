"""Differences in the numerics environment of the two recordings, named before anything else.

Each trace records the settings that can change its numbers (trace meta ``numerics``: TF32,
thread counts, oneDNN, determinism flags, CPU, a curated list of environment variables; see
docs/recorder.md). ``environment_differences`` compares the two: a setting both record with
different values, or one only one side records, with what a difference in it is known to do
and the switch that removes it (``padiff_trace.matching.NUMERICS_EFFECTS``, the one table).

A framework's own settings (``torch.*``, ``paddle.*``) are compared only when both traces
record that framework's settings (two torch runs); the machine (``cpu.*``) and the environment
variables (``env.*``) always. An environment variable a framework sets itself on import
(paddle: ``OMP_NUM_THREADS=1``) is not a difference against another framework's trace.
A trace recorded before settings were recorded has none: nothing is compared.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from padiff_trace.matching import NUMERICS_EFFECTS, NumericsEffect, numerics_effect

__all__ = ["EnvDifference", "environment_differences", "explaining"]

COMMON = ("cpu", "env")  # namespaces every recording has, whatever its framework
_ABSENT = object()
_UNKNOWN = "a recorded setting this version of padiff-trace does not describe"


@dataclass(frozen=True)
class EnvDifference:
    """One numerics setting that differs between A and B."""

    key: str  # the recorded key ("torch.matmul_allow_tf32", "env.OMP_NUM_THREADS")
    a: Any  # A's value; None where A does not record it
    b: Any
    effect: NumericsEffect
    inert: bool = False  # a GPU-only setting and both recordings ran on CPU

    @property
    def label(self) -> str:
        """The table's label, with the variable's or flag's name where the label is generic
        (a key matched by a pattern: ``env.FLAGS_*``)."""
        name = self.key.split(".", 1)[-1]
        return self.effect.label if self.key in NUMERICS_EFFECTS or name in self.effect.label else f"{name} ({self.effect.label})"

    def shown(self, side: str) -> str:
        v = self.a if side == "a" else self.b
        if v is None:
            return "(not set)" if self.key.startswith("env.") else "(not recorded)"
        return str(v)

    def text(self) -> str:
        """One sentence: label, both values, what it does, the switch."""
        out = f"{self.label}: A {self.shown('a')}, B {self.shown('b')}: {self.effect.effect}"
        if self.effect.switch:
            out += f"; to remove it: {self.effect.switch}"
        if self.inert:
            out += " (a GPU setting: no effect here, both ran on CPU)"
        return out

    def affects(self, names: Iterable[str]) -> str | None:
        """The first of ``names`` (module types, op names) this setting affects, else None."""
        kinds = self.effect.kinds
        if self.inert or not kinds:
            return None
        for name in names:
            low = name.lower()
            if name and ("*" in kinds or any(k in low for k in kinds)):
                return name
        return None

    def as_dict(self) -> dict[str, Any]:
        """report.json's ``environment`` entries."""
        e = self.effect
        return {"key": self.key, "label": self.label, "a": self.a, "b": self.b, "effect": e.effect,
                "switch": e.switch, "kinds": list(e.kinds), "no_effect_here": self.inert}


def environment_differences(meta_a: dict[str, Any], meta_b: dict[str, Any]) -> list[EnvDifference]:
    """The numerics settings that differ between two traces' meta, in key order."""
    na, nb = meta_a.get("numerics"), meta_b.get("numerics")
    if not isinstance(na, dict) or not isinstance(nb, dict):
        return []
    fa, fb = str(meta_a.get("framework", "")), str(meta_b.get("framework", ""))
    spaces = {k.split(".", 1)[0] for k in na} & {k.split(".", 1)[0] for k in nb}
    on_cpu = all(str(m.get("device", "cpu")).lower().startswith("cpu") for m in (meta_a, meta_b))
    out = []
    for key in sorted(set(na) | set(nb)):
        space = key.split(".", 1)[0]
        if space not in COMMON and space not in spaces:
            continue  # another framework's settings, or a namespace one side does not record
        va, vb = na.get(key, _ABSENT), nb.get(key, _ABSENT)
        if va == vb:
            continue
        effect = numerics_effect(key) or NumericsEffect(key, _UNKNOWN)
        if fa != fb and (va is _ABSENT or vb is _ABSENT):
            holder = fb if va is _ABSENT else fa
            if holder in effect.set_by:
                continue  # that framework's own default (paddle sets OMP_NUM_THREADS), not the user's
        out.append(EnvDifference(key, None if va is _ABSENT else va, None if vb is _ABSENT else vb, effect,
                                 inert=effect.gpu_only and on_cpu))
    return out


def explaining(
    diffs: list[EnvDifference], names: Iterable[str], rel_l2: float | None = None, dtype: str = ""
) -> list[tuple[EnvDifference, str, bool]]:
    """The differences that affect one of ``names`` (the first divergence's module types and op
    names): (difference, the name it affects, whether it can account for an error of ``rel_l2``
    — in a float32/float64 pair, at most ten times the error it is known to make)."""
    names = [n for n in names if n]
    out = []
    for d in diffs:
        hit = d.affects(names)
        if hit is None:
            continue
        bound = d.effect.rel_error
        fits = bound is None or rel_l2 is None or dtype not in ("float32", "float64") or rel_l2 <= 10 * bound
        out.append((d, hit, fits))
    return out
