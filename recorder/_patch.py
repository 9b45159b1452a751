"""Replace functions on modules and classes for a while, and restore the exact originals.

Used by op-level recording (paddle), randomness replay and the optimizer's clipping calls:
``patched(owner, [(name, make_wrapper)])`` installs ``make_wrapper(original)`` for every name
the owner has; on exit an attribute the owner held itself is set back, one it inherited is
deleted again (also when the model raised).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["patched"]

Wrap = Callable[[Any], Callable[..., Any]]


@contextlib.contextmanager
def patched(items: Iterable[tuple[Any, str, Wrap]]) -> Iterator[None]:
    """``items``: (owner, attribute name, original -> wrapper). Names the owner lacks, and
    attributes that are not plain callables (properties), are skipped."""
    saved: list[tuple[Any, str, Any, bool]] = []  # (owner, name, original, was_own_attribute)
    try:
        for owner, name, wrap in items:
            if not hasattr(owner, name):
                continue
            own = name in vars(owner)
            original = vars(owner)[name] if own else getattr(owner, name)
            if isinstance(original, property) or not callable(original):
                continue
            saved.append((owner, name, original, own))
            setattr(owner, name, wrap(original))
        yield
    finally:
        for owner, name, original, own in reversed(saved):
            if own:
                setattr(owner, name, original)
            else:
                delattr(owner, name)
