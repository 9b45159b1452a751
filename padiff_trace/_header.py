"""Plain data types shared by writer and reader: stack frames and record headers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import NamedTuple

from ._schema import Kind, Phase

__all__ = ["Frame", "RecordHeader", "stack_to_json", "stack_from_json"]


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


def stack_from_json(text: str) -> tuple[Frame, ...]:
    if not text:
        return ()
    return tuple(Frame(str(f[0]), int(f[1]), str(f[2]), str(f[3])) for f in json.loads(text))
