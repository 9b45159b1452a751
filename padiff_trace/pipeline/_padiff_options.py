"""PaDiff's option names, as data: what each means there and what it becomes here.

``auto_diff(..., options={...})`` (PaDiff 0.1/0.2) and ``auto_diff(..., atol=..., ...)``
(PaDiff 0.3 keyword options) both land in ``parse_options``. One row per PaDiff name;
``docs/migrating-from-padiff.md`` prints the same table. A name not in the table is an
error naming the accepted ones; a row without a converter is a PaDiff option this tool
does not support, and its error says what to use instead.

Where a PaDiff option is one of our compare options under another name (``atol``, ``rtol``,
``compare_mode`` -> ``mode``), its row is made from our declaration (``analyzer.CompareOptions``):
the flag, the allowed values and their check come from there, and a new verdict mode is
accepted here at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from padiff_trace import UserError
from padiff_trace.analyzer import CompareOptions
from padiff_trace.options import OptionField, OptionValueError, option_fields

__all__ = ["OPTIONS", "AutoDiffSettings", "PadiffOption", "accepted", "migration_table", "parse_options"]

_DIFF_PHASES = ("both", "forward", "backward")


@dataclass(frozen=True)
class AutoDiffSettings:
    """What one ``auto_diff`` call does, after PaDiff's options were read."""

    atol: float | None = None  # None: padiff-trace's default (per dtype, noise-aware)
    rtol: float | None = None
    mode: str = "mean"
    diff_phase: str = "both"  # both / forward ("backward" runs as both, as PaDiff did outside single_step)
    single_step: bool = False
    steps: int = 1
    auto_weights: bool = True

    @property
    def backward(self) -> bool:
        """Whether the models run a backward pass (PaDiff's diff_phase "forward" skips it)."""
        return self.diff_phase != "forward"


