"""PaDiff's ``LayerMap`` (and its plain ``{layer: module}`` dict), translated into this tool's
mapping file and recording filters.

PaDiff names sublayers by object; a trace names modules by path. ``translate`` finds each
object's path in its model (``named_sublayers`` / ``named_modules``, through the recorder's
adapter) and writes:

* a ``map`` pair -> a mapping ``modules`` entry with ``"blackbox": true`` (PaDiff compared a
  mapped pair at its boundary only and skipped what is inside);
* ``ignore(x)`` -> the recording of x's model excludes x's own records (its children stay);
* ``ignore_recursively(x)`` -> excludes x and everything inside it.

The mapping file lands next to the traces, so ``padiff-trace compare A B --mapping M``
repeats the comparison later.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from padiff_trace import UserError
from padiff_trace.matching import mapping_swapped
from padiff_trace.recorder import detect, get_adapter

__all__ = ["AUTO_PAIRS", "LayerMap", "Translation", "translate"]

logger = logging.getLogger(__name__)

# LayerMap.auto: layers whose inside differs between the frameworks while their boundary
# matches (PaDiff's "special init" classes, and their recurrent siblings); paddle class ->
# torch class. Pairs of these are mapped in order of appearance.
AUTO_PAIRS = {
    "MultiHeadAttention": "MultiheadAttention",
    "LSTM": "LSTM",
    "GRU": "GRU",
    "SimpleRNN": "RNN",
    "BatchNorm2D": "BatchNorm2d",
}
_CONTAINERS = ("Sequential",)  # ignore_class's default, as in PaDiff


class LayerMap:
    """PaDiff's ``LayerMap``: which sublayer of one model is which submodule of the other, and
    which sublayers to leave out of the comparison. Objects, not names, as in PaDiff.

    * ``layer_map.map = {layer.attn: module.attn}`` — compare the pair at its boundary only
      (either orientation; assigning again adds pairs);
    * ``ignore(x)`` — x's own inputs and outputs are not compared (its children are);
    * ``ignore_recursively(x)`` (PaDiff's docs also spell it ``ignore_recursivly``) — x and
      everything inside it;
    * ``ignore_class(model, cls)`` — ``ignore`` every sublayer of ``model`` that is a ``cls``
      (default: the frameworks' ``Sequential``);
    * ``auto(layer, module)`` — map the MultiHeadAttention / LSTM / GRU / RNN / BatchNorm2D
      layers of both models pairwise, in order.

    Ignored layers are not recorded at all, weights included: if an ignored layer owns
    weights, ``auto_weights`` cannot copy them (initialise them yourself, as PaDiff required).
    """

    def __init__(self) -> None:
        self._map: dict[Any, Any] = {}  # PaDiff hands this dict out: changes to it count
        self._ignore: list[Any] = []
        self._ignore_all: list[Any] = []

    @property
    def map(self) -> dict[Any, Any]:
        """The mapped pairs, as given (the dict itself, as in PaDiff: editing it edits the map)."""
        return self._map

    @map.setter
    def map(self, pairs: dict[Any, Any]) -> None:
        if not isinstance(pairs, dict):
            raise UserError(f"LayerMap.map wants a dict {{layer: module}}, got {type(pairs).__name__}")
        self._map.update(pairs)

    def ignore(self, layers: Any) -> None:
        """Leave ``layers`` (one or a list) out of the comparison; their children stay in."""
        self._ignore.extend(_as_list(layers))

    def ignore_recursively(self, layers: Any) -> None:
        """Leave ``layers`` (one or a list) and everything inside them out of the comparison."""
        self._ignore_all.extend(_as_list(layers))

    ignore_recursivly = ignore_recursively  # the spelling of PaDiff 0.2's LayerMap.md

    def ignore_class(self, layer: Any, ign_cls: type | tuple[type, ...] | None = None) -> None:
        """``ignore`` every sublayer of ``layer`` (itself included) that is an ``ign_cls``."""
        for _, sub in _named(layer):
            if (isinstance(sub, ign_cls) if ign_cls is not None else _is_container(sub)):
                self._ignore.append(sub)

    def auto(self, layer: Any, module: Any) -> None:
        """Map the layers of ``AUTO_PAIRS`` classes of both models to each other, in order."""
        a = _special(layer, set(AUTO_PAIRS))
        b = _special(module, set(AUTO_PAIRS.values()))
        if len(a) != len(b):
            raise UserError(
                f"LayerMap.auto: {len(a)} such layers in {type(layer).__name__} ({_names(a)}) but {len(b)} in "
                f"{type(module).__name__} ({_names(b)}); set layer_map.map = {{...}} by hand"
            )
        for (pa, x), (pb, y) in zip(a, b):
            if AUTO_PAIRS.get(type(x).__name__) != type(y).__name__:
                raise UserError(
                    f"LayerMap.auto: in order, {pa} ({type(x).__name__}) faces {pb} ({type(y).__name__}); "
                    "set layer_map.map = {...} by hand"
                )
            logger.info("LayerMap.auto: %s (%s) <-> %s (%s)", pa, type(x).__name__, pb, type(y).__name__)
            self._map[x] = y

    def _all(self) -> tuple[list[tuple[Any, Any]], list[Any], list[Any]]:
        return list(self._map.items()), list(self._ignore), list(self._ignore_all)


@dataclass(frozen=True)
class Translation:
    """A layer map in this tool's terms: mapping entries, and recording excludes per model."""

    modules: tuple[dict[str, Any], ...] = ()
    exclude: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    lines: tuple[str, ...] = field(default=())  # what was translated, for the log

    def mapping_document(self) -> dict[str, Any] | None:
        """The mapping file's content (None when there is nothing to map)."""
        if not self.modules:
            return None
        return {"version": 1, "note": "written by padiff_trace.auto_diff from its layer_map", "modules": list(self.modules)}


def translate(layer_map: Any, models: tuple[Any, Any], frameworks: tuple[str, str]) -> Translation:
    """``layer_map`` (None, a ``LayerMap`` or a ``{layer: module}`` dict) for models A and B.

    Mapping entries name the paddle model's path under ``paddle`` (A's, when both models
    are of one framework), as mapping files do.
    """
    if layer_map is None:
        return Translation()
    if isinstance(layer_map, LayerMap):
        pairs, ignore, ignore_all = layer_map._all()
    elif isinstance(layer_map, dict):
        pairs, ignore, ignore_all = list(layer_map.items()), [], []
    else:
        raise UserError(f"layer_map must be a LayerMap or a dict {{layer: module}}, got {type(layer_map).__name__}")
    paths = [{id(m): p for p, m in reversed(list(_named(model)))} for model in models]
    key_side = 1 if mapping_swapped(*frameworks) else 0
    modules: list[dict[str, Any]] = []
    lines: list[str] = []
    for x, y in pairs:
        (sx, px), (sy, py) = _locate(x, paths), _locate(y, paths)
        if sx == sy:
            raise UserError(f"layer_map pairs {_what(x, px)} with {_what(y, py)}: both are in model {'AB'[sx]}; "
                            "a pair needs one layer of each model")
        by_side = {sx: px, sy: py}
        modules.append({"paddle": by_side[key_side], "torch": by_side[1 - key_side], "blackbox": True})
        lines.append(f"map {by_side[0] or '<root>'} <-> {by_side[1] or '<root>'} (compared at the boundary)")
    exclude: tuple[list[str], list[str]] = ([], [])
    for objs, recursive in ((ignore, False), (ignore_all, True)):
        for x in objs:
            side, path = _locate(x, paths)
            exclude[side].append(path)
            if recursive:
                exclude[side].append(f"{path}.*" if path else "*")
            lines.append(f"ignore {path or '<root>'} of model {'AB'[side]}" + (" and everything inside" if recursive else ""))
    return Translation(tuple(modules), (tuple(exclude[0]), tuple(exclude[1])), tuple(lines))


def _named(model: Any) -> Iterable[tuple[str, Any]]:
    return get_adapter(detect(model)).named_modules(model)


def _locate(obj: Any, paths: list[dict[int, str]]) -> tuple[int, str]:
    if isinstance(obj, str):
        raise UserError(
            f"layer_map holds the name {obj!r}: PaDiff's layer_map takes layer objects (layer.attn: module.attn); "
            "pass options as options={...}"
        )
    for side, table in enumerate(paths):
        if id(obj) in table:
            return side, table[id(obj)]
    raise UserError(f"layer_map names a {type(obj).__name__} that is a sublayer of neither model")


def _what(obj: Any, path: str) -> str:
    return f"{path or '<root>'} ({type(obj).__name__})"


def _as_list(layers: Any) -> list[Any]:
    return list(layers) if isinstance(layers, (list, tuple)) else [layers]


def _is_container(module: Any) -> bool:
    return any(c.__name__ in _CONTAINERS and (c.__module__ or "").split(".")[0] in ("paddle", "torch") for c in type(module).__mro__)


def _special(model: Any, classes: set[str]) -> list[tuple[str, Any]]:
    """Sublayers of ``classes`` in registration order, not looking inside one found."""
    found: list[tuple[str, Any]] = []
    for path, sub in _named(model):
        if type(sub).__name__ in classes and not any(path.startswith(p + ".") for p, _ in found):
            found.append((path, sub))
    return found


def _names(found: list[tuple[str, Any]]) -> str:
    return ", ".join(p for p, _ in found) or "none"
