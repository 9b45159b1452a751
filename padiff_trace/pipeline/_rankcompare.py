"""Two multi-rank traces compared rank by rank: rank k of A with rank k of B, each through
``analyzer.compare``, one report per rank (``REPORT/rank-NNNNN/``) and a summary naming each
rank's verdict and the first divergence of every rank that diverged.

Both traces must have the same world size. A multi-rank trace beside a single-process one is
joined first (``_join``, ``_joincompare``); two different shardings are not compared with each
other yet (docs/distributed.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from padiff_trace import (
    CorruptTraceError,
    Frame,
    NotATraceError,
    TraceChangedError,
    TraceNotFoundError,
    TraceReadError,
    TraceWriteError,
    UserError,
    analyzer,
    visible,
)
from padiff_trace.recorder import rank_dir

from ._collectives import NonFinite, entered_at, first_nonfinite, nonfinite_lines
from ._ranks import RankedTrace, RankState, is_multirank, open_ranks

__all__ = ["DivergenceSite", "NonFinite", "RankComparison", "RankDivergence", "RankResult", "compare_ranks", "check_rank_sides",
           "first_nonfinite"]

logger = logging.getLogger(__name__)

SUMMARY_JSON, SUMMARY_TXT = "ranks.json", "summary.txt"  # in the report directory, beside rank-NNNNN/
_EXIT = {"ALIGNED": 0, "DIVERGED": 1, "INCOMPLETE": 3, "MISSING": 3}
_UNREADABLE = (CorruptTraceError, NotATraceError, TraceNotFoundError, TraceReadError, TraceChangedError)
_FUTURE = ("comparing two shardings with each other is not done yet (issue 29): join each like one single-process trace "
           "(padiff-trace join T --like SINGLE --out J) and compare the joined traces")


@dataclass(frozen=True)
class DivergenceSite:
    """One side of a first divergence: the record's name, its module's type, the user stack."""

    name: str
    module_type: str
    stack: tuple[Frame, ...]


@dataclass(frozen=True)
class RankDivergence:
    """The first divergence of one rank's comparison."""

    step: int
    role: str
    reason: str
    a: DivergenceSite
    b: DivergenceSite
    seq: int = -1  # A's record: its place in the rank's recording (ranks run one program)
    entered: str = ""  # at a collective's output: the call, and its attributes on each side (``entered_at``)

    def as_dict(self) -> dict[str, Any]:
        side = lambda s: {"name": s.name, "module_type": s.module_type, "stack": [list(f) for f in s.stack]}  # noqa: E731
        return {"step": self.step, "role": self.role, "reason": self.reason, "a": side(self.a), "b": side(self.b), "seq": self.seq,
                "entered": self.entered or None}


@dataclass(frozen=True)
class RankResult:
    """Rank k of A compared with rank k of B; ``verdict`` MISSING: one side has no trace to compare."""

    rank: int
    verdict: str  # ALIGNED, DIVERGED, INCOMPLETE, MISSING
    problem: str = ""  # why the comparison is not whole: a rank missing, incomplete or damaged on a side
    first: RankDivergence | None = None
    report_dir: Path | None = None

    @property
    def exit_code(self) -> int:
        return _EXIT[self.verdict]


