"""Plain data types shared by writer and reader: stack frames and record headers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import NamedTuple

from ._schema import Kind, Phase

__all__ = ["Frame", "HeaderIds", "RecordHeader", "stack_to_json", "stack_from_json"]


class Frame(NamedTuple):
    """One stack frame: file (relative, see docs/trace-format.md), line, function, source text."""

    file: str
    line: int
    function: str
    source: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.function}: {self.source}"


@dataclass(frozen=True, slots=True)
class RecordHeader:
    """Everything about a record except its tensor, as handed to the writer."""

    step: int
    phase: Phase
    kind: Kind
    module: str = ""
    module_type: str = ""
    call: int = -1
    parent: int = -1
    call_index: int = 0
    position: str = ""
    device: str = "cpu"
    stack: tuple[Frame, ...] = ()


def stack_to_json(stack: tuple[Frame, ...]) -> str:
    return json.dumps([list(f) for f in stack], ensure_ascii=False, separators=(",", ":"))


# Longer stack text is not a recorded stack (~40,000 frames; Python's default recursion limit is
# 1,000): parsed, it would take ~15 times its size in objects.
MAX_STACK_TEXT = 4 << 20


def stack_from_json(text: str) -> tuple[Frame, ...]:
    """The frames ``stack_to_json`` wrote; ``ValueError`` for anything else (text from a trace:
    nested deep, a line number of 1e400, a frame that is not four fields, over ``MAX_STACK_TEXT``)."""
    if not text:
        return ()
    if len(text) > MAX_STACK_TEXT:
        raise ValueError(f"a stack of {len(text)} characters, more than a recorded one holds")
    try:
        frames = json.loads(text)
    except RecursionError:
        raise ValueError("a stack nested too deep to be a list of frames") from None
    if not isinstance(frames, list):
        raise ValueError("a stack that is not a list of frames")
    return tuple(_frame(f) for f in frames)


def _frame(f: object) -> Frame:
    if not (isinstance(f, list) and len(f) == 4 and type(f[1]) is int and all(isinstance(f[k], str) for k in (0, 2, 3))):
        raise ValueError("a stack frame that is not [file, line, function, source]")
    return Frame(f[0], f[1], f[2], f[3])


class HeaderIds(NamedTuple):
    """A record header's strings as ids into the shard's string table (cached per shard)."""

    module: int
    module_type: int
    position: int
    device: int
    stack: int
    frames: tuple[Frame, ...]  # held so that the id() in the cache key stays this stack's