def _flag(name: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise UserError(f"option {name}={v!r}: expected True or False")
    return v


def _count(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise UserError(f"option {name}={v!r}: expected an integer >= 1")
    return v


def _choice(table: Mapping[str, str] | tuple[str, ...]) -> Callable[[str, Any], str]:
    def convert(name: str, v: Any) -> str:
        if v not in table:
            raise UserError(f"option {name}={v!r}: expected one of {', '.join(table)}")
        return table[v] if isinstance(table, Mapping) else str(v)

    return convert


def _declared(o: OptionField) -> Callable[[str, Any], Any]:
    """PaDiff's value checked by our declaration of the same option (its choices, its check)."""

    def convert(name: str, v: Any) -> Any:
        try:
            o.validate(v)
        except OptionValueError as exc:
            raise UserError(f"option {name}={v!r}: {exc.problem}") from None
        return float(v) if o.parse is float else v

    return convert


@dataclass(frozen=True)
class PadiffOption:
    """One PaDiff option name. ``field`` is the ``AutoDiffSettings`` field it sets; a row
    with ``convert=None`` is not supported and ``instead`` says what to do."""

    name: str
    padiff: str  # where PaDiff documents it
    meaning: str  # what it meant in PaDiff
    here: str  # what it becomes in padiff-trace (docs table)
    field: str | None = None
    convert: Callable[[str, Any], Any] | None = None
    instead: str = ""


_COMPARE = {o.name: o for o in option_fields(CompareOptions)}


def _same_as(padiff_name: str, ours: str, padiff: str, meaning: str, note: str) -> PadiffOption:
    """The row of a PaDiff option that is our compare option ``ours`` under another name."""
    o = _COMPARE[ours]
    values = f" {'/'.join(o.choices)}" if o.choices else ""
    return PadiffOption(padiff_name, padiff, meaning, f"`{o.flag}{values}`; {note}", ours, _declared(o))


OPTIONS: dict[str, PadiffOption] = {
    o.name: o
    for o in (
        _same_as("atol", "atol", "0.1-0.3", "absolute tolerance (PaDiff default 0)",
                 "not given: padiff-trace's per-dtype, noise-aware default"),
        _same_as("rtol", "rtol", "0.1-0.3", "relative tolerance (PaDiff default 1e-7)",
                 "not given: padiff-trace's per-dtype, noise-aware default"),
        # PaDiff's "mean" compared the means of the two tensors; ours compares the mean absolute
        # difference (docs/analyzer.md "Verdict")
        _same_as("compare_mode", "mode", "0.1-0.3", '"mean" (means of the tensors) or "strict" (elementwise)',
                 '"mean" is the mean absolute difference, "strict" elementwise'),
        PadiffOption("diff_phase", "0.1-0.3", '"both", "forward" (no backward), "backward" (single_step only)',
                     '"forward": no backward pass, no optimizer, one step; "backward": as "both" (PaDiff outside '
                     "single_step did the same; the single-step run replays forward and backward at once)",
                     "diff_phase", _choice(_DIFF_PHASES)),
        PadiffOption("single_step", "0.1-0.3", "feed each layer the other model's inputs (no accumulated error)",
                     "`run --single-step` / `record --single-step-from`: B's modules receive A's recorded inputs "
                     "and output gradients; one step, no optimizer", "single_step", _flag),
        PadiffOption("steps", "0.2 (argument and option)", "training steps (needs optimizers)",
                     "`--steps`", "steps", _count),
        PadiffOption("auto_init", "0.3", "copy base_model's weights into raw_model (= auto_weights)",
                     "`--weights-from` (auto_weights)", "auto_weights", _flag),
        PadiffOption("cmd", "0.1-0.2", "an interactive shell over the reports after the run",
                     "not supported", instead="inspect the traces with `padiff-trace ls`/`info` and the tensors "
                     "with result.divergence_arrays()"),
        PadiffOption("debug", "0.1-0.2", "stop in pdb at the first difference",
                     "not supported", instead="the result object holds the first divergence; "
                     "result.divergence_arrays() gives both tensors as numpy arrays"),
    )
}


def accepted() -> str:
    """The option names ``auto_diff`` accepts, for error messages."""
    return ", ".join(n for n, o in OPTIONS.items() if o.convert is not None)


def parse_options(options: Mapping[str, Any] | None, keywords: Mapping[str, Any], base: AutoDiffSettings) -> AutoDiffSettings:
    """``base`` updated from PaDiff's ``options`` dict and 0.3-style keyword options.

    Raises UserError (one line) for an unknown name (listing the accepted ones), an
    unsupported one (saying what to use instead), a bad value, or a name given both ways
    with different values.
    """
    if options is not None and not isinstance(options, Mapping):
        raise UserError(f"options must be a dict like {{'atol': 1e-4}}, got {type(options).__name__}")
    given = dict(options or {})
    for name, value in keywords.items():
        if name in given and given[name] != value:
            raise UserError(f"option {name!r} given twice, in options ({given[name]!r}) and as a keyword ({value!r})")
        given[name] = value
    changes: dict[str, Any] = {}
    for name, value in given.items():
        row = OPTIONS.get(name)
        if row is None:
            raise UserError(f"unknown auto_diff option {name!r}; accepted: {accepted()}")
        if row.convert is None or row.field is None:
            raise UserError(f"PaDiff option {name!r} ({row.meaning}) is not supported: {row.instead}")
        changes[row.field] = row.convert(name, value)
    return replace(base, **changes)


def migration_table() -> str:
    """The option table of docs/migrating-from-padiff.md (markdown), from ``OPTIONS``."""
    lines = ["| PaDiff option | PaDiff version | meaning in PaDiff | padiff-trace |", "|---|---|---|---|"]
    for o in OPTIONS.values():
        here = o.here if o.convert is not None else f"not supported: {o.instead}"
        lines.append(f"| `{o.name}` | {o.padiff} | {o.meaning} | {here} |")
    return "\n".join(lines)
