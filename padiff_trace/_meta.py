"""Root metadata every trace carries (host, python, time, command line)."""

from __future__ import annotations

import os
import platform
import shlex
import socket
import sys
import time
from typing import Any

__all__ = ["base_meta"]


def _command_line() -> str:
    argv = list(sys.argv)
    if argv and os.path.isabs(argv[0]):
        argv[0] = os.path.basename(argv[0])  # relocatable: no absolute paths
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
        "command": _command_line(),
        "seed": None,
        "tags": {},
    }
