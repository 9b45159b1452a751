"""``padiff-trace check``: read every byte of a trace and list what is damaged."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from padiff_trace import open_trace, visible

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="verify every byte of a trace and list the damage",
        description="Open a trace, read and verify every stored tensor against its checksums "
        "(format 1.1; older traces: what HDF5 checks) and list each damaged shard, index row or "
        "record with the reason. Exit status: 0 clean, 1 damage found (the rest is readable), "
        "2 nothing usable.",
    )
    p.add_argument("trace", help="trace directory (or one shard file)")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    with open_trace(args.trace) as tr:
        total = int(tr.table["nbytes"].sum()) if len(tr) else 0
        bar = tqdm(total=total, unit="B", unit_scale=True, desc="check", leave=False,
                   disable=args.json or not sys.stderr.isatty())
        try:
            damage = tr.check(bar.update)
        finally:
            bar.close()
        health = tr.health
        path = str(tr.path)
    intact = health.records - health.records_damaged
    rc = 0 if health.ok else (2 if intact == 0 else 1)
    if args.json:
        print(json.dumps({
            "path": path, "health": str(health), "ok": health.ok, "records": health.records,
            "records_damaged": health.records_damaged, "records_lost": health.records_lost,
            "damage": [{"shard": str(d.shard), "what": d.what, "reason": d.reason, "seqs": list(d.seqs)} for d in damage],
        }, indent=2))
        return rc
    print(visible(f"trace   {path}"))
    print(f"health  {health}")
    for d in damage:
        print(visible(f"  {Path(d.shard).name}: {d.what}: {d.reason}"))
    return rc
