"""A multi-rank trace made one: the records of a sharded (tensor-parallel) run joined into the trace
a single process would have written, so that it compares with one (docs/distributed.md).

Ranks run the same program, so a record of rank 0 is the same record on every other rank, and in
the single-process trace it is compared with (``like``), when they share their identity: step,
phase, kind, module path, position and call index (and, for the rare repeat, its order). Each
record is joined by the first rule that fits:

* **split information** the recorder captured (meta ``distributed.splits``: torch DTensor
  placements, paddle's ``is_distributed``/``split_axis``) for a parameter and its gradient:
  ``Shard(axis)`` is concatenated along that axis, ``Partial`` summed, ``Replicate`` replicated;
* **replicated**: the same shape on every rank (and in ``like``) and the same bytes: rank 0's;
* **sum**: the same shapes but other values (partial sums before an all-reduce), and ``like``
  equals their sum within rounding, or is nearer to it than to any one rank's: the sum;
* **differing**: the same shapes, other values, and no sum explains them: rank 0's, listed
  (without ``like``, values that differ are left out: a slice, a partial sum and a replica that
  differs look alike);
* **concat**: ``like``'s shape differs from the ranks' on one axis only, where the ranks' sizes
  add up to it: the ranks' slices concatenated along it, in rank order;
* anything else is **left out** and listed with the reason.

Two passes stream the ranks one record at a time: the first decides each record's rule (it reads
values only where shapes cannot decide), the second reads the slices again and writes the joined
record with ``TraceWriter``. The trace's meta ``joined`` says from which ranks, like what, and how
many records each rule joined; ``join.json`` beside the shards lists every record with its rule.
"""

from __future__ import annotations

import contextlib
import json
import os
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from padiff_trace import Record, RecordHeader, Trace, TraceWriter, UserError, WriterOptions, open_trace

from ._joinrules import Plan, decide, index_records, joined_values
from ._ranks import RankedTrace, is_multirank, open_ranks

__all__ = ["JOIN_FILE", "JOIN_RULES", "JoinResult", "JoinedRecord", "join_ranks"]

JOIN_FILE = "join.json"  # beside the joined trace's shards: every record and its rule
JOIN_RULES = ("replicated", "concat", "sum", "differing", "left out")
_SHOWN_LEFT_OUT = 100  # in the meta; join.json has them all



@dataclass(frozen=True)
class JoinedRecord:
    """How one record was joined: ``rule`` one of ``JOIN_RULES``; ``axis`` for concat; ``source``:
    what decided (``shapes``, ``values``, ``split info: ...``); ``why``: the reason a record was
    left out, or what made it differing or summed; ``seq`` in the joined trace (None: left out)."""

    name: str
    step: int
    kind: str
    rule: str
    axis: int | None = None
    source: str = ""
    why: str = ""
    seq: int | None = None
    shapes: tuple[tuple[int, ...], ...] = ()  # each rank's
    like_shape: tuple[int, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "step": self.step, "kind": self.kind, "rule": self.rule, "axis": self.axis,
                "source": self.source or None, "why": self.why or None, "seq": self.seq,
                "shapes": [list(s) for s in self.shapes], "like_shape": list(self.like_shape) if self.like_shape is not None else None}

    def line(self) -> str:
        """``fc1#0:out  step 0 module_output: concat axis 1 (shapes)``."""
        how = f"{self.rule} axis {self.axis}" if self.axis is not None else self.rule
        src = f" ({self.source})" if self.source else ""
        why = f": {self.why}" if self.why else ""
        return f"{self.name}  step {self.step} {self.kind}: {how}{src}{why}"


