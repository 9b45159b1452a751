"""Autograd nodes that must not be freed as a chain (torch; issue 15).

``Tensor.register_hook`` on a non-leaf tensor reads its ``grad_fn``, which gives that autograd node
a Python object; torch (2.13: ``intrusive_ptr<Node>`` with PyObject preservation) then frees such a
node through its Python object, and the node's destructor releases the next node, whose Python
object is deallocated inside it, and so on: recursion one C++/Python level per node. One hooked
output per module call, ~40,000 chained calls (a fully unrolled recurrent model, a deep stack of
small layers) overflow the 8 MiB C stack when the graph is freed after backward: SIGSEGV in
``~AddmmBackward0`` (30-100k nodes, depending on the node types). Graphs without Python objects
are freed iteratively by torch and are not affected.

``NodeKeeper`` holds a reference to the Python object of every node the recorder hooked. A freed
graph then stops at the first node it holds, and ``sweep()`` releases the held nodes that nothing
else references, newest first (by autograd sequence number): freeing one releases its older
neighbours' C++ references only, and those are still held - never a chain. Sweeps run as hooks are
added (amortised: when the number held has doubled), and when the recording ends; nodes of a
graph still alive then (the last step's ``loss``) are swept by a daemon thread every second until
none is left. At exit that thread is stopped first (``atexit``: a thread freeing torch objects while
the interpreter finalizes aborts the process) and what is still held is kept for good, so the
interpreter's teardown of a global ``loss`` cannot free it as a chain either.

Costs: a few hundred bytes per hooked node until its graph is freed and a sweep ran (after
backward a node holds no activations); a graph run without backward keeps its saved tensors until
the next sweep. The model's numbers and the gradients recorded are unchanged.
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import sys
import threading
from typing import Any

__all__ = ["NodeKeeper"]

logger = logging.getLogger(__name__)

_FIRST_SWEEP = 4096  # nodes held before the first sweep
_REAP_EVERY = 1.0  # seconds between sweeps of the nodes left when a recording ended
_FREE = 2  # sys.getrefcount of a held node that nothing else references: our dict and the call's argument


class NodeKeeper:
    """Holds the autograd node objects of hooked tensors; frees them one at a time."""

    def __init__(self) -> None:
        self._held: dict[int, Any] = {}  # id -> node object (alive while held: ids stay unique)
        self._lock = threading.Lock()
        self._next_sweep = _FIRST_SWEEP
        self._reaper: threading.Thread | None = None
        self._stop = threading.Event()

    def __len__(self) -> int:
        return len(self._held)

    def keep(self, tensor: Any) -> None:
        """Hold the node object of ``tensor``'s ``grad_fn`` (after a hook was registered on it)."""
        fn = tensor.grad_fn
        if fn is None:  # a leaf: its hooks live on the tensor, no node object
            return
        with self._lock:
            self._held[id(fn)] = fn
            due = len(self._held) >= self._next_sweep
        if due:
            self.sweep()

    def sweep(self) -> int:
        """Release the held nodes that nothing else references, newest first; returns how many
        are still held (their graph is alive)."""
        with self._lock:
            held = self._held
            try:  # creation order; a newer node may point to an older one, never the reverse
                order = sorted(held, key=lambda k: held[k]._sequence_nr(), reverse=True)
            except AttributeError:  # a torch without it: the order the hooks were added in
                order = list(reversed(held))
            for k in order:
                if sys.getrefcount(held[k]) <= _FREE:
                    del held[k]  # frees this node; the older ones it pointed to are still held
            left = len(held)
            self._next_sweep = max(_FIRST_SWEEP, 2 * left)
        return left

    def close(self) -> None:
        """The recording ended: sweep; nodes whose graph is still alive go to a daemon thread that
        sweeps them every second until none is left."""
        left = self.sweep()
        with self._lock:
            if not left or self._reaper is not None:
                return
            logger.debug("%d autograd node(s) of live graphs are kept until their graph is freed", left)
            self._stop.clear()
            self._reaper = threading.Thread(target=self._reap, name="padiff-trace-nodes", daemon=True)
            atexit.register(self._at_exit)
            self._reaper.start()

    def _reap(self) -> None:
        while not self._stop.wait(_REAP_EVERY):
            if not self.sweep():
                break
        with self._lock:
            self._reaper = None
            done = not self._stop.is_set()
        if done:  # nothing left: no business at exit (at exit, _at_exit is running: leave it alone)
            atexit.unregister(self._at_exit)

    def _at_exit(self) -> None:
        """Before the interpreter finalizes: stop the sweeping thread (a thread freeing torch objects
        while the interpreter finalizes is killed inside a C++ destructor: std::terminate), sweep
        once more here, and never free what is left: its graph is still alive (a global ``loss``),
        and the interpreter's teardown would free it as a chain."""
        self._stop.set()
        reaper = self._reaper
        if reaper is not None:
            reaper.join(timeout=30)
        if self.sweep():
            with self._lock:
                for fn in self._held.values():
                    ctypes.pythonapi.Py_IncRef(ctypes.py_object(fn))
