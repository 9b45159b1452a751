"""The ``padiff-trace`` command line: a thin layer over the library.

Each subcommand lives in its own module exposing ``register(subparsers)``; ``run`` is
``padiff_trace.pipeline.run``, ``record`` a ``recorder.RecordJob``. The modules import
frameworks and the pipeline only inside their handlers, so ``padiff-trace --help`` is fast
and works without paddle or torch; the flags are made from the option declarations
(``RecordOptions``, ``RecordJob``, ``analyzer.CompareOptions``) when the parser is built.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from padiff_trace import RecordingFailedError, UserError, __version__, interrupted

if TYPE_CHECKING:  # the rest is imported where it is used: Ctrl-C during start-up is one line (``console``)
    import argparse
    from collections.abc import Sequence

    from padiff_trace.recorder import RecordOptions

__all__ = ["main", "console", "build_parser", "colour_wanted"]

_COMMAND_MODULES = ("_info", "_record", "_compare", "_archive", "_check", "_join")


def build_parser(*, record_options: type[RecordOptions] | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``record_options``: the dataclass whose option fields become the
    recording flags of ``record`` and ``run`` (``RecordOptions`` when None; a subclass adds options)."""
    import argparse
    import importlib

    if record_options is None:
        from padiff_trace.recorder import RecordOptions

        record_options = RecordOptions
    parser = argparse.ArgumentParser(
        prog="padiff-trace",
        description=(
            "Record a Paddle or a PyTorch model into an HDF5 trace (one process per model), "
            "then compare two traces offline and find where their numbers diverge."
        ),
        epilog="Typical use: padiff-trace run paddle_spec.py torch_spec.py --out runs/v1",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _COMMAND_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        if name == "_record":
            module.register(sub, options=record_options)
        else:
            module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok/aligned, 1 diverged, 2 bad input or a
    failed recording, 3 incomplete, 130 interrupted). Everything past the standard library is
    imported in here, so Ctrl-C at any moment, start-up included, is one line."""
    try:
        return _run(argv)
    except KeyboardInterrupt:
        _say_interrupted()
        return 130


def console() -> NoReturn:
    """The ``padiff-trace`` executable: ``main`` on ``sys.argv``, then exit. An interrupt ends the
    process at once after its line: modules it stopped half-way through their import (numpy,
    h5py, a framework) can crash the interpreter's own clean-up, and every file the command wrote
    was closed while the interrupt unwound. An interrupt that lands in a finalizer or weakref
    callback, where Python would print it and carry on, is raised again in the main flow."""
    try:
        # inside the try: an interrupt that lands while the hook's modules import is one line too
        sys.unraisablehook = _interrupts_not_ignored(sys.unraisablehook)
        code = _run(None)
    except BaseException as exc:
        if not interrupted(exc):
            raise
        _say_interrupted()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    raise SystemExit(code)


def colour_wanted(stream: TextIO) -> bool:
    """ANSI colour on ``stream``: only a terminal, and never when the user set NO_COLOR to a
    non-empty value (https://no-color.org: an empty NO_COLOR means it is not set)."""
    return stream.isatty() and not os.environ.get("NO_COLOR")


def _say_interrupted() -> None:
    # a progress bar may hold the terminal line: start the message on its own line
    print(("\n" if sys.stderr.isatty() else "") + "padiff-trace: interrupted", file=sys.stderr)


def _interrupts_not_ignored(hook: Any) -> Any:
    """``sys.unraisablehook`` that sends an interrupt swallowed by a finalizer back to the main
    thread a few milliseconds later (from another thread, so it lands outside the finalizer)."""
    import _thread
    import threading
    import time

    def later() -> None:
        time.sleep(0.005)
        _thread.interrupt_main()

    def unraisable(info: Any) -> None:
        if isinstance(info.exc_value, KeyboardInterrupt):
            threading.Thread(target=later, daemon=True).start()
        else:
            hook(info)

    return unraisable


def _run(argv: Sequence[str] | None) -> int:
    import logging

    from padiff_trace import visible

    from ._failures import os_error_line

    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:  # paths and names in it may hold control characters: shown as escapes
        print(f"padiff-trace: error: {visible(exc.cli_text())}", file=sys.stderr)
        return 2
    except RecordingFailedError as exc:  # carries the child's one-line error
        print(f"padiff-trace: error: {visible(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the environment (permissions, a full disk) where no handler said more
        print(f"padiff-trace: error: {visible(os_error_line(exc))}", file=sys.stderr)
        return 2
