"""The headless browser the HTML tests render reports with: found on PATH, else installed
(``apt-get install chromium``) where this user may, saying so; else the tests skip with what to
do. ``make demo`` needs none of this: only the tests look at a page through a browser.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

__all__ = ["HOW_TO_GET", "chromium"]

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
HOW_TO_GET = "no headless browser: install chromium (apt-get install chromium) or put one named chromium on PATH"


def _find() -> str | None:
    return next((p for p in map(shutil.which, NAMES) if p), None)


@cache
def chromium() -> str | None:
    """The browser's path; installs chromium with apt-get when none is found and this user is
    root (one test process at a time: a lock file). None when there is none and cannot be one."""
    found = _find()
    if found or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return found
    with open(Path(tempfile.gettempdir()) / "padiff-trace-browser.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test process may be installing it right now
        found = _find()
        if found:
            return found
        print("tests/browser.py: no headless browser found; installing chromium with apt-get (once)",
              file=sys.__stderr__, flush=True)
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}}
        if subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=False, **quiet).returncode != 0:
            subprocess.run(["apt-get", "update", "-qq"], check=False, **quiet)
            subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=False, **quiet)
    return _find()
