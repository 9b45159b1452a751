"""Module instances held by several parents, and the path each call of one is recorded under.

``named_modules`` lists an instance once, under the first path that holds it; HF XLM holds one
``GELUActivation`` (``transformers.activations.gelu``) in every feed-forward block, paddlenlp
BART one ``shared`` embedding as ``encoder.embed_tokens`` and ``decoder.embed_tokens``. A call
of such an instance is recorded under the path by which the module calling it holds it (the
call inside ``ffns.1`` is ``ffns.1.act``, call_index 0), and under the first path when the
caller holds it under none.
"""

from __future__ import annotations

from typing import Any

from ._adapter import Adapter

__all__ = ["Aliases", "under_caller"]


class Aliases:
    """Every path of every module instance of ``model`` that is held more than once."""

    def __init__(self, adapter: Adapter, model: Any) -> None:
        paths: dict[int, list[str]] = {}
        for path, module in adapter.module_aliases(model):
            paths.setdefault(id(module), []).append(path)
        self._paths = {k: tuple(v) for k, v in paths.items() if len(v) > 1}

    def of(self, module: Any) -> tuple[str, ...]:
        """The paths holding ``module`` when there are several, else ()."""
        return self._paths.get(id(module), ())


def under_caller(hooked: str, aliases: tuple[str, ...], caller: str | None) -> str:
    """The path a call is recorded under: the alias held by the calling module ``caller``
    (None: no module is running), else ``hooked``, the path its hooks were registered with."""
    if aliases and caller is not None:
        prefix = f"{caller}." if caller else ""
        for alias in aliases:
            if alias.startswith(prefix) and "." not in alias[len(prefix):]:
                return alias
    return hooked
