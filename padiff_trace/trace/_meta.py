"""Root metadata every trace carries (host, python, time, command line)."""

from __future__ import annotations

import os
import platform
import shlex
import socket
import sys
import time
from typing import Any

__all__ = ["base_meta", "command_line"]


def _relocatable(arg: str, cwd: str) -> str:
    """An absolute path becomes relative to the working directory, or its base name."""
    if not os.path.isabs(arg):
        return arg
    if arg.startswith(cwd):
        return os.path.relpath(arg, cwd)
    return os.path.basename(arg.rstrip(os.sep)) or arg


def command_line() -> str:
    """This process's command line, relocatable (paths under the working directory relative,
    others by their last part)."""
    cwd = os.getcwd() + os.sep
    argv = [_relocatable(a, cwd) for a in sys.argv]  # relocatable: no absolute paths
    if argv:
        main = sys.argv[0]  # ``python -m padiff_trace`` is the command line's own program
        ours = os.path.basename(main) == "__main__.py" and os.path.basename(os.path.dirname(main)) == "padiff_trace"
        argv[0] = "padiff-trace" if ours else os.path.basename(main)
    return shlex.join(argv)


def base_meta() -> dict[str, Any]:
    """Metadata known without any framework; recorders add framework, device, seed, tags."""
    return {
        "producer": "padiff-trace",
        "framework": "none",
        "framework_version": "",
        "device": "cpu",
        "default_dtype": "",
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": command_line(),
        "seed": None,
        "tags": {},
    }