@dataclass(frozen=True)
class JoinResult:
    """``join_ranks``'s outcome: the joined trace and how each record was joined."""

    path: Path
    source: Path
    like: Path | None
    world_size: int
    records: tuple[JoinedRecord, ...]
    complete: bool = True  # False: a rank was incomplete, and so is the joined trace
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def left_out(self) -> list[JoinedRecord]:
        return [r for r in self.records if r.rule == "left out"]

    def as_dict(self) -> dict[str, Any]:
        """``join.json``."""
        return {"format": "padiff-trace-join", "version": 1, "from": str(self.source), "like": str(self.like) if self.like else None,
                "world_size": self.world_size, "complete": self.complete, "rules": dict(self.counts),
                "records": [r.as_dict() for r in self.records]}

    def summary_text(self, width: int = 100) -> str:
        """Counts by rule, then each joined module record grouped by how it was joined (a name
        once, with its steps), and every record left out with the reason."""
        c = self.counts
        head = (f"joined {self.world_size} ranks of {self.source}" + (f" like {self.like}" if self.like else "") +
                f" -> {self.path}: {sum(v for k, v in c.items() if k != 'left out')} records ("
                + ", ".join(f"{c.get(k, 0)} {k}" for k in JOIN_RULES[:-1]) + f"), {c.get('left out', 0)} left out")
        lines = [head]
        groups: dict[tuple[str, int | None, str], dict[str, list[int]]] = {}
        for r in self.records:
            if r.rule in ("replicated", "left out"):
                continue
            groups.setdefault((r.rule, r.axis, r.source), {}).setdefault(f"{r.name} {r.kind}", []).append(r.step)
        for (rule, axis, source), names in groups.items():
            how = f"{rule} axis {axis}" if axis is not None else rule
            lines += _items(f"  {how} ({source}): ", [f"{n} (step {_steps(s)})" for n, s in names.items()], width)
        lines += self.left_out_lines(width)
        if not self.complete:
            lines.append("  (a rank is incomplete: so is the joined trace)")
        return "\n".join(lines)

    def left_out_lines(self, width: int = 100, most: int | None = None) -> list[str]:
        """``left out: monitor#0:out step 0 module_output: <why>``, one per record left out (the
        first ``most``, then how many more)."""
        left = self.left_out
        shown = left if most is None else left[:most]
        out = [line for r in shown for line in textwrap.wrap(f"left out: {r.name} step {r.step} {r.kind}: {r.why}", width,
                                                             initial_indent="  ", subsequent_indent="      ")]
        if len(shown) < len(left):
            out.append(f"  ... and {len(left) - len(shown)} more left out ({self.path / JOIN_FILE})")
        return out


def _items(head: str, items: list[str], width: int) -> list[str]:
    """``head`` then ``items`` joined by commas, wrapped between items (never inside one)."""
    lines, line = [], head
    for k, item in enumerate(items):
        text = item + ("," if k < len(items) - 1 else "")
        if len(line) + len(text) > width and line.strip() and line != head:
            lines.append(line.rstrip())
            line = "      "
        line += text + " "
    return [*lines, line.rstrip()]


def _steps(steps: list[int]) -> str:
    s = sorted(set(steps))
    return f"{s[0]}-{s[-1]}" if len(s) > 2 and s == list(range(s[0], s[-1] + 1)) else ", ".join(map(str, s))


def _header(r: Record) -> RecordHeader:
    return RecordHeader(r.step, r.phase, r.kind, r.module, r.module_type, r.call, r.parent, r.call_index, r.position, r.device,
                        r.stack)


def _entry(p: Plan, seq: int | None) -> JoinedRecord:
    r0 = p.recs[0]
    return JoinedRecord(r0.name, r0.step, r0.kind.label, p.rule, p.axis, p.source, p.why, seq, tuple(r.shape for r in p.recs),
                        p.like_shape)


def _lone(r: Record, ranks: Sequence[int], world: int) -> JoinedRecord:
    """A record some ranks do not have."""
    on = "rank " + ", ".join(map(str, ranks)) if len(ranks) < world else ""
    return JoinedRecord(r.name, r.step, r.kind.label, "left out", why=f"recorded on {on} only, not on every rank",
                        shapes=(r.shape,))


def _meta(rank0: dict[str, Any], ranked: RankedTrace, like: Path | None, counts: dict[str, int],
          left: list[JoinedRecord]) -> dict[str, Any]:
    meta = {k: v for k, v in rank0.items() if k not in ("distributed", "created", "command", "host", "producer")}
    d = rank0.get("distributed")
    d = d if isinstance(d, dict) else {}
    meta["joined"] = {
        "from": str(ranked.path), "ranks": [r.path.name for r in ranked.ranks], "world_size": ranked.world_size,
        "launcher": ranked.launcher, "backend": d.get("backend"), "like": str(like) if like else None, "rules": counts,
        "left_out": [{"record": r.name, "step": r.step, "kind": r.kind, "why": r.why} for r in left[:_SHOWN_LEFT_OUT]],
        "left_out_count": len(left), "records": JOIN_FILE,
    }
    return meta


