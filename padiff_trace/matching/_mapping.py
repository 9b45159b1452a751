"""Explicit mappings: a JSON (or YAML) file pinning paddle modules and tensors to torch ones.

One file serves the weight transfer (``record``/``run --mapping``) and the comparison.
Format (see docs/analyzer.md)::

    {"version": 1,
     "modules": [
        {"paddle": "encoder.layers.*.self_attn", "torch": "encoder.layer.*.attention.self"},
        {"paddle": "head", "torch": "classifier", "blackbox": true},
        {"paddle": "proj", "torch": "proj", "transpose": [1, 0]}],
     "weights": [
        {"paddle": "embeddings.word_embeddings.weight", "torch": "wte.weight"},
        {"paddle": "h.0.q_proj.weight", "torch": "h.0.attn.c_attn.weight", "torch_part": [0, 64]},
        {"paddle": "h.0.k_proj.weight", "torch": "h.0.attn.query_key_value.weight",
         "torch_part": [16, 32], "torch_groups": 4},
        {"torch": "h.0.attn.bias", "skip": true}]}

A part is ``[start, stop)`` along ``axis`` (default 0) of the tensor's canonical layout (a
Linear's ``[out, in]``: axis 1 cuts its inputs, one projection of concatenated features); with
``*_groups`` N it is that range of each of N equal blocks (q|k|v packed head by head).
``*_offset`` (``"torch_offset": 1``) says that side's values are the other's plus it (a norm
kept as ``1 + w`` against one kept as ``w``). ``*_blocks`` (``[0, 1, 3, 2]``) takes that side's axis 0 as equal blocks in that order first: a
recurrent cell's gates stacked in another order. ``*_axes`` reorders that side's canonical axes first (``[0, 2, 3, 1]``: a conv's ``[out, in, kh,
kw]`` as ``[out, kh, kw, in]``); shapes that then differ by a reshape pair as one (a patch
embedding's conv against a Linear over patches flattened channels last). ``*_index``
(``"torch_index": 2``) takes element 2 of that side's stacked tensor (axis 0) first; a part then
cuts that element (an expert's gate rows in ``gate_up [experts, 2 * ffn, d]``).

A ``weightmap.json`` written by ``record --weights-from`` has this form: edited, it can be
passed back as ``--mapping``. Between two traces of one framework the weight entries
name the sides ``source`` and ``target`` instead of ``paddle`` and ``torch``.

or the shorthand ``{"paddle.path": "torch.path", ...}``. ``*`` matches one path
component, ``**`` any number (also none); the n-th wildcard of the paddle side
captures the text substituted for the n-th wildcard of the torch side.

Applied to two traces (or models) A and B, a mapping is oriented once
(``Mapping.oriented``, ``orient``): the ``SidedMapping`` names patterns and tensors of A and
of B, and what follows (``resolve``, weight pins, call pairing) works on sides only.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from padiff_trace import MappingError

from ._weightentries import WeightEntry, parse_weights

__all__ = [
    "MAPPING_COLUMNS", "mapping_swapped", "module_pattern", "MappingEntry", "Mapping", "WeightEntry", "SidedEntry", "SidedMapping",
    "SidedWeight", "load_mapping", "orient", "parse_mapping", "resolve",
]

MAPPING_COLUMNS = ("paddle", "torch")  # the two sides of a mapping entry, in the order files name them
_KEYS = {*MAPPING_COLUMNS, "blackbox", "transpose"}
_INFO_KEYS = {"generated_by", "source_trace", "target_trace", "unmatched", "one_sided", "note"}  # written by weightmap.json


@dataclass(frozen=True)
class MappingEntry:
    index: int
    paddle: str
    torch: str
    blackbox: bool = False
    transpose: tuple[int, ...] | None = None  # permutation applied to side A's tensors

    def describe(self) -> str:
        return f"entry {self.index} ({self.paddle!r} -> {self.torch!r})"


@dataclass(frozen=True)
class Mapping:
    """A mapping file as written: entries keyed by framework (``paddle``/``torch``) or by
    ``source``/``target``. Applied to two traces it is ``oriented`` once (``SidedMapping``)."""

    source: str
    entries: tuple[MappingEntry, ...]
    ops: dict[str, str] = field(default_factory=dict)  # op name -> canonical op (extends the table)
    weights: tuple[WeightEntry, ...] = ()

    def oriented(self, a_framework: str, b_framework: str) -> SidedMapping:
        """This mapping applied to trace (or model) A of ``a_framework`` and B of ``b_framework``.

        ``modules`` entries: the paddle column names A's modules, unless A is torch and B paddle
        (then B's); between two traces of one framework the file's order is A, B. ``weights``
        entries: ``source`` names A's tensor and ``target`` B's; ``paddle``/``torch`` names
        apply by framework, and only between two frameworks (they say nothing about two traces
        of one framework). The only place a mapping's framework names are read."""
        reverse = mapping_swapped(a_framework, b_framework)
        cross = a_framework != b_framework
        modules = tuple(
            SidedEntry(e, e.torch, e.paddle, captures_from_a=False) if reverse else SidedEntry(e, e.paddle, e.torch)
            for e in self.entries
        )
        weights = []
        for w in self.weights:
            if "source" in w.names or "target" in w.names:
                ka, kb = "source", "target"
            elif cross:
                ka, kb = a_framework, b_framework
            else:
                continue
            weights.append(SidedWeight(w, w.names.get(ka), w.names.get(kb), w.parts.get(ka), w.parts.get(kb),
                                       w.groups.get(ka, 1), w.groups.get(kb, 1), w.axis, w.axes.get(ka), w.axes.get(kb),
                                       w.summed, w.blocks.get(ka), w.blocks.get(kb),
                                       w.offsets.get(kb, 0.0) - w.offsets.get(ka, 0.0),
                                       w.indexes.get(ka), w.indexes.get(kb), _sided_depth(w.depths, ka, kb)))
        return SidedMapping(self.source, modules, tuple(weights), dict(self.ops), cross, reverse)


def _sided_depth(depths: dict[str, tuple[int, str]], ka: str, kb: str) -> tuple[str, int, str] | None:
    """A ``*_depth`` entry as the side of the pair it names."""
    for key, side in ((ka, "a"), (kb, "b")):
        if key in depths:
            return (side, *depths[key])
    return None


@dataclass(frozen=True)
class SidedEntry:
    """A ``modules`` entry applied to two traces: ``a`` is a pattern of trace A's module paths,
    ``b`` of trace B's. Wildcards are captured on the side the file keys the entry by (A's when
    ``captures_from_a``) and filled in on the other. ``transpose`` permutes A's tensors."""

    entry: MappingEntry  # as the file writes it (named in messages)
    a: str
    b: str
    captures_from_a: bool = True

    @property
    def blackbox(self) -> bool:
        return self.entry.blackbox

    @property
    def transpose(self) -> tuple[int, ...] | None:
        return self.entry.transpose

    def describe(self) -> str:
        return self.entry.describe()


@dataclass(frozen=True)
class SidedWeight:
    """A ``weights`` entry applied to two traces: trace A's tensor name and share (``[start,
    stop)`` along ``axis`` of its canonical layout), B's; a name is None where the entry names
    only one side (``skip``)."""

    entry: WeightEntry  # as the file writes it (named in messages)
    a: str | None
    b: str | None
    a_part: tuple[int, int] | None = None
    b_part: tuple[int, int] | None = None
    a_groups: int = 1
    b_groups: int = 1
    axis: int = 0
    a_axes: tuple[int, ...] | None = None
    b_axes: tuple[int, ...] | None = None
    summed: bool = False
    a_blocks: tuple[int, ...] | None = None  # that side's axis 0 as equal blocks in this order (``blocks_in_order``)
    b_blocks: tuple[int, ...] | None = None
    offset: float = 0.0  # B's values are A's plus this (``*_offset``)
    a_index: int | None = None  # that side's tensor is a stack: its element along axis 0 (``*_index``)
    b_index: int | None = None
    depth: tuple[str, int, str] | None = None  # ("a"/"b", r, order): that side's kernel over pixel phases (``*_depth``)

    @property
    def skip(self) -> bool:
        return self.entry.skip

    def describe(self, source: str) -> str:
        return self.entry.describe(source)


@dataclass(frozen=True)
class SidedMapping:
    """A mapping applied to two traces, A and B (``Mapping.oriented``): everything in it names
    sides, never frameworks. ``modules_pin_weights``: the ``modules`` entries also pin the weights
    of the modules they map, by local name (the traces are of two frameworks). ``reversed``: A is
    the file's second column (its keys name B's modules)."""

    source: str
    modules: tuple[SidedEntry, ...] = ()
    weights: tuple[SidedWeight, ...] = ()
    ops: dict[str, str] = field(default_factory=dict)
    modules_pin_weights: bool = False
    reversed: bool = False


_NONE = Mapping("<no mapping>", ())


def orient(mapping: Mapping | SidedMapping | None, a_framework: str, b_framework: str) -> SidedMapping:
    """``mapping`` applied to traces A and B (of these frameworks); one already applied
    (a ``SidedMapping``) as it is; none, as a mapping without entries."""
    if isinstance(mapping, SidedMapping):
        return mapping
    return (mapping if mapping is not None else _NONE).oriented(a_framework, b_framework)


def mapping_swapped(framework_a: str, framework_b: str) -> bool:
    """Whether models A and B are a mapping file's columns in reverse order (A torch, B
    paddle): their entries, and any pair given in (paddle, torch) order, are read reversed."""
    return (framework_a, framework_b) == MAPPING_COLUMNS[::-1]


def load_mapping(path: str | os.PathLike[str]) -> Mapping:
    """Read and validate a mapping file (``.json``, or ``.yaml``/``.yml`` with pyyaml)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise MappingError(f"{p}: cannot read mapping file: {exc.strerror or exc}") from None
    data: Any
    if p.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ModuleNotFoundError:
            raise MappingError(f"{p}: YAML mappings need pyyaml (pip install pyyaml); or write JSON") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise MappingError(f"{p}: invalid YAML: {str(exc).splitlines()[0]}") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MappingError(f"{p}: invalid JSON: {exc.msg} at line {exc.lineno}") from None
    return parse_mapping(data, str(p))


def parse_mapping(data: Any, source: str = "<mapping>") -> Mapping:
    """A mapping from already-parsed JSON/YAML data; ``source`` names it in error messages."""
    ops: dict[str, str] = {}
    weights: tuple[WeightEntry, ...] = ()
    if isinstance(data, dict) and ("modules" in data or "ops" in data or "weights" in data):
        version = data.get("version", 1)
        if version != 1:
            raise MappingError(f"{source}: mapping version {version!r} unsupported (this analyzer reads 1)")
        extra = set(data) - {"version", "modules", "ops", "weights"} - _INFO_KEYS
        if extra:
            raise MappingError(f"{source}: unknown top-level key(s) {sorted(extra)}")
        raw = data.get("modules", [])
        if not isinstance(raw, list):
            raise MappingError(f"{source}: 'modules' must be a list of entries")
        raw_ops = data.get("ops", {})
        if not isinstance(raw_ops, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw_ops.items()):
            raise MappingError(f"{source}: 'ops' must map op names to op names, e.g. {{\"my_matmul\": \"matmul\"}}")
        ops = dict(raw_ops)
        weights = parse_weights(data.get("weights", []), source)
    elif isinstance(data, dict):
        raw = [{"paddle": k, "torch": v} for k, v in data.items()]
    else:
        raise MappingError(f"{source}: a mapping must be an object, got {type(data).__name__}")
    entries = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict):
            raise MappingError(f"{source}: entry {i} must be an object with 'paddle' and 'torch'")
        unknown = set(e) - _KEYS
        if unknown:
            raise MappingError(f"{source}: entry {i} has unknown key(s) {sorted(unknown)}; allowed {sorted(_KEYS)}")
        pa, pb = e.get("paddle"), e.get("torch")
        if not isinstance(pa, str) or not isinstance(pb, str):
            raise MappingError(f"{source}: entry {i} needs string 'paddle' and 'torch' paths")
        if _wildcards(pa) != _wildcards(pb):
            raise MappingError(
                f"{source}: entry {i} ({pa!r} -> {pb!r}) has wildcards {_wildcards(pa)} vs {_wildcards(pb)}; "
                "both sides need the same wildcards in the same order"
            )
        tr = e.get("transpose")
        perm: tuple[int, ...] | None = None
        if tr is not None:
            if not isinstance(tr, list) or sorted(tr) != list(range(len(tr))):
                raise MappingError(f"{source}: entry {i} transpose {tr!r} is not a permutation like [1, 0]")
            perm = tuple(int(x) for x in tr)
        entries.append(MappingEntry(i, pa, pb, bool(e.get("blackbox", False)), perm))
    return Mapping(source, tuple(entries), ops, weights)


def _wildcards(pattern: str) -> list[str]:
    return [c for c in pattern.split(".") if c in ("*", "**")]


def module_pattern(pattern: str) -> re.Pattern[str]:
    """A mapping file's module path pattern (``*`` one component, ``**`` any number) as a regex
    that matches whole paths (captures: what each wildcard matched)."""
    if pattern in ("", "<root>"):
        return re.compile(r"\Z")
    parts = []
    for comp in pattern.split("."):
        if comp == "**":
            parts.append(r"(.*?)")
        elif comp == "*":
            parts.append(r"([^.]+)")
        else:
            parts.append(re.escape(comp))
    rx = r"\.".join(parts)
    # "a.**.b" must also match "a.b": let "**." swallow its dot
    rx = rx.replace(r"(.*?)\.", r"((?:[^.]+\.)*?)")
    return re.compile(rx + r"\Z")


def _substitute(pattern: str, captures: tuple[str, ...]) -> str:
    if pattern in ("", "<root>"):
        return ""
    out: list[str] = []
    it = iter(captures)
    for comp in pattern.split("."):
        if comp in ("*", "**"):
            out.append(next(it))
        else:
            out.append(comp)
    return ".".join(x for x in out if x != "").replace("..", ".").strip(".")


def resolve(
    mapping: SidedMapping, a_modules: set[str], b_modules: set[str], strict: bool = True
) -> list[tuple[str, str, SidedEntry]]:
    """(module in A, module in B, entry) for every module an entry maps.

    An entry that maps nothing raises MappingError naming it (unless not ``strict``).
    """
    out: list[tuple[str, str, SidedEntry]] = []
    for e in mapping.modules:
        # wildcards are captured on the side the file keys the entry by, and filled in on the other
        if e.captures_from_a:
            key, other, key_mods, other_mods, key_side, other_side = e.a, e.b, a_modules, b_modules, "A", "B"
        else:
            key, other, key_mods, other_mods, key_side, other_side = e.b, e.a, b_modules, a_modules, "B", "A"
        rx = module_pattern(key)
        hits = 0
        tried: list[str] = []
        for mod in sorted(key_mods):
            m = rx.match(mod)
            if m is None:
                continue
            caps = tuple(g.rstrip(".") for g in m.groups())
            target = _substitute(other, caps)
            if target in other_mods:
                out.append((mod, target, e) if e.captures_from_a else (target, mod, e))
                hits += 1
            else:
                tried.append(target)
        if not hits and strict:
            why = (
                f"its trace {other_side} path(s) {tried[:3]} are not modules of trace {other_side}"
                if tried
                else f"no module of trace {key_side} matches {key!r}"
            )
            raise MappingError(f"{mapping.source}: {e.describe()} matches nothing: {why}")
    return out
