"""Strings from a trace (module and probe names, tags, stack lines), made safe to show.

A trace is data someone else may have written: a module name can hold an escape sequence
that recolours or rewrites the terminal, a newline that forges a report line, a bidi
override that reorders what a reader sees, or a leading ``=`` that a spreadsheet runs as a
formula. Text for a terminal, report.txt and pairs.csv goes through ``visible`` (control
characters become escapes such as ``\\x1b`` or ``\\u202e``); CSV cells also through
``csv_cell``. report.json keeps strings exact (JSON escapes them); HTML escapes them.
"""

from __future__ import annotations

import re

__all__ = ["csv_cell", "visible"]

# C0 and C1 controls, DEL, the invisible format characters that reorder or hide text, and lone
# surrogates (undecodable bytes of a file name, which no terminal encoding can print)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what spreadsheets read as the start of a formula


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    named = _NAMED.get(c)
    if named is not None:
        return named
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def visible(text: str) -> str:
    """``text`` with every control or invisible formatting character written as an escape."""
    return _CONTROL.sub(_escape, text)


def csv_cell(value: object) -> object:
    """A CSV cell: strings made ``visible`` and, when they would start a formula, quoted with a
    leading ``'``; numbers as they are."""
    if not isinstance(value, str):
        return value
    v = visible(value)
    return "'" + v if v.startswith(_FORMULA) else v
