"""Other pairings ``run`` tries when a run diverged where the weights' pairing may be what
differs: the order the models call their modules (``_try_call_order``), and pairings only the
values can choose (``_try_pairings``: two same-shape siblings swapped, rotary pairs, patches
flattened channels last). Each records B again with a mapping file and keeps that run only on
the evidence its docstring gives."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from padiff_trace import MappingError, RecordingFailedError, analyzer
from padiff_trace.analyzer import CompareOptions, Report
from padiff_trace.matching import module_pattern
from padiff_trace.recorder import RecordJob

from ._children import Children
from ._runsteps import Progress, RunTraces, record_child, variant, writing

__all__ = ["settle_by_call_order", "try_call_order", "try_pairings"]

logger = logging.getLogger(__name__)


def settle_by_call_order(kids: Children, say: Progress, traces: RunTraces, job_b: Callable[..., RecordJob],
                         refused: RecordingFailedError) -> str:
    """B's recording refused A's weights (same-shape tensors the order each author registers
    modules in cannot tell apart: a norm one model keeps before its first block, the other
    inside it): record B once with its own weights to see the order it calls its modules in,
    pair the weights in the order both models compute (``weight_map(call_order=True)``), and
    record B again with that pairing. Returns the mapping file B was recorded with; raises
    ``refused`` when that pairing leaves tensors unmatched too."""
    own = variant(traces.b, "own-weights")
    logger.info("%s", refused)
    say(f"registration order left same-shape weights unpaired; recording {Path(traces.b).stem} with its own weights to "
        f"pair them in the order the models call their modules -> {own}")
    try:
        record_child(kids, f"recording {own.stem}", job_b(own, None, weights_from=None))
        ordered = analyzer.weight_map(traces.a, own, call_order=True)
    except (RecordingFailedError, MappingError) as exc:
        logger.warning("the pairing in call order was not tried: %s", exc)
        raise refused from exc
    if ordered is None or not ordered.ok:
        raise refused
    path = traces.a.parent / "call-order.json"
    with writing(path, "write the pairing in call order"):
        path.write_text(json.dumps(ordered.to_json(), indent=1))
    say(f"recording {Path(traces.b).stem} again with the weights paired in call order ({path.name}) -> {traces.b}")
    record_child(kids, f"recording {Path(traces.b).stem}", job_b(traces.b, str(path)))
    return str(path)


def try_call_order(kids: Children, say: Progress, report: Report, traces: RunTraces, opts: CompareOptions,
                   job_b: Callable[..., RecordJob]) -> tuple[Report, RunTraces, str | None]:
    """A run that diverged where the order the models call their modules pairs same-shape weights
    otherwise than registration order did (``weight_map(call_order=True)``: norms each author
    registered in another order): record B again with that pairing, and keep that run unless it
    diverges earlier (a bug at one of those weights diverges at the same place both ways),
    saying so. Returns the report, the traces and the mapping file B was recorded with (None:
    the first run stands)."""
    ordered = analyzer.weight_map(traces.a, traces.b, call_order=True)
    current = report.weight_map
    if ordered is None or current is None or ordered.ambiguous:
        return report, traces, None
    moved = sorted(_whole_pairs(ordered) - _whole_pairs(current), key=lambda p: (p[0], p[1], p[2] or (-1, -1), p[3] or (-1, -1)))
    if not moved:
        return report, traces, None
    path = traces.a.parent / "call-order.json"
    with writing(path, "write the pairing to try"):
        path.write_text(json.dumps(ordered.to_json(), indent=1))
    alt_b = variant(traces.b, "call-order")
    say(f"recording {Path(traces.b).stem} again pairing {len(moved)} weight(s) in the order the models call their modules "
        f"-> {alt_b}")
    other, alt_ref = _record_alternative(kids, traces, opts, job_b, alt_b, path)
    if other is None:
        return report, traces, None
    # the order both compute in: kept unless A's first differing record comes earlier (the same A
    # record paired with an earlier call of B is no worse: that call is the one B computes first),
    # or comes no later but before any moved weight acts: then the values said nothing about them
    before, after = analyzer.divergence_key(report)[:2], analyzer.divergence_key(other)[:2]
    moved_modules = {a.rpartition(".")[0] for a, _, _, _ in moved}
    logger.info("call order: first run diverges at %s, the call order's at %s; moved weights act first at %s",
                before, after, analyzer.first_use(report, moved_modules))
    if after < before or (after == before and before[1] < analyzer.first_use(report, moved_modules)):
        logger.info("the pairing in %s goes no further than the first run: the first run stands", path)
        other.close()
        return report, traces, None
    shown = ", ".join(f"{a} ~ {b}" + _part(pa, pb) for a, b, pa, pb in moved[:3]) + (f" and {len(moved) - 3} more" if len(moved) > 3 else "")
    other.add_convention(
        f"weights paired in the order the models call their modules, not the order they register them: {shown} "
        f"({path.name}: the mapping used; B's first recording kept beside)")
    report.close()
    return other, dataclasses.replace(traces, b=alt_b, reference_b=alt_ref or traces.reference_b), str(path)


def _named_call(report: Report) -> str | None:
    """A's module of the innermost paired call around the first divergence's named error whose
    call received agreeing inputs and returned a differing output (None: none)."""
    d = report.first_divergence
    if d is None or d.located is None:
        return None
    module = d.located.a.call.module
    while True:
        good, bad = analyzer.confirmed(report, module)
        if bad and not good:
            return module
        if not module:
            return None
        module = module.rpartition(".")[0]


def _as_matched(pairs: list[Any], doc: dict[str, Any], keys: tuple[str, str]) -> list[Any]:
    """``pairs`` (pinned by a mapping file the run wrote: each ``how`` is "mapping") with the
    ``how`` the matcher gave each in that file (a packed part filled in registration order, two
    siblings paired by their names), so that the alternatives to that pairing are tried as they
    are for the names' own."""
    ka, kb = keys
    hows: dict[tuple[Any, ...], str] = {}
    for e in doc.get("weights", []):
        if isinstance(e, dict) and isinstance(e.get("how"), str) and e["how"] != "mapping":
            key = (e.get(ka), e.get(kb), tuple(e.get(f"{ka}_part") or ()), tuple(e.get(f"{kb}_part") or ()))
            hows[key] = e["how"]
    return [dataclasses.replace(p, how=hows.get((p.a, p.b, tuple(p.a_part or ()), tuple(p.b_part or ())), p.how))
            if p.how == "mapping" else p for p in pairs]


