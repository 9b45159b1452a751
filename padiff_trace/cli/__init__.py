"""The ``padiff-trace`` command line.

Each subcommand lives in its own module exposing ``register(subparsers)``; the
modules import frameworks or the analyzer only inside their handlers, so
``padiff-trace --help`` is fast and works without paddle or torch.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from .._errors import UserError

__all__ = ["main", "build_parser"]

_COMMAND_MODULES = ("_info", "_record", "_compare", "_archive")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="padiff-trace",
        description=(
            "Record a Paddle or a PyTorch model into an HDF5 trace (one process per model), "
            "then compare two traces offline and find where their numbers diverge."
        ),
        epilog="Typical use: padiff-trace run paddle_spec.py torch_spec.py --out runs/v1",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:
        print(f"padiff-trace: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("padiff-trace: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