@dataclass(frozen=True)
class RankComparison:
    """``compare_ranks``'s outcome: one ``RankResult`` per rank."""

    a: RankedTrace
    b: RankedTrace
    ranks: tuple[RankResult, ...]
    report_dir: Path | None = None
    nonfinite_a: tuple[NonFinite, ...] = ()  # each rank's first NaN/Inf, the earliest first (``first_nonfinite``)
    nonfinite_b: tuple[NonFinite, ...] = ()

    @property
    def verdict(self) -> str:
        """DIVERGED when a rank diverged, else INCOMPLETE when a rank is missing or incomplete, else ALIGNED."""
        verdicts = {r.verdict for r in self.ranks}
        if "DIVERGED" in verdicts:
            return "DIVERGED"
        return "INCOMPLETE" if verdicts & {"INCOMPLETE", "MISSING"} else "ALIGNED"

    @property
    def exit_code(self) -> int:
        """0 aligned, 1 a rank diverged, 3 a rank missing or incomplete (and none diverged)."""
        return _EXIT[self.verdict]

    def as_dict(self) -> dict[str, Any]:
        """``REPORT/ranks.json``."""
        return {
            "format": "padiff-trace-rank-compare",
            "version": 1,
            "verdict": self.verdict.lower(),
            "exit_code": self.exit_code,
            "world_size": self.a.world_size,
            "a": str(self.a.path),
            "b": str(self.b.path),
            "ranks": [{"rank": r.rank, "verdict": r.verdict.lower(), "exit_code": r.exit_code, "problem": r.problem or None,
                       "report": r.report_dir.name if r.report_dir else None,
                       "first_divergence": r.first.as_dict() if r.first else None} for r in self.ranks],
            "first_nonfinite": {"a": [n.as_dict() for n in self.nonfinite_a], "b": [n.as_dict() for n in self.nonfinite_b]},
        }

    def summary_text(self, width: int = 80) -> str:
        """The terminal summary: the verdict, then one line per rank, the first divergence (both
        stacks) of each rank that diverged, and why a rank is missing or incomplete."""
        L = [f"padiff-trace compare, {self.a.world_size} ranks: {self.verdict}"]
        for side, t, tail in (("A", self.a, ""), ("B", self.b, "  (reference)")):
            L.append(f"  {side} {t.framework} {t.path}  ({t.launcher}, world size {t.world_size}{', ' + t.backend if t.backend else ''}){tail}")
        for r in self.ranks:
            L.append(f"  rank {r.rank}: {r.verdict}" + (f"  ({r.report_dir})" if r.report_dir else ""))
            if r.problem:
                L += textwrap.wrap(r.problem, width, initial_indent="    ", subsequent_indent="      ")
            if r.first is not None:
                d = r.first
                L.append(f"    first divergence: step {d.step}, {d.role}" + (f" ({d.reason})" if d.reason else ""))
                if d.entered:
                    L.append(f"      entered at {d.entered}")
                for label, s in (("A", d.a), ("B", d.b)):
                    L.append(f"      {label} {s.name}  [{s.module_type or '-'}]")
                    L += [line for f in s.stack[-2:] for line in _frame(f, width)]
        L += self._earliest_lines()
        L += nonfinite_lines("A", self.nonfinite_a) + nonfinite_lines("B", self.nonfinite_b)
        for t in (self.a, self.b):
            if t.strays:
                L.append(f"  note: {t.path}: {', '.join(p.name for p in t.strays)} past world size {t.world_size} (an earlier "
                         "recording), not compared")
        return "\n".join(visible(line) for line in L)


    def _earliest_lines(self) -> list[str]:
        """Which rank diverged first, when several did: the earliest step, then the earliest place
        in the recording (a collective carries one rank's error to the others after it)."""
        diverged = [r for r in self.ranks if r.first is not None]
        if len(diverged) < 2:
            return []
        first = min(diverged, key=lambda r: (r.first.step, r.first.seq) if r.first else (0, 0))
        assert first.first is not None
        others = ", ".join(f"rank {r.rank} ({r.first.a.name}, record {r.first.seq})" for r in diverged if r is not first and r.first)
        return [f"  earliest divergence: rank {first.rank}, step {first.first.step}, {first.first.a.name} (record "
                f"{first.first.seq}); later: {others}"]


def _frame(f: Frame, width: int) -> list[str]:
    """A stack frame as two lines: where, then the source line (whole, up to ``width``)."""
    src = f.source.strip()
    return [f"        {f.file}:{f.line}", "          " + (src if len(src) <= width - 10 else src[: width - 13] + "...")]


