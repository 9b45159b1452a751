"""``padiff-trace info`` and ``padiff-trace ls``: look inside a trace."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from padiff_trace import STAT_FIELDS, catalog, is_trace, open_trace, visible
from padiff_trace.recorder import is_multirank

from ._archive import print_catalog, tag_pair
from ._distributed import info_ranks, ls_ranks, missing_ranks, rank_line

__all__ = ["register"]

_MAX_DAMAGE_LINES = 10


def register(sub: Any) -> None:
    p = sub.add_parser(
        "info",
        help="metadata and record counts of a trace",
        description="Show a trace's metadata (framework, device, tags...), record counts by kind "
        "and phase, steps, size on disk, whether the recorder closed it cleanly, and its health: "
        "damage found while opening it (shards, index rows, string tables). "
        "'padiff-trace check' reads and verifies every byte.",
    )
    p.add_argument("trace", help="trace directory written by a recorder (or one shard file)")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(handler=_info)

    p = sub.add_parser(
        "ls",
        help="list the records of a trace, or the traces under a directory",
        description="For a directory of archived traces: one line per trace (model and version tags, "
        "framework, device, date, steps, size, complete or not), filterable by --tag. "
        "For a trace: its records in execution order, one line each, "
        "optionally filtered. Columns: seq, step, phase, kind, module#call:position, type, dtype, shape, "
        "max|x| and whether tensor data is stored.",
    )
    p.add_argument("trace", help="a trace directory, or a directory holding traces (then: a catalog of them)")
    p.add_argument("--tag", type=tag_pair, action="append", default=[], metavar="KEY=VALUE", help="catalog: only traces with this tag")
    p.add_argument("--module", help="glob on the module path, e.g. 'encoder.layers.*.linear1'")
    p.add_argument("--kind", action="append", help="record kind (repeatable): module_output, grad_output, param, ...")
    p.add_argument("--phase", action="append", choices=["forward", "backward", "other"])
    p.add_argument("--step", type=int, action="append", help="only this step (repeatable)")
    p.add_argument("--stats", action="store_true", help="print all statistics")
    p.add_argument("--limit", type=int, default=0, help="print at most N records")
    p.set_defaults(handler=_ls)


def _info(args: argparse.Namespace) -> int:
    if is_multirank(args.trace):  # one trace per rank (docs/distributed.md)
        return info_ranks(args.trace, args.json)
    with open_trace(args.trace) as tr:
        counts = tr.counts()
        info: dict[str, Any] = {
            "path": str(tr.path),
            "complete": tr.complete,
            "records": len(tr),
            "steps": tr.steps(),
            "size_bytes": tr.size_bytes(),
            "shards": len(tr.shard_paths),
            "recording": tr.recording,
            "format_minor": tr.format_minor,
            "writer_pid": tr.writer_pid,
            "meta": tr.meta,
            "counts": {k: dict(v) for k, v in counts.items()},
            "health": str(tr.health),
            "damage": [{"shard": str(d.shard), "what": d.what, "reason": d.reason} for d in tr.damage],
        }
        if tr.missing_shards:
            info["missing_shards"] = tr.missing_shards
        if "aborted" in tr.summary:
            info["aborted"] = tr.summary["aborted"]
    if args.json:
        print(json.dumps(info, indent=2, default=str))
        return 0
    meta = info["meta"]
    state = "complete" if info["complete"] else "INCOMPLETE"
    why = ""
    if not info["complete"]:
        if "aborted" in info:
            why = f" (recorder stopped: {info['aborted']})"
        elif info.get("missing_shards"):
            why = f" (missing shards {info['missing_shards']})"
        elif info["damage"]:
            why = " (shards damaged: see health)"
        elif info["writer_pid"] is not None:
            why = f" (being written by pid {info['writer_pid']})"
        else:
            why = " (the recorder did not close it: killed or still running)"
    out = [
        f"trace      {info['path']}",
        f"state      {state}{why}",
        f"framework  {meta.get('framework')} {meta.get('framework_version', '')}".rstrip(),
        f"device     {meta.get('device')}   default dtype {meta.get('default_dtype') or '-'}",
        f"created    {meta.get('created')} on {meta.get('host')} (python {meta.get('python')})",
        f"command    {meta.get('command')}",
        f"seed       {meta.get('seed')}",
        *([f"process    {rank_line(meta['distributed'])}"] if isinstance(meta.get("distributed"), dict) else []),
        f"tags       {_fmt_tags(meta.get('tags') or {})}",
        f"format     v{meta.get('format_version')}.{info['format_minor']}, {info['shards']} shard(s), "
        f"{_size(info['size_bytes'])}, recording {(info['recording'] or '-')[:12]}",
        f"records    {info['records']} in steps {_fmt_steps(info['steps'])}",
        f"health     {info['health']}",
    ]
    for d in info["damage"][:_MAX_DAMAGE_LINES]:
        out.append(f"  damaged  {Path(d['shard']).name}: {d['what']}: {d['reason']}")
    if len(info["damage"]) > _MAX_DAMAGE_LINES:
        out.append(f"  ... and {len(info['damage']) - _MAX_DAMAGE_LINES} more (padiff-trace check {info['path']})")
    for key in ("phase", "kind"):
        items = ", ".join(f"{k} {v}" for k, v in sorted(info["counts"][key].items()))
        out.append(f"  by {key:<6} {items or '-'}")
    print("\n".join(visible(line) for line in out))  # trace strings never reach the terminal raw
    return 0


def _ls(args: argparse.Namespace) -> int:
    root = Path(args.trace)
    try:
        archive = root.is_dir() and not is_trace(root)
    except PermissionError:  # not listable: open_trace says so, with what to do
        archive = False
    if archive and is_multirank(root):
        return ls_ranks(root, dict(args.tag))
    if archive:
        entries = catalog(root, dict(args.tag))
        print_catalog(entries, root, missing_ranks(entries))
        return 0
    with open_trace(args.trace) as tr:
        recs = tr.select(module=args.module, kind=args.kind, phase=args.phase, step=args.step)
        if args.limit:
            recs = recs[: args.limit]
        w = sys.stdout.write
        for r in recs:
            st = r.stats
            shape = "x".join(map(str, r.shape)) or "scalar"
            base = (
                f"{r.seq:>7} s{r.step:<3} {r.phase.label[:3]} {r.kind.label:<13} {r.name:<50} "
                f"{r.module_type:<18} {r.dtype:<9} {shape:<16}"
            )
            if args.stats:
                base += " " + " ".join(f"{k}={st[k]:.4g}" for k in STAT_FIELDS)
            else:
                amax = max(abs(st["min"]), abs(st["max"])) if r.is_tensor else float("nan")
                base += f" max|x|={amax:<10.4g} {'DAMAGED' if r.damage else 'data' if r.has_data else 'stats'}"
            w(visible(base.rstrip()) + "\n")
    return 0


def _fmt_tags(tags: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(tags.items())) or "-"


def _fmt_steps(steps: list[int]) -> str:
    if not steps:
        return "-"
    if steps[-1] - steps[0] + 1 == len(steps) and steps == sorted(steps):  # contiguous: no range built
        return f"{steps[0]}..{steps[-1]}" if len(steps) > 1 else str(steps[0])
    return ",".join(map(str, steps))


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"