def _part(pa: tuple[int, int] | None, pb: tuple[int, int] | None) -> str:
    part = pa or pb
    return f" [{part[0]}:{part[1]}]" if part is not None else ""


def _merged(base: dict[str, Any], alt: dict[str, Any]) -> dict[str, Any]:
    """Mapping document ``base`` (a pairing already kept) with ``alt`` on top: base's weights
    entries naming a tensor ``alt`` pairs, or one of a module ``alt`` pairs, give way."""
    named = {v for e in alt.get("weights", []) for k, v in e.items() if k in ("paddle", "torch", "source", "target")}
    patterns = [module_pattern(v) for e in alt.get("modules", []) for k, v in e.items() if k in ("paddle", "torch")]

    def kept(e: dict[str, Any]) -> bool:
        names = [v for k, v in e.items() if k in ("paddle", "torch", "source", "target")]
        return not any(n in named or any(rx.match(n.rpartition(".")[0]) for rx in patterns) for n in names)

    return {**base, "weights": [e for e in base.get("weights", []) if kept(e)] + alt.get("weights", []),
            "modules": base.get("modules", []) + alt.get("modules", [])}


def _same_pairing(x: dict[str, Any], y: dict[str, Any]) -> bool:
    """Whether two mapping documents pin the same weights and modules (in any order)."""
    def entries(doc: dict[str, Any]) -> list[list[str]]:
        return [sorted(json.dumps(e, sort_keys=True) for e in doc.get(k) or []) for k in ("weights", "modules")]
    return entries(x) == entries(y)


def _whole_pairs(wm: Any) -> set[tuple[Any, ...]]:
    """The transferred pairs, with the part of a packed tensor each one takes (two heads that
    take a packed projection's halves the other way round are another pairing)."""
    return {(p.a, p.b, p.a_part, p.b_part) for p in wm.pairs if p.transfer}


def _record_alternative(kids: Children, traces: RunTraces, opts: CompareOptions, job_b: Callable[..., RecordJob],
                        alt_b: Path, path: Path) -> tuple[Report | None, Path | None]:
    """B recorded again with the mapping file ``path`` (and its float64 referee when the run has
    one), compared with A: the report and the referee's trace. A pairing that cannot be recorded
    (the model refuses the weights) or compared is no better one: None, logged, the run stands."""
    try:
        record_child(kids, f"recording {alt_b.stem}", job_b(alt_b, str(path)))
        alt_opts, alt_ref = dataclasses.replace(opts, mapping=str(path)), None
        if opts.reference_b is not None:
            alt_ref = variant(alt_b, "float64")
            exact = dataclasses.replace(job_b(alt_ref, str(path)).options, autocast=None)
            record_child(kids, f"float64 recording of {alt_b.stem}", job_b(alt_ref, str(path), dtype="float64", options=exact))
            alt_opts = dataclasses.replace(alt_opts, reference_b=str(alt_ref))
        return analyzer.compare(traces.a, alt_b, alt_opts), alt_ref
    except (RecordingFailedError, MappingError) as exc:  # the child refused it, or the comparison
        logger.warning("the pairing in %s was not tried: %s", path.name, exc)
        return None, None