def check_rank_sides(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True when a multi-rank trace is among ``a`` and ``b``: both, of one world size (compare them
    with ``compare_ranks``), or one of them beside a single-process trace (``compare_joined`` joins
    its ranks first); False when neither is; a one-line ``UserError`` for two world sizes."""
    ma, mb = is_multirank(a), is_multirank(b)
    if not ma and not mb:
        return False
    if ma != mb:
        return True
    wa, wb = open_ranks(a).world_size, open_ranks(b).world_size
    if wa != wb:
        raise UserError(f"{a} has {wa} ranks, {b} has {wb}: rank-by-rank comparison needs the same world size; record "
                        f"both with the same --nproc, or compare two ranks (padiff-trace compare {rank_dir(a, 0)} "
                        f"{rank_dir(b, 0)}); {_FUTURE}")
    return True


def _site(r: Any) -> DivergenceSite:
    return DivergenceSite(str(r.name), str(r.module_type or ""), tuple(r.stack or ()))


def _first(report: analyzer.Report) -> RankDivergence | None:
    d = report.first_divergence
    if d is None:
        return None
    p = d.pair
    return RankDivergence(p.step, p.role, p.reason, _site(p.a), _site(p.b), int(p.a.seq), entered_at(p.a, p.b))


def _side_problem(label: str, s: RankState) -> str:
    return f"{label} {s.line()}: {s.path}" if s.state != "complete" else ""


def option_items(options: Any) -> dict[str, Any]:
    """A ``CompareOptions`` as the keywords ``compare_ranks``/``compare_joined`` pass on to
    ``analyzer.compare`` (every declared field, so a new option reaches every rank), but its
    progress bar: these report progress a rank at a time (their own ``progress``)."""
    return {f.name: getattr(options, f.name) for f in dataclasses.fields(options) if f.name != "progress"}


def _rank_options(options: dict[str, Any], rank: int) -> dict[str, Any]:
    """Referee traces given as multi-rank traces: this rank's; a single one cannot referee ranks."""
    out = dict(options)
    for key in ("reference", "reference_b"):
        ref = out.get(key)
        if ref is None:
            continue
        if not is_multirank(ref):
            raise UserError(f"{ref}: a single-process referee for multi-rank traces; record it with as many processes "
                            "(--nproc) and pass that")
        out[key] = str(rank_dir(ref, rank))
    return out


def compare_ranks(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    report_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> RankComparison:
    """Compare rank k of multi-rank trace ``a`` with rank k of ``b`` (the reference), for every
    rank. ``options`` are ``analyzer.compare``'s (a ``reference``/``reference_b`` given as a
    multi-rank trace is used rank by rank). ``report_dir``: each rank's report goes to
    ``report_dir/rank-NNNNN/``, the summary to ``ranks.json`` and ``summary.txt`` beside them.
    A rank missing, stale or unreadable on either side is verdict MISSING (never compared);
    ``progress`` receives one line per rank compared. Raises ``UserError`` when the two are not
    multi-rank traces of one world size (``check_rank_sides``)."""
    if not check_rank_sides(a, b):
        raise UserError(f"{a}, {b}: not multi-rank traces; compare them with analyzer.compare")
    if is_multirank(a) != is_multirank(b):
        raise UserError(f"{a}, {b}: one multi-rank and one single-process trace; compare them with compare_joined")
    ra, rb = open_ranks(a), open_ranks(b)
    out = Path(report_dir) if report_dir is not None else None
    results = []
    for sa, sb in zip(ra.ranks, rb.ranks, strict=True):
        problem = "; ".join(p for p in (_side_problem("A", sa), _side_problem("B", sb)) if p)
        if not (sa.readable and sb.readable):
            results.append(RankResult(sa.rank, "MISSING", problem))
            continue
        if progress is not None:
            progress(f"comparing rank {sa.rank} of {ra.world_size}")
        rank_options = _rank_options(options, sa.rank)
        try:
            report = analyzer.compare(sa.path, sb.path, **rank_options)
        except _UNREADABLE as exc:  # this rank's trace (or referee) is damaged: the other ranks still count
            results.append(RankResult(sa.rank, "MISSING", "; ".join(p for p in (problem, str(exc)) if p)))
            continue
        where = None
        if out is not None:
            where = out / rank_dir("", sa.rank).name
            with _writing(where, "write the report"):
                report.write(where)
        results.append(RankResult(sa.rank, report.verdict, problem, _first(report), where))
        report.close()
        del report  # one rank's tables and files at a time
    result = RankComparison(ra, rb, tuple(results), out, first_nonfinite(ra), first_nonfinite(rb))
    if out is not None:
        with _writing(out, "write the rank summary"):
            _replace(out / SUMMARY_JSON, json.dumps(result.as_dict(), indent=1) + "\n")
            _replace(out / SUMMARY_TXT, result.summary_text() + "\n")
    return result


def _replace(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@contextlib.contextmanager
def _writing(path: Path, doing: str) -> Iterator[None]:
    """A failure to write as one ``TraceWriteError`` naming ``path``; reading errors pass unchanged."""
    try:
        yield
    except TraceWriteError as exc:
        raise TraceWriteError.from_os(path, doing, exc, "another --report") from exc
    except UserError:
        raise
    except OSError as exc:
        raise TraceWriteError.from_os(path, doing, exc, "another --report") from exc
