"""``padiff-trace compare`` and ``padiff-trace align``: two traces, offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from padiff_trace import visible

from . import colour_wanted
from ._failures import writing
from ._record import add_option_flags, option_values

__all__ = ["register"]


def register(sub: Any) -> None:
    from padiff_trace.analyzer import CompareOptions  # its fields are the flags (the analyzer's import: ~30 ms)
    from padiff_trace.options import option_fields

    p = sub.add_parser(
        "compare",
        help="compare two traces and find the first divergence",
        description="Align the module calls of trace A and trace B (the reference), compare every paired "
        "input, output, gradient and weight, and report the verdict, the first divergence with both "
        "call stacks, and the modules that amplify the error most. Exit 0 aligned, 1 diverged, 2 bad input.",
    )
    p.add_argument("a", help="trace A (e.g. the paddle run)")
    p.add_argument("b", help="trace B, the reference (e.g. the torch run)")
    add_option_flags(p, CompareOptions)  # --mapping, --mode, --atol, --rtol, --quiet, ...: one per field
    p.add_argument("--report", metavar="DIR", help="write report.txt, report.json, pairs.csv and report.html into DIR")
    p.add_argument("--html", metavar="FILE", help="also write the self-contained HTML report to FILE")
    p.set_defaults(handler=_compare)

    p = sub.add_parser(
        "align",
        help="show how the module calls and the weights of two traces pair up",
        description="Print the pairing of trace A's and trace B's module calls (first step), the calls "
        "that stayed unpaired, and the weight map (which tensor is which, found how, converted how), "
        "without comparing any numbers.",
    )
    p.add_argument("a", help="trace A")
    p.add_argument("b", help="trace B")
    mapping = next(o for o in option_fields(CompareOptions) if o.name == "mapping")
    p.add_argument(mapping.flag, metavar=mapping.metavar, help=mapping.help)
    p.add_argument("--weight-map-json", metavar="FILE", help="also write the weight map as a mapping file (editable, "
                   "usable as --mapping)")
    p.set_defaults(handler=_align)


def _compare(args: argparse.Namespace) -> int:
    from padiff_trace import analyzer, pipeline, release_freed_memory

    options = analyzer.CompareOptions(**option_values(analyzer.CompareOptions, args))  # checked before any trace is read

    if pipeline.check_rank_sides(args.a, args.b):  # two multi-rank traces: rank k with rank k
        from ._distributed import compare_ranks_command

        release_freed_memory()
        return compare_ranks_command(args, options)

    release_freed_memory()  # a long analysis: large temporary arrays go back to the system when freed

    with analyzer.compare(args.a, args.b, options) as report:
        if args.report:
            with writing(args.report, "the report", "--report"):
                report.write(args.report)
        if args.html:
            with writing(args.html, "the HTML report", "--html"):
                analyzer.write_html(report, args.html)
        text = report.summary_text()
    text = text.splitlines()[0] if args.quiet else text
    print(_colour(text) if colour_wanted(sys.stdout) else text)
    if args.report and not args.quiet:
        print(visible(f"report written to {args.report}"))
    return report.exit_code


_COLOURS = {"DIVERGED": "\033[1;31m", "INCOMPLETE": "\033[1;33m", "ALIGNED": "\033[1;32m", "FAIL": "\033[31m", "First divergence": "\033[1m"}


def _colour(text: str) -> str:
    """ANSI colour for a terminal (never when stdout is a file or a pipe)."""
    for word, code in _COLOURS.items():
        text = text.replace(word, f"{code}{word}\033[0m")
    return text


def _align(args: argparse.Namespace) -> int:
    from padiff_trace import analyzer, visible

    al = analyzer.align(args.a, args.b, mapping=args.mapping)
    print(analyzer.alignment_text(al))
    wm = analyzer.weight_map(args.a, args.b, mapping=args.mapping)
    if wm is not None:
        print()
        print("\n".join(visible(line) for line in wm.text("A", "B").split("\n")))  # control characters shown
        print("(to pin pairs: write this map with --weight-map-json FILE, edit it, pass it back as --mapping FILE)")
    if wm is not None and args.weight_map_json:
        with writing(args.weight_map_json, "the weight map", "--weight-map-json"):
            Path(args.weight_map_json).write_text(wm.dumps(generated_by="padiff-trace align") + "\n")
    return 0
