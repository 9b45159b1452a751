"""A sharded run compared with a single-process one: the multi-rank side is joined into one trace
like the single-process side (``join_ranks``), and that trace is compared by ``analyzer.compare``.
With a report directory the joined trace stays as ``REPORT/joined.trace``; without one it lives in
a temporary directory for the comparison only."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from padiff_trace import UserError, analyzer, open_trace

from ._join import JoinedRecord, JoinResult, join_ranks
from ._ranks import is_multirank

__all__ = ["JOINED_TRACE", "JoinedComparison", "SliceError", "compare_joined"]

JOINED_TRACE = "joined.trace"  # in the report directory


@dataclass(frozen=True)
class SliceError:
    """The first divergence's difference within one rank's slice of a concatenated record."""

    rank: int
    start: int
    stop: int
    max_abs: float


@dataclass(frozen=True)
class JoinedComparison:
    """``compare_joined``'s outcome: how the ranks were joined, and the report of the comparison."""

    join: JoinResult
    report: analyzer.Report
    joined_side: str  # "A" or "B": the side that was a multi-rank trace
    kept: Path | None  # the joined trace when it was kept (REPORT/joined.trace)
    report_dir: Path | None = None
    first_record: JoinedRecord | None = None  # how the first divergence's record was joined
    slices: tuple[SliceError, ...] = ()  # its difference in each rank's slice (a concatenated record)

    @property
    def verdict(self) -> str:
        return str(self.report.verdict)

    @property
    def exit_code(self) -> int:
        return int(self.report.exit_code)

    def note(self) -> str:
        """One line: what was joined, how, and where it is."""
        j, c = self.join, self.join.counts
        where = str(self.kept) if self.kept is not None else "a temporary trace"
        return (f"{self.joined_side} {j.source} is a multi-rank trace ({j.world_size} ranks): joined like the single-process "
                f"trace into {where} ({c.get('concat', 0)} concatenated, {c.get('sum', 0)} summed, {c.get('replicated', 0)} "
                f"replicated, {c.get('differing', 0)} differing; {c.get('left out', 0)} left out, not compared)")

    def rank_lines(self, most: int = 10) -> list[str]:
        """The records left out of the join (the first ``most``), and where the first divergence
        lies among the ranks' slices (a record that was not replicated)."""
        out = self.join.left_out_lines(most=most)
        r = self.first_record
        if r is None or r.rule == "replicated":
            return out
        how = f"{r.rule} axis {r.axis}" if r.axis is not None else r.rule
        out.append(f"  first divergence {r.name} was joined by {how} ({r.source})" + (f": {r.why}" if r.why else ""))
        for s in self.slices:
            out.append(f"    rank {s.rank}'s slice [{s.start}:{s.stop}] on axis {r.axis}: max|a-b| {s.max_abs:.3g}")
        if self.slices:
            worst = max(self.slices, key=lambda s: s.max_abs)
            out.append(f"    the largest difference is in rank {worst.rank}'s slice")
        return out

    def summary_text(self) -> str:
        return "\n".join([self.note(), self.report.summary_text(), *self.rank_lines()])

    def as_dict(self) -> dict[str, Any]:
        r = self.first_record
        return {"joined_side": self.joined_side, "joined_trace": str(self.kept) if self.kept else None,
                "rules": dict(self.join.counts), "left_out": [x.as_dict() for x in self.join.left_out],
                "first_divergence_joined": r.as_dict() if r is not None else None,
                "first_divergence_slices": [{"rank": s.rank, "start": s.start, "stop": s.stop, "max_abs": s.max_abs}
                                            for s in self.slices]}


def _first_record(report: analyzer.Report, join: JoinResult, side: str) -> JoinedRecord | None:
    d = report.first_divergence
    if d is None:
        return None
    rec = d.pair.a if side == "A" else d.pair.b
    return next((r for r in join.records if r.seq == rec.seq), None)


def _slices(report: analyzer.Report, joined: JoinedRecord, a: Path, b: Path) -> tuple[SliceError, ...]:
    """max|a-b| in each rank's slice of the first divergence's record, when both sides have its
    values in one shape (read once, one record)."""
    d = report.first_divergence
    if d is None or joined.rule != "concat" or joined.axis is None:
        return ()
    pa, pb = d.pair.a, d.pair.b
    if not (pa.has_data and pb.has_data) or pa.shape != pb.shape:
        return ()
    with open_trace(a) as ta, open_trace(b) as tb:
        va, vb = ta.read(pa.seq).astype(np.float64), tb.read(pb.seq).astype(np.float64)
    diff = np.abs(va - vb)
    out, start = [], 0
    for rank, shape in enumerate(joined.shapes):
        stop = start + shape[joined.axis]
        part = np.take(diff, range(start, stop), axis=joined.axis)
        out.append(SliceError(rank, start, stop, float(np.nanmax(part, initial=0.0))))
        start = stop
    return tuple(out)


def compare_joined(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    report_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> JoinedComparison:
    """Compare ``a`` with ``b`` (the reference) where exactly one of them is a multi-rank trace:
    its ranks are joined like the other (``join_ranks``) and the joined trace is compared.
    ``options`` are ``analyzer.compare``'s. ``report_dir``: the report is written there, the joined
    trace kept as ``report_dir/joined.trace``; else it is removed after the comparison."""
    ma, mb = is_multirank(a), is_multirank(b)
    if ma == mb:
        raise UserError(f"{a}, {b}: compare_joined takes one multi-rank and one single-process trace")
    for key in ("reference", "reference_b"):
        ref = options.get(key)
        if ref is not None and is_multirank(ref):
            raise UserError(f"{ref}: a multi-rank referee; join it first (padiff-trace join {ref} --like ... --out ...) "
                            "and pass the joined trace")
    multi, single, side = (a, b, "A") if ma else (b, a, "B")
    out = Path(report_dir) if report_dir is not None else None
    with tempfile.TemporaryDirectory(prefix="padiff-joined-") as tmp:
        joined = out / JOINED_TRACE if out is not None else Path(tmp) / JOINED_TRACE
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
        join = join_ranks(multi, joined, like=single, overwrite=True, progress=progress)
        ta, tb = (joined, Path(b)) if side == "A" else (Path(a), joined)
        report = analyzer.compare(ta, tb, **options)
        first = _first_record(report, join, side)
        slices = _slices(report, first, ta, tb) if first is not None else ()
        if out is not None:
            report.write(out)
    return JoinedComparison(join, report, side, joined if out is not None else None, out, first, slices)
