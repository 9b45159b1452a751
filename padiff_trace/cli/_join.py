"""``padiff-trace join``: the ranks of a sharded run made one trace, like a single-process trace
(``padiff_trace.pipeline.join_ranks``; docs/distributed.md)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from padiff_trace import visible

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "join",
        help="join the ranks of a sharded (tensor-parallel) run into one trace",
        description="Build the trace a single process would have written from a multi-rank trace: each record "
        "is matched across the ranks and with the single-process trace --like by its identity, then taken from "
        "rank 0 (replicated), concatenated along the one axis on which the ranks' slices add up to the single "
        "process's shape (or the axis the recorder's split information names), or summed (partial sums that the "
        "single process equals); anything else is left out and listed. Compare the result with the single-"
        "process trace (compare does this by itself when given one multi-rank and one single-process trace).",
    )
    p.add_argument("trace", help="the multi-rank trace (T/ranks.json, T/rank-NNNNN)")
    p.add_argument("--like", metavar="SINGLE", help="the single-process trace it will be compared with (its shapes "
                   "guide the join; without it only split information and replicas join)")
    p.add_argument("--out", required=True, metavar="DIR", help="where the joined trace goes")
    p.add_argument("--force", action="store_true", help="replace a trace at --out")
    p.add_argument("--json", action="store_true", help="print every record's rule as JSON (also in DIR/join.json)")
    p.set_defaults(handler=_join)


def _join(args: argparse.Namespace) -> int:
    from padiff_trace import pipeline

    result = pipeline.join_ranks(args.trace, args.out, like=args.like, overwrite=args.force)
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
    else:
        print("\n".join(visible(line) for line in result.summary_text().splitlines()))
        print(visible(f"(every record's rule: {result.path}/{pipeline.JOIN_FILE})"))
    return 0 if result.complete else 3
