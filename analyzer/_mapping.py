"""Explicit module mappings: a JSON (or YAML) file pinning paddle paths to torch paths.

Format (see docs/analyzer.md)::

    {"version": 1,
     "modules": [
        {"paddle": "encoder.layers.*.self_attn", "torch": "encoder.layer.*.attention.self"},
        {"paddle": "head", "torch": "classifier", "blackbox": true},
        {"paddle": "proj", "torch": "proj", "transpose": [1, 0]}]}

or the shorthand ``{"paddle.path": "torch.path", ...}``. ``*`` matches one path
component, ``**`` any number (also none); the n-th wildcard of the paddle side
captures the text substituted for the n-th wildcard of the torch side.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from padiff_trace import MappingError

__all__ = ["MappingEntry", "Mapping", "load_mapping", "resolve"]

_KEYS = {"paddle", "torch", "blackbox", "transpose"}


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
    source: str
    entries: tuple[MappingEntry, ...]
    ops: dict[str, str] = field(default_factory=dict)  # op name -> canonical op (extends the table)


def load_mapping(path: str | Path) -> Mapping:
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
    ops: dict[str, str] = {}
    if isinstance(data, dict) and ("modules" in data or "ops" in data):
        version = data.get("version", 1)
        if version != 1:
            raise MappingError(f"{source}: mapping version {version!r} unsupported (this analyzer reads 1)")
        extra = set(data) - {"version", "modules", "ops"}
        if extra:
            raise MappingError(f"{source}: unknown top-level key(s) {sorted(extra)}")
        raw = data.get("modules", [])
        if not isinstance(raw, list):
            raise MappingError(f"{source}: 'modules' must be a list of entries")
        raw_ops = data.get("ops", {})
        if not isinstance(raw_ops, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw_ops.items()):
            raise MappingError(f"{source}: 'ops' must map op names to op names, e.g. {{\"my_matmul\": \"matmul\"}}")
        ops = dict(raw_ops)
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
    return Mapping(source, tuple(entries), ops)


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


def resolve(mapping: Mapping, a_modules: set[str], b_modules: set[str], swap: bool) -> list[tuple[str, str, MappingEntry]]:
    """(module in A, module in B, entry) for every module an entry maps.

    ``swap`` is True when trace A is the torch trace (keys then apply to B).
    An entry that maps nothing raises MappingError naming it.
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
        if not hits:
            side_src, side_dst = ("B", "A") if swap else ("A", "B")
            why = (
                f"its torch path(s) {tried[:3]} are not modules of trace {side_dst}"
                if tried
                else f"no module of trace {side_src} matches {e.paddle!r}"
            )
            raise MappingError(f"{mapping.source}: {e.describe()} matches nothing: {why}")
    return out