def try_pairings(kids: Children, say: Progress, report: Report, traces: RunTraces, opts: CompareOptions,
                 job_b: Callable[..., RecordJob], base: str | None = None) -> tuple[Report, RunTraces, str | None]:
    """A divergence inside a module whose weights the names may have paired wrongly, a call of
    which received agreeing inputs and returned a differing output while none agreed: record B
    again with another pairing (two same-shape siblings swapped in every block,
    ``analyzer.pairing_alternatives``; two equal parts of a packed tensor swapped,
    ``part_alternatives``; q and k rows in the other rotary layout,
    ``rotary_alternatives``; a packed q|k|v taken head by head, ``grouped_alternatives``; a patch
    convolution flattened channels last, ``patch_alternatives``;
    features concatenated in another order, ``concat_alternatives``; feature columns in another
    order, ``column_alternatives``, confirmed by a call of a matrix reading them; a depth-to-space
    in another known channel order, ``subpixel_alternatives``; a square matrix of a class
    of the port's own transposed, ``square_alternatives``; a cell's gates stacked in another
    order, ``gate_alternatives``; the fused and the separate q|k|v of a block's two attentions
    crossed, ``fused_alternatives``; a weight paired by a reshape read in another axis order that
    fits, ``reshape_alternatives``; two same-shape tensors only an order paired, the other way
    round, ``order_alternatives``; a layer's child whose output rows are a grid laid out the
    other way round, ``row_alternatives``; a position table whose extra tokens one port puts
    first and the other last, rotated, ``rolled_alternatives``)
    on top of ``base`` (a mapping file already kept), and keep that run when it goes further
    before its first divergence and a call of the module agrees there, or, for parts no name
    paired, the divergence is still inside it (a value in it that differed agrees now), saying
    so in the report.
    Returns the report, the traces and the mapping file B was recorded with (None: the first
    run stands)."""
    # pairings are read off module calls and judged by them: where the first divergence is an op
    # record (``--ops``), the first module call pair that differs stands for it while they are tried
    with _modules_first(report):
        return _try_pairings(kids, say, report, traces, opts, job_b, base)


@contextlib.contextmanager
def _modules_first(report: Report) -> Iterator[None]:
    """``report`` with its first module-level divergence as its first divergence, for the
    duration (an op record's, ``--ops``, put back after)."""
    seen = report.first_divergence
    report.first_divergence = report.module_divergence()
    try:
        yield
    finally:
        report.first_divergence = seen


