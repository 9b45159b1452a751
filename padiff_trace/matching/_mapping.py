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
        {"torch": "h.0.attn.bias", "skip": true}]}

A ``weightmap.json`` written by ``record --weights-from`` has this form: edited, it can be
passed back as ``--mapping``. Between two traces of one framework the weight entries
name the sides ``source`` and ``target`` instead of ``paddle`` and ``torch``.

or the shorthand ``{"paddle.path": "torch.path", ...}``. ``*`` matches one path
component, ``**`` any number (also none); the n-th wildcard of the paddle side
captures the text substituted for the n-th wildcard of the torch side.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from padiff_trace import MappingError

__all__ = ["MAPPING_COLUMNS", "mapping_swapped", "MappingEntry", "Mapping", "WeightEntry", "load_mapping", "parse_mapping", "resolve", "weight_pins"]

MAPPING_COLUMNS = ("paddle", "torch")  # the two sides of a mapping entry, in the order files name them
_KEYS = {*MAPPING_COLUMNS, "blackbox", "transpose"}
_SIDES = ("paddle", "torch", "source", "target")
_WEIGHT_KEYS = {*_SIDES, *(f"{s}_part" for s in _SIDES), "axis", "skip", "how", "confidence", "convert", "why", "transfer"}
_INFO_KEYS = {"generated_by", "source_trace", "target_trace", "unmatched", "note"}  # written by weightmap.json


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
class WeightEntry:
    """A ``weights`` entry: side name ("paddle"/"torch"/"source"/"target") -> tensor name."""

    index: int
    names: dict[str, str]
    parts: dict[str, tuple[int, int]]
    skip: bool = False

    def describe(self, source: str) -> str:
        return f"{source}: weights entry {self.index} ({', '.join(f'{k}={v!r}' for k, v in self.names.items())})"


@dataclass(frozen=True)
class Mapping:
    source: str
    entries: tuple[MappingEntry, ...]
    ops: dict[str, str] = field(default_factory=dict)  # op name -> canonical op (extends the table)
    weights: tuple[WeightEntry, ...] = ()


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
        weights = _parse_weights(data.get("weights", []), source)
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


def _parse_weights(raw: Any, source: str) -> tuple[WeightEntry, ...]:
    if not isinstance(raw, list):
        raise MappingError(f"{source}: 'weights' must be a list of entries like {{\"paddle\": NAME, \"torch\": NAME}}")
    out = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict):
            raise MappingError(f"{source}: weights entry {i} must be an object")
        unknown = set(e) - _WEIGHT_KEYS
        if unknown:
            raise MappingError(f"{source}: weights entry {i} has unknown key(s) {sorted(unknown)}; allowed {sorted(_WEIGHT_KEYS)}")
        names = {k: e[k] for k in _SIDES if k in e}
        if not names or not all(isinstance(v, str) for v in names.values()):
            raise MappingError(f"{source}: weights entry {i} needs tensor names under 'paddle'/'torch' (or 'source'/'target')")
        if {"paddle", "torch"} & set(names) and {"source", "target"} & set(names):
            raise MappingError(f"{source}: weights entry {i} mixes 'paddle'/'torch' with 'source'/'target'")
        skip = bool(e.get("skip", False))
        if not skip and len(names) != 2:
            raise MappingError(f"{source}: weights entry {i} names one side only; add the other or \"skip\": true")
        parts: dict[str, tuple[int, int]] = {}
        for k in names:
            part = e.get(f"{k}_part")
            if part is None:
                continue
            if not (isinstance(part, list) and len(part) == 2 and all(isinstance(x, int) for x in part) and 0 <= part[0] < part[1]):
                raise MappingError(f"{source}: weights entry {i}: {k}_part must be [start, stop) like [0, 64], got {part!r}")
            parts[k] = (part[0], part[1])
        if e.get("axis", 0) != 0:
            raise MappingError(f"{source}: weights entry {i}: only axis 0 of the canonical layout is supported")
        out.append(WeightEntry(i, names, parts, skip))
    return tuple(out)


def weight_pins(mapping: Mapping, a_framework: str, b_framework: str) -> list[tuple[WeightEntry, str | None, str | None]]:
    """(entry, A's tensor name, B's tensor name) for every weights entry that applies to A -> B.

    Entries name tensors by framework (``paddle``/``torch``) between two frameworks, and by
    ``source`` (A) / ``target`` (B) between two traces of one framework.
    """
    cross = a_framework != b_framework
    out = []
    for e in mapping.weights:
        if "source" in e.names or "target" in e.names:
            ka, kb = "source", "target"
        elif cross:
            ka, kb = a_framework, b_framework
        else:
            continue  # paddle/torch names say nothing about two traces of one framework
        out.append((e, e.names.get(ka), e.names.get(kb)))
    return out


def _wildcards(pattern: str) -> list[str]:
    return [c for c in pattern.split(".") if c in ("*", "**")]


def _compile(pattern: str) -> re.Pattern[str]:
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
    mapping: Mapping, a_modules: set[str], b_modules: set[str], swap: bool, strict: bool = True
) -> list[tuple[str, str, MappingEntry]]:
    """(module in A, module in B, entry) for every module an entry maps.

    ``swap`` is True when trace A is the torch trace (keys then apply to B).
    An entry that maps nothing raises MappingError naming it (unless not ``strict``).
    """
    src_mods, dst_mods = (b_modules, a_modules) if swap else (a_modules, b_modules)
    out: list[tuple[str, str, MappingEntry]] = []
    for e in mapping.entries:
        rx = _compile(e.paddle)
        hits = 0
        tried: list[str] = []
        for mod in sorted(src_mods):
            m = rx.match(mod)
            if m is None:
                continue
            caps = tuple(g.rstrip(".") for g in m.groups())
            target = _substitute(e.torch, caps)
            if target in dst_mods:
                out.append((target, mod, e) if swap else (mod, target, e))
                hits += 1
            else:
                tried.append(target)
        if not hits and strict:
            side_src, side_dst = ("B", "A") if swap else ("A", "B")
            why = (
                f"its torch path(s) {tried[:3]} are not modules of trace {side_dst}"
                if tried
                else f"no module of trace {side_src} matches {e.paddle!r}"
            )
            raise MappingError(f"{mapping.source}: {e.describe()} matches nothing: {why}")
    return out
