"""The HTML report's plots as inline SVG, drawn from the numbers here: no plotting library,
no script, nothing fetched, a few kilobytes per plot.

``error_plot`` draws one error curve per metric along the execution order on a log scale,
marks failing pairs, the first divergence (at the nearest point drawn when it is of a kind the
plot does not draw: ``FirstMark``) and the top amplifiers, with a legend for the curves and for
each marker it draws, and gives positions a tooltip (an SVG ``<title>``) naming the pair: every position up to ``_TIPS`` pairs, beyond
that the first divergence, the amplifiers and up to ``_TIPS`` failing pairs. Curves of more than ``_POINTS`` pairs keep each bin's largest value
(a plot is ~800 pixels wide). Every trace string is made visible (control and bidi characters as escapes) and HTML-escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from padiff_trace import visible

from ..judging._pairview import PairResult, PairSubset

__all__ = ["SERIES", "FirstMark", "error_plot"]



def escape(text: str) -> str:
    return html.escape(visible(text))


W, H = 900, 300
_L, _R, _T, _B = 64, 12, 44, 40  # margins (the top one holds the title and two legend rows)
SERIES = (("max_abs", "max |a-b|", "#1f77b4"), ("mean_abs", "mean |a-b|", "#2ca02c"), ("rel_l2", "relative L2", "#9467bd"))
_FAIL, _AMP = "l8 8m0 -8l-8 8", "l6 6l-6 6l-6 -6z"  # marker paths after their first point: a cross, a diamond
_TIPS = 1000  # pairs up to which every position has a tooltip (~230 bytes each); beyond, the marked ones
_POINTS = 2000  # points per curve at most
_DOTS = 60  # per-step series up to this many values also draw each one as a dot


class FirstMark(NamedTuple):
    """Where an error plot marks the first divergence: ``pair``, the pair index of the drawn
    point to mark. When that point is not the first divergence itself (a model input, weight,
    op... that the plot does not draw, marked at the nearest point drawn), ``label`` says so on
    the plot and ``tip`` (the point's tooltip) what and where the first divergence is."""

    pair: int
    label: str = "first divergence"
    tip: str = ""


def _positive(v: np.ndarray) -> np.ndarray:
    """The values that can be drawn on a log scale (finite, > 0); NaN elsewhere."""
    v = np.asarray(v, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(v) & (v > 0), v, np.nan)


def _pair_columns(pairs: Sequence[PairResult], amplifiers: set[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(passed, pair index, whether A's call is an amplifier) per position: from the table's
    columns for rows of a ``PairTable``, pair by pair otherwise."""
    if isinstance(pairs, PairSubset):
        t, rows = pairs.table, pairs.rows
        slots = [k for k, cp in enumerate(t.call_pairs) if cp.a.id in amplifiers] if amplifiers else []
        return t.passed[rows], np.asarray(rows), np.isin(t.col("cp")[rows], slots)
    n = len(pairs)
    passed = np.fromiter((bool(p.passed) for p in pairs), bool, n)
    index = np.fromiter((p.index for p in pairs), np.int64, n)
    amp = np.fromiter((p.call_pair is not None and p.call_pair.a.id in amplifiers for p in pairs), bool, n)
    return passed, index, amp


def error_plot(pairs: Sequence[PairResult], title: str, first: int | FirstMark | None, amplifiers: set[int],
               values: Mapping[str, np.ndarray] | None = None) -> str:
    """An SVG plot of ``pairs`` (with metrics) in order; ``first``: the first divergence (a pair
    index: that pair; ``FirstMark``: a point standing for it); ``amplifiers``: ids of A's calls to mark.
    ``values``: each series' metric for the pairs, when the caller has them as columns. Work is
    numpy over the columns; a pair is built only where the plot names it (a tooltip)."""
    n = len(pairs)
    if values is None:
        values = {key: np.array([_value(p, key) for p in pairs], dtype=np.float64) for key, _, _ in SERIES}
    ys = {key: _positive(values[key]) for key, _, _ in SERIES}
    present = [v[~np.isnan(v)] for v in ys.values()]
    present = [v for v in present if len(v)]
    e0 = math.floor(math.log10(min(float(v.min()) for v in present))) if present else -12
    e1 = math.ceil(math.log10(max(float(v.max()) for v in present))) if present else 0
    e1 = max(e1, e0 + 1)
    pw, ph = W - _L - _R, H - _T - _B
    passed, index, amp = _pair_columns(pairs, amplifiers)
    mark_first = first if first is None or isinstance(first, FirstMark) else FirstMark(int(first))
    at_first = index == (mark_first.pair if mark_first is not None else -1)

    def x(i: int) -> float:
        return _L + pw * (i / max(n - 1, 1))

    def y(v: float) -> float:
        return _T + ph * (e1 - math.log10(v)) / (e1 - e0)

    out = [f'<svg class="plot" viewBox="0 0 {W} {H}" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
           f'<text class="title" x="{_L}" y="18">{escape(title)}</text>']
    step = max(1, math.ceil((e1 - e0) / 8))
    for e in range(e0, e1 + 1, step):  # decades
        yy = y(10.0**e)
        out.append(f'<line class="grid" x1="{_L}" x2="{W - _R}" y1="{yy:.1f}" y2="{yy:.1f}"/>'
                   f'<text class="tick" x="{_L - 4}" y="{yy + 4:.1f}" text-anchor="end">1e{e}</text>')
    xstep = max(1, _nice(n / 10))
    for i in range(0, n, xstep):
        out.append(f'<text class="tick" x="{x(i):.1f}" y="{H - _B + 16}" text-anchor="middle">{i}</text>')
    out.append(f'<text class="axis" x="{_L + pw / 2:.0f}" y="{H - 6}" text-anchor="middle">module call (execution order)</text>')
    out.append(f'<line class="frame" x1="{_L}" x2="{_L}" y1="{_T}" y2="{H - _B}"/>'
               f'<line class="frame" x1="{_L}" x2="{W - _R}" y1="{H - _B}" y2="{H - _B}"/>')
    for key, _, colour in SERIES:
        for seg in _segments(_points(ys[key])):
            if len(seg) == 1:  # a lone value: a dot
                out.append(f'<circle cx="{x(seg[0][0]):.1f}" cy="{y(seg[0][1]):.1f}" r="2.5" fill="{colour}"/>')
                continue
            pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in seg)
            out.append(f'<polyline class="series" stroke="{colour}" points="{pts}"/>')
    mark = np.where(np.isnan(ys["mean_abs"]), ys["max_abs"], ys["mean_abs"])
    rel = ys["rel_l2"]
    fails = np.flatnonzero(~passed & ~np.isnan(mark))[:_POINTS].tolist()  # more would overlap on ~800 pixels
    for i in fails:
        out.append(f'<path class="fail" d="M{x(i) - 4:.1f} {y(float(mark[i])) - 4:.1f}{_FAIL}"/>')
    amps = np.flatnonzero(amp & ~np.isnan(rel)).tolist()
    for i in amps:
        out.append(f'<path class="amp" d="M{x(i):.1f} {y(float(rel[i])) - 6:.1f}{_AMP}"/>')
    near = " nearest" if mark_first is not None and mark_first.tip else ""  # a point standing for it: dashed
    firsts = np.flatnonzero(at_first).tolist()
    for i in firsts:
        right = x(i) > W * 0.6  # the label left of a point in the plot's right part
        anchor = ' text-anchor="end"' if right else ""
        out.append(f'<line class="first{near}" x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{_T}" y2="{H - _B}"/>'
                   f'<text class="first{near}" x="{x(i) + (-4 if right else 4):.1f}" y="{_T + 10}"{anchor}>'
                   f'{escape(mark_first.label if mark_first else "")}</text>')
    col = pw / max(n, 1)
    for i in _tipped(passed, amp | at_first).tolist():
        p = pairs[i]
        vals = ", ".join(f"{label} {float(ys[key][i]):.3e}" for key, label, _ in SERIES if not np.isnan(ys[key][i]))
        tip = escape(f"#{p.index} {p.a.name} [{p.a.module_type}] {'ok' if p.passed else 'FAIL'}: {vals or 'no error'}")
        if at_first[i] and mark_first is not None:  # a line of its own (escape() would show a newline as \\n)
            tip = f"{escape(mark_first.tip or 'first divergence')}&#10;{tip}"
        out.append(f'<rect class="hit" x="{x(i) - col / 2:.1f}" y="{_T}" width="{col:.1f}" height="{ph}"><title>{tip}</title></rect>')
    lx = W - _R - 330
    for k, (_, label, colour) in enumerate(SERIES):
        out.append(f'<line x1="{lx + k * 110}" x2="{lx + k * 110 + 18}" y1="14" y2="14" stroke="{colour}" stroke-width="2"/>'
                   f'<text class="tick" x="{lx + k * 110 + 22}" y="18">{label}</text>')
    out += _marker_legend(bool(fails), bool(amps), near if firsts else None)
    out.append("</svg>")
    return "".join(out)


def _marker_legend(fail: bool, amp: bool, first: str | None) -> list[str]:
    """The legend's second row, right-aligned: an entry for each kind of marker the plot draws,
    and only those (an entry for a marker that is not there would send the reader looking for
    it); ``first``: the first divergence's class suffix ("" or " nearest"), None when not marked."""
    entries = []
    if fail:
        entries.append(("fail", f'<path class="key fail" d="M{{x}} 28{_FAIL}"/>', "failing pair"))
    if amp:
        entries.append(("amp", f'<path class="key amp" d="M{{x}} 22{_AMP}"/>', "top amplifier"))
    if first is not None:
        entries.append(("first", f'<line class="key first{first}" x1="{{x}}" x2="{{x}}" y1="24" y2="38"/>',
                        "first divergence" + (" (nearest point)" if first else "")))
    out = []
    gx = W - _R - sum(30 + 6 * len(label) for *_, label in entries)  # ~6 pixels a character
    for kind, glyph, label in entries:
        out.append(f'<g class="legend-mark" data-mark="{kind}">{glyph.format(x=gx + 6)}'
                   f'<text class="tick" x="{gx + 18}" y="36">{label}</text></g>')
        gx += 30 + 6 * len(label)
    return out


def _value(p: PairResult, key: str) -> float:
    v = p.metrics.values.get(key) if p.metrics is not None else None
    return math.nan if v is None else float(v)


def _tipped(passed: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Positions with a tooltip: all up to ``_TIPS`` pairs; beyond, the key pairs (first
    divergence, amplifiers) and failing pairs while fewer than ``_TIPS`` tips are given."""
    if len(passed) <= _TIPS:
        return np.arange(len(passed))
    # only the first _TIPS failing positions can get a tip: each failing one before counts
    cand = np.union1d(np.flatnonzero(key), np.flatnonzero(~passed)[:_TIPS])
    keep, tips = [], 0
    for i in cand.tolist():
        if key[i] or tips < _TIPS:
            keep.append(i)
            tips += 1
    return np.array(keep, dtype=np.intp)


def _points(vals: np.ndarray) -> list[tuple[int, float | None]]:
    """(position, value) of a curve (NaN: none); beyond ``_POINTS`` values, each bin of
    consecutive positions keeps its largest value (at the bin's first position)."""
    k = max(1, -(-len(vals) // _POINTS))
    if k > 1:
        padded = np.full(-(-len(vals) // k) * k, np.nan)
        padded[: len(vals)] = vals
        vals = np.fmax.reduce(padded.reshape(-1, k), axis=1)  # NaN only where a bin has no value
    return [(i * k, None if math.isnan(v) else v) for i, v in enumerate(vals.tolist())]


def _segments(points: list[tuple[int, float | None]]) -> list[list[tuple[int, float]]]:
    """Runs of consecutive points with a value (a gap where the error is 0 or missing)."""
    segs: list[list[tuple[int, float]]] = []
    cur: list[tuple[int, float]] = []
    for i, v in points:
        if v is None:
            if cur:
                segs.append(cur)
            cur = []
        else:
            cur.append((i, v))
    if cur:
        segs.append(cur)
    return segs


def _nice(step: float) -> int:
    """1, 2, 5, 10, 20, 50, ... at least ``step``."""
    if step <= 1:
        return 1
    base = 10 ** math.floor(math.log10(step))
    return int(next(m * base for m in (1, 2, 5, 10) if m * base >= step))


def series_plot(title: str, xs: Sequence[int], series: Sequence[tuple[str, str, Sequence[float | None]]],
                log: bool, mark: int | None = None, xlabel: str = "step") -> str:
    """An SVG line plot of a few series against ``xs`` (steps): ``series`` is (label, colour,
    values; None where unknown); ``log``: a log-scale y axis (only values > 0 drawn);
    ``mark``: an x to mark with a dashed line (the first step off the noise floor)."""
    n = len(xs)
    cols = []
    for _, _, vals in series:
        v = np.array([np.nan if x is None else float(x) for x in vals], dtype=np.float64)
        cols.append(_positive(v) if log else np.where(np.isfinite(v), v, np.nan))
    finite = [c[~np.isnan(c)] for c in cols]
    finite = [c for c in finite if len(c)]
    lo: float
    hi: float
    if log:
        lo = float(math.floor(math.log10(min(float(c.min()) for c in finite)))) if finite else -12.0
        hi = float(math.ceil(math.log10(max(float(c.max()) for c in finite)))) if finite else 0.0
        hi = max(hi, lo + 1)
    else:
        lo = min(float(c.min()) for c in finite) if finite else 0.0
        hi = max(float(c.max()) for c in finite) if finite else 1.0
        if hi <= lo:  # one value (or all equal): centred, a tenth of it either side
            pad = abs(lo) * 0.1 or 1.0
            lo, hi = lo - pad, hi + pad
    pw, ph = W - _L - _R, H - _T - _B
    x0, x1 = (min(xs), max(xs)) if n else (0, 1)

    def x(s: float) -> float:
        return _L + pw * ((s - x0) / max(x1 - x0, 1))

    def y(v: float) -> float:
        t = (hi - math.log10(v)) / (hi - lo) if log else (hi - v) / (hi - lo)
        return _T + ph * t

    out = [f'<svg class="plot steps" viewBox="0 0 {W} {H}" role="img" aria-label="{escape(title)}" '
           'xmlns="http://www.w3.org/2000/svg">', f'<text class="title" x="{_L}" y="18">{escape(title)}</text>',
           f'<rect x="{_L}" y="{_T}" width="{pw}" height="{ph}" fill="none" stroke="#bbb"/>']
    ticks = [(float(10.0 ** e), f"1e{e}") for e in range(int(lo), int(hi) + 1, max(1, math.ceil((hi - lo) / 8)))] if log \
        else [(lo + (hi - lo) * k / 4, f"{lo + (hi - lo) * k / 4:.4g}") for k in range(5)]
    for tv, label in ticks:
        out.append(f'<text class="tick" x="{_L - 4}" y="{y(tv) + 4:.1f}" text-anchor="end">{label}</text>')
    for s in sorted({xs[0], xs[-1], *(xs[i] for i in range(0, n, max(1, n // 8)))} if n else []):
        out.append(f'<text class="tick" x="{x(s):.1f}" y="{H - _B + 16}" text-anchor="middle">{s}</text>')
    out.append(f'<text class="tick" x="{_L + pw / 2:.1f}" y="{H - 6}" text-anchor="middle">{escape(xlabel)}</text>')
    if mark is not None and n:
        out.append(f'<line class="first-off" x1="{x(mark):.1f}" x2="{x(mark):.1f}" y1="{_T}" y2="{_T + ph}" '
                   f'stroke="#d62728" stroke-dasharray="4 3"><title>first step off the noise floor: {mark}</title></line>')
    for k, ((label, colour, _), col) in enumerate(zip(series, cols)):
        pts = [(x(s), y(v)) for s, v in zip(xs, col.tolist()) if not math.isnan(v)]
        if pts:
            d = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts[:_POINTS])
            out.append(f'<polyline class="series" data-series="{escape(label)}" fill="none" stroke="{colour}" '
                       f'stroke-width="1.5" points="{d}"/>')
            if len(pts) <= _DOTS:  # a line needs two points: each value of a short run is a dot too
                out += [f'<circle class="pt" cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{colour}"/>' for px, py in pts]
        out.append(f'<text class="legend" x="{_L + 8 + 170 * k}" y="{_T + 14}" fill="{colour}">{escape(label)}</text>')
    out.append("</svg>")
    return "".join(out)
