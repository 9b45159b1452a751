"""``release_freed_memory``: after it, a freed large array no longer makes later arrays of a
few MiB come from the heap (glibc's rising mmap threshold), which is what kept compare's RSS
high at a million records. Run in child processes: the setting is process-wide."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest

_CHILD = """
import ctypes, sys
import numpy as np
from padiff_trace import release_freed_memory
class MI2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MI2
fixed = release_freed_memory() if sys.argv[1] == "fix" else False
big = np.ones(8 << 20, np.uint8)
del big  # glibc's dynamic threshold rises to 8 MiB here
before = libc.mallinfo2().hblkhd
small = np.ones(1 << 20, np.uint8)
print(fixed, libc.mallinfo2().hblkhd - before >= (1 << 20))  # mapped on its own (given back when freed)
"""


def _run(mode: str, **env: str) -> str:
    out = subprocess.run([sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, check=True,
                         env={**os.environ, **env}, timeout=60)
    return out.stdout.strip()


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="needs glibc >= 2.33 (mallinfo2)")
def test_freed_arrays_go_back_to_the_system_after_release() -> None:
    assert _run("plain") == "False False"  # glibc's default: the 1 MiB array comes from the heap
    assert _run("fix") == "True True"
    # the user's own setting stands (and is what glibc applies)
    assert _run("fix", MALLOC_MMAP_THRESHOLD_="131072") == "False True"