def _try_pairings(kids: Children, say: Progress, report: Report, traces: RunTraces, opts: CompareOptions,
                  job_b: Callable[..., RecordJob], base: str | None) -> tuple[Report, RunTraces, str | None]:
    base_doc = json.loads(Path(base).read_text()) if base is not None else None
    pinned = report.weight_map
    if base_doc is not None and pinned is not None:  # the run's own pairing: what the matcher made of each pair
        report.weight_map = dataclasses.replace(pinned, pairs=_as_matched(pinned.pairs, base_doc, pinned.side_keys()))
    try:
        alternatives = [*analyzer.pairing_alternatives(report), *analyzer.part_alternatives(report),
                        *analyzer.rotary_alternatives(report), *analyzer.grouped_alternatives(report),
                        *analyzer.patch_alternatives(report), *analyzer.concat_alternatives(report),
                        *analyzer.column_alternatives(report), *analyzer.subpixel_alternatives(report),
                        *analyzer.square_alternatives(report), *analyzer.gate_alternatives(report),
                        *analyzer.fused_alternatives(report), *analyzer.reshape_alternatives(report),
                        *analyzer.order_alternatives(report), *analyzer.row_alternatives(report),
                        *analyzer.rolled_alternatives(report), *analyzer.channel_alternatives(report)]
    finally:
        report.weight_map = pinned
    named = _named_call(report) if any(alt.unnamed for alt in alternatives) else None
    first = 1 + len(list(traces.a.parent.glob("pairing-*.json")))  # after those of an earlier round
    # a pairing kept whose run still diverges, while rivals of it (``Alternative.rivals``) are left to try
    best: tuple[Report, Any, Path, Path | None, Path] | None = None
    for i, alt in enumerate(alternatives, start=first):
        if best is not None and alt.rivals != best[1].rivals:
            continue
        good, bad = analyzer.confirmed(report, alt.holder)
        # the divergence named at a module no call of B pairs with: only getting past it can confirm
        alone = not (good or bad) and analyzer.named_alone(report, alt.holder)
        # a call of it agrees, or none received agreeing inputs and differed; the call of a part
        # whose name says no order agrees under either order (its share of the packed output)
        if not alt.readers and not alt.orderless and not alt.whole_only and not alone and (good or not bad):
            logger.info("%s: %d call(s) agree and %d differ as the names paired its weights; not swapped",
                        alt.holder, good, bad)
            continue
        doc = _merged(base_doc, alt.mapping) if base_doc else alt.mapping
        if base_doc is not None and _same_pairing(doc, base_doc):
            continue  # the pairing kept already holds it: recording it again would say the same
        path = traces.a.parent / f"pairing-{i}.json"
        with writing(path, "write the pairing to try"):
            path.write_text(json.dumps(doc, indent=1))
        alt_b = variant(traces.b, f"pairing-{i}")
        say(f"recording {Path(traces.b).stem} again pairing {alt.swapped} in every block, to let the values say -> {alt_b}")
        other, alt_ref = _record_alternative(kids, traces, opts, job_b, alt_b, path)
        if other is None:
            continue
        with _modules_first(other):  # read as the first run is (``try_pairings``)
            further = analyzer.divergence_key(other) > analyzer.divergence_key(report)
            # confirmed: a call of the module agrees now, or, for parts no name paired, a value inside it
            # that differed agrees (a bug further on in the module keeps each of its calls differing)
            inside = alt.unnamed and analyzer.diverges_inside(other, alt.holder)
            # or, for parts no name paired, the call the first run named (whose code uses the parts) agrees now
            mended = alt.unnamed and named is not None and analyzer.confirmed(other, named)[0] > 0
            # a matrix that received the value in another column order agrees once it reads it in that
            # order: the run is confirmed wherever the first divergence of either run was named
            read = any(g and not (alt.all_readers and b) for g, b in (analyzer.confirmed(other, m) for m in alt.readers))
            # or everything agrees under it (outputs, loss, gradients): no other pairing computes that
            whole = other.first_divergence is None and other.verdict == "ALIGNED"
            # or, where no call could confirm it, the divergence is no longer named there and comes later
            past = alone and further and not analyzer.named_alone(other, alt.holder)
            # or a weight the root holds (a position table added inline): no call of the root agrees
            # while a bug sits anywhere; the divergence comes later and is named inside a module now
            rooted = alt.holder == "" and further and _named_inside(other)
            # or the module's calls settle it: none agreed under the names, all agree under this one
            # (the divergence may then come earlier: a difference its calls hid is shown where made)
            now_good, now_bad = analyzer.confirmed(other, alt.holder)
            settled = bool(alt.holder) and not good and bad > 0 and now_good > 0 and not now_bad
        if not (read or whole or past or rooted or settled) and (alt.whole_only or not further
                                    or not (now_good or inside or mended)):
            logger.info("the pairing in %s is confirmed by no call or diverges no later: the first run stands", path)
            other.close()
            continue
        if alt.rivals and not whole and any(r.rivals == alt.rivals for r in alternatives[i - first + 1:]):
            # rivals read the same weights alike where this run first diverged: the one going furthest is kept
            if best is not None and analyzer.divergence_key(best[0]) >= analyzer.divergence_key(other):
                other.close()
                continue
            if best is not None:
                best[0].close()
            best = (other, alt, path, alt_ref, alt_b)
            continue
        if best is not None and analyzer.divergence_key(best[0]) >= analyzer.divergence_key(other):
            other.close()
            break
        if best is not None:
            best[0].close()
        return _kept(report, traces, other, alt, path, alt_ref, alt_b)
    if best is not None:
        return _kept(report, traces, *best)
    return report, traces, None


def _named_inside(report: Report) -> bool:
    """Whether ``report``'s first divergence is located at a module of A, not the root's own code."""
    d = report.first_divergence
    return d is not None and d.located is not None and bool(d.located.a.call.module)


def _kept(report: Report, traces: RunTraces, other: Report, alt: Any, path: Path, alt_ref: Path | None,
          alt_b: Path) -> tuple[Report, RunTraces, str]:
    """The run recorded with the pairing ``path`` kept in place of ``report``, saying so."""
    d = report.first_divergence
    where = (f" (at {d.located.a.call.module or '<root>'} / {d.located.b.call.module or '<root>'})"
             if d is not None and d.located else "")
    for c in report.conventions:  # what the run being replaced already said (a pairing by call order)
        if c.get("kind") == "convention" and c["text"].startswith("weights paired"):
            other.add_convention(c["text"])
    with _modules_first(other), _modules_first(report):
        gain = ("this one goes further" if analyzer.divergence_key(other) > analyzer.divergence_key(report)
                else "under this one its calls agree")
    every = " in every block" if alt.holder else ""
    other.add_convention(
        f"weights paired by the recorded values, not by their names: {alt.swapped}{every}; the pairing the names "
        f"gave diverged{where}, {gain} ({path.name}: the mapping used; B's first recording kept beside)")
    report.close()
    return other, dataclasses.replace(traces, b=alt_b, reference_b=alt_ref or traces.reference_b), str(path)


