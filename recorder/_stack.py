"""Capture the user's stack at a hook, cheaply, with relocatable file names."""

from __future__ import annotations

import functools
import linecache
import os
import sys
import sysconfig
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any, TypeVar

from padiff_trace import Frame

T = TypeVar("T")

__all__ = ["HEADROOM", "StackCapture", "with_headroom"]

# frames a hook may use beyond the model's own recursion limit: a hook runs at the model's
# deepest call and needs room to copy, summarise and queue a tensor there
HEADROOM = 400


def with_headroom(fn: Callable[..., T], after: Callable[[], int] | None = None) -> Callable[..., T]:
    """``fn`` (a hook) run with the recursion limit raised by ``HEADROOM``, so a model recursing
    to within a frame of the limit fails exactly where it would bare. On return the limit is
    ``after()`` (the recorder's limit for the new module depth), else what it was."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> T:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + HEADROOM)
        try:
            return fn(*args, **kwargs)
        finally:
            sys.setrecursionlimit(after() if after is not None else limit)

    return run

_SITE_DIRS = ("site-packages", "dist-packages")


class StackCapture:
    """Walks ``sys._getframe`` and keeps user frames (outermost first).

    Frames of the framework(s), of padiff-trace and of the standard library are
    dropped unless ``full`` is set. Stacks are memoised by (code, line) keys, so a
    module called at the same place every step costs one dictionary lookup.
    """

    def __init__(self, framework_modules: list[ModuleType], full: bool = False, plumbing: tuple[str, ...] = ()) -> None:
        self.full = full
        here = os.path.dirname(os.path.abspath(__file__))
        skip = [here, os.path.dirname(os.path.abspath(sys.modules["padiff_trace"].__file__ or here))]
        # console scripts (padiff-trace, pytest) live next to the interpreter: never user code
        self._own = tuple(p + os.sep for p in [*skip, os.path.dirname(os.path.abspath(sys.executable))])
        self._plumbing = frozenset(os.path.abspath(f) for f in plumbing)
        for mod in framework_modules:
            skip.append(os.path.dirname(os.path.abspath(mod.__file__ or "")))
        self._skip = tuple(p + os.sep for p in skip)
        paths = sysconfig.get_paths()
        self._stdlib = tuple({paths["stdlib"] + os.sep, paths["platstdlib"] + os.sep})
        self._site = tuple({paths["purelib"] + os.sep, paths["platlib"] + os.sep})
        self._cwd = os.getcwd() + os.sep
        self._roots = sorted({os.path.abspath(p) + os.sep for p in sys.path if p}, key=len, reverse=True)
        self._keep: dict[str, bool] = {}
        self._rel: dict[str, str] = {}
        self._stacks: dict[tuple[tuple[object, int], ...], tuple[Frame, ...]] = {}

    def _is_user(self, filename: str) -> bool:
        keep = self._keep.get(filename)
        if keep is None:
            keep = not (
                filename.startswith(self._skip)
                or filename.startswith(self._own)
                or filename.startswith("<frozen")
                or (filename.startswith(self._stdlib) and not filename.startswith(self._site))
            )
            self._keep[filename] = keep
        return keep

    def is_internal(self, filename: str) -> bool:
        """A frame of the framework(s) or of padiff-trace itself."""
        return filename.startswith(self._skip)

    def relpath(self, filename: str) -> str:
        rel = self._rel.get(filename)
        if rel is None:
            path = os.path.abspath(filename) if not filename.startswith("<") else filename
            site = next((r for r in self._roots if path.startswith(r) and r.rstrip(os.sep).endswith(_SITE_DIRS)), None)
            if site is not None:
                rel = path[len(site) :]
            elif path.startswith(self._cwd):
                rel = path[len(self._cwd) :]
            else:
                rel = next((path[len(r) :] for r in self._roots if path.startswith(r)), os.path.basename(path))
            self._rel[filename] = rel
        return rel

    def _is_plumbing(self, filename: str) -> bool:
        return filename.startswith(self._own) or filename in self._plumbing

    def capture(self, skip: int = 1) -> tuple[Frame, ...]:
        """User frames, outermost first; the innermost frame is always the call site
        (the line that called the module or op), even inside framework code."""
        f: FrameType | None = sys._getframe(skip)
        key: list[tuple[object, int]] = []
        frames: list[FrameType] = []
        site_seen = False
        while f is not None:
            code = f.f_code
            keep = self.full or self._is_user(code.co_filename)
            if not site_seen and not self._is_plumbing(code.co_filename):
                site_seen = True
                keep = True
            if keep:
                key.append((code, f.f_lineno))
                frames.append(f)
            f = f.f_back
        k = tuple(key)
        st = self._stacks.get(k)
        if st is None:
            st = tuple(
                Frame(
                    self.relpath(fr.f_code.co_filename),
                    lineno,
                    fr.f_code.co_name,
                    linecache.getline(fr.f_code.co_filename, lineno).strip(),
                )
                for fr, (_, lineno) in zip(reversed(frames), reversed(key))
            )
            self._stacks[k] = st
        return st