@contextlib.contextmanager
def _opened(paths: Sequence[Path]) -> Iterator[list[Trace]]:
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(open_trace(p)) for p in paths]


def join_ranks(
    multi: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    like: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
    progress: Callable[[str], None] | None = None,
) -> JoinResult:
    """Join the ranks of the multi-rank trace ``multi`` into one trace at ``out``, guided by the
    single-process trace ``like`` (the one it will be compared with; without it only split
    information and replicas join). Every rank must have a trace (an incomplete rank is joined on
    what it holds, and the joined trace is then incomplete too). ``UserError`` for bad inputs."""
    ranked = open_ranks(multi)
    missing = [r.line() for r in ranked.ranks if not r.readable]
    if missing:
        raise UserError(f"{ranked.path}: {'; '.join(missing)}: every rank's slice is needed to join the ranks")
    like_path = Path(like) if like is not None else None
    if like_path is not None and is_multirank(like_path):
        raise UserError(f"{like_path}: a multi-rank trace; join against a single-process trace (--like)")
    out_path = Path(out)
    if out_path.resolve() in {ranked.path.resolve(), *(r.path.resolve() for r in ranked.ranks)} or (
            like_path is not None and out_path.resolve() == like_path.resolve()):
        raise UserError(f"{out_path}: the joined trace must go to a directory of its own")
    world = ranked.world_size
    incomplete = [r.line() for r in ranked.ranks if r.state != "complete"]
    with _opened([r.path for r in ranked.ranks]) as traces, contextlib.ExitStack() as stack:
        ref = stack.enter_context(open_trace(like_path)) if like_path is not None else None
        if progress is not None:
            progress(f"joining {world} ranks of {ranked.path}")
        rank0_meta = dict(traces[0].meta)
        dist = rank0_meta.get("distributed")
        splits = dist.get("splits") if isinstance(dist, dict) else None
        splits = splits if isinstance(splits, dict) else {}
        indexes = [index_records(t) for t in traces]
        ref_index = index_records(ref) if ref is not None else {}
        plans: list[Plan] = []
        lone: list[JoinedRecord] = []
        for key, r0 in indexes[0].items():
            recs = [ix.get(key) for ix in indexes]
            if any(r is None for r in recs):
                lone.append(_lone(r0, [k for k, r in enumerate(recs) if r is not None], world))
                continue
            split = splits.get(f"{r0.module}.{r0.position}" if r0.module else r0.position)
            plans.append(decide(tuple(r for r in recs if r is not None), ref_index.get(key), split))
        for k, ix in enumerate(indexes[1:], 1):
            lone += [_lone(r, [k], world) for key, r in ix.items() if key not in indexes[0]]
        counts = dict.fromkeys(JOIN_RULES, 0)
        for p in plans:
            counts[p.rule] += 1
        counts["left out"] += len(lone)
        left = [_entry(p, None) for p in plans if p.rule == "left out"] + lone
        meta = _meta(rank0_meta, ranked, like_path, counts, left)
        entries: list[JoinedRecord] = []
        writer = TraceWriter(out_path, meta, WriterOptions(queue_bytes=128 << 20), overwrite=overwrite)
        try:
            for p in plans:
                if p.rule == "left out":
                    entries.append(_entry(p, None))
                    continue
                data, shape = joined_values(p)
                r0 = p.recs[0]
                seq = writer.append(_header(r0), data, dtype=r0.dtype, shape=shape)
                entries.append(_entry(p, seq))
        except BaseException as exc:
            writer.abort(f"joining the ranks failed: {type(exc).__name__}")
            raise
        if incomplete:
            writer.abort("joined from incomplete ranks: " + "; ".join(incomplete))
        else:
            writer.close()
    result = JoinResult(out_path, ranked.path, like_path, world, tuple(entries + lone), not incomplete, counts)
    _write_json(out_path / JOIN_FILE, result.as_dict())
    return result


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
