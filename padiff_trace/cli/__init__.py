"""The ``padiff-trace`` command line: a thin layer over the library.

Each subcommand lives in its own module exposing ``register(subparsers)``; ``run`` is
``padiff_trace.pipeline.run``, ``record`` a ``recorder.RecordJob``. The modules import
frameworks, the analyzer or the pipeline only inside their handlers, so
``padiff-trace --help`` is fast and works without paddle or torch.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from padiff_trace import RecordingFailedError, UserError
from padiff_trace.recorder import RecordOptions

from ._failures import os_error_line

__all__ = ["main", "build_parser"]

_COMMAND_MODULES = ("_info", "_record", "_compare", "_archive", "_check")


def build_parser(*, record_options: type[RecordOptions] = RecordOptions) -> argparse.ArgumentParser:
    """The whole command line; ``record_options``: the dataclass whose option fields become the
    recording flags of ``record`` and ``run`` (``RecordOptions``; a subclass adds options)."""
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
        module = importlib.import_module(f"{__name__}.{name}")
        if name == "_record":
            module.register(sub, options=record_options)
        else:
            module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok/aligned, 1 diverged, 2 bad input or a failed recording, 3 incomplete)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:
        print(f"padiff-trace: error: {exc}", file=sys.stderr)
        return 2
    except RecordingFailedError as exc:  # carries the child's one-line error
        print(f"padiff-trace: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        # a progress bar may hold the terminal line: start the message on its own line
        print(("\n" if sys.stderr.isatty() else "") + "padiff-trace: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the environment (permissions, a full disk) where no handler said more
        print(f"padiff-trace: error: {os_error_line(exc)}", file=sys.stderr)
        return 2
