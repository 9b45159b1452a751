"""What module names say about a tensor's role: the ``ROLE_SYNONYMS`` group a name says as a
whole (``gate_proj``, ``w1``) or by one of its words (``to_k``), the roles a fused module's name
lists in order (``qkv``, ``gate_up_proj``), and the roles that never stand for one another
(``DISTINCT_ROLES``: a query projection is never a value projection), nor does an attention's
projection stand for a feed-forward's (``ROLE_FAMILIES``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ._knowledge import DISTINCT_ROLES, FUSED_ROLES, ROLE_FAMILIES, ROLE_SYNONYMS

__all__ = ["SYN", "fused_roles", "role_names", "role_of_words", "role_words", "roles_contradict", "roles_named", "roles_of",
           "roles_said", "same_role"]

SYN: dict[str, int] = {name: i for i, group in enumerate(ROLE_SYNONYMS) for name in group}
_DISTINCT = frozenset(SYN[n] for n in DISTINCT_ROLES)
_FUSED = frozenset(frozenset(SYN[n] for n in group) for group in FUSED_ROLES)
_FAMILY = {SYN[n]: i for i, group in enumerate(ROLE_FAMILIES) for n in group}


class Named(Protocol):
    """A tensor as these helpers read it: the name of the layer it belongs to (``MTensor``)."""

    @property
    def leaf(self) -> str: ...


def same_role(x: str, y: str) -> bool:
    """Whether two module names are one name or synonyms of one role (``query`` ~ ``q_proj``)."""
    return x == y or (x in SYN and SYN.get(x) == SYN.get(y))


def role_names(run: Sequence[Named]) -> bool:
    """Whether every module name of the run is a role name of its own (``q_proj``, ``key``)."""
    return all(t.leaf in SYN for t in run)


def roles_of(run: Sequence[Named]) -> tuple[int, ...]:
    """The roles (``ROLE_SYNONYMS`` groups) a run's module names say, in order (-1: none)."""
    return tuple(SYN.get(t.leaf, -1) for t in run)


def roles_said(run: Sequence[Named]) -> tuple[int | None, ...]:
    """The roles a run's module names say as a whole or by one of their words (``to_k``: k)."""
    return tuple(role_of_words(t.leaf) for t in run)


def fused_roles(run: Sequence[Named]) -> bool:
    """Whether the run's names say the roles of one fused projection (``FUSED_ROLES``)."""
    return frozenset(roles_of(run)) in _FUSED


def roles_contradict(x: Named, y: Named) -> bool:
    """Whether the two tensors' module names say two different ``DISTINCT_ROLES`` (q against v),
    or roles of two different sublayers (``ROLE_FAMILIES``: ``Wqkv`` against ``gate_up_proj``)."""
    rx, ry = role_of_words(x.leaf), role_of_words(y.leaf)
    if rx is not None and ry is not None and rx != ry and rx in _DISTINCT and ry in _DISTINCT:
        return True
    fx, fy = _families(x.leaf), _families(y.leaf)
    return len(fx) == 1 and len(fy) == 1 and fx != fy


def _families(leaf: str) -> set[int]:
    """The sublayers (``ROLE_FAMILIES``) whose roles a module name says, as a whole or by its words."""
    said = role_of_words(leaf)
    roles = (said,) if said is not None else role_words(leaf)
    return {_FAMILY[r] for r in roles if r in _FAMILY} if roles and all(r in _FAMILY for r in roles) else set()


def role_of_words(name: str) -> int | None:
    """The role (``ROLE_SYNONYMS`` group) a name says as a whole (``gate_proj``, ``w1``) or by one
    of its words (``w_gate``), None when it says none or several."""
    low = name.lower()
    if low in SYN:
        return SYN[low]
    said = {SYN[w] for w in low.split("_") if w in SYN}
    return said.pop() if len(said) == 1 else None


def role_words(leaf: str) -> tuple[int, ...]:
    """The roles (``ROLE_SYNONYMS`` groups) a module name lists, in order: ``qkv_global`` q, k, v;
    ``query_global`` q; ``c_attn`` none."""
    out: list[int] = []
    for w in leaf.lower().split("_"):
        if w in SYN:
            out.append(SYN[w])
        elif len(w) > 1 and set(w) <= {"q", "k", "v"}:
            out += [SYN[c] for c in w]
        elif len(w) > 2 and w[0] == "w" and set(w[1:]) <= {"q", "k", "v"}:  # ``Wqkv``, ``wqkv``: W_q, W_k, W_v in one
            out += [SYN[c] for c in w[1:]]
    return tuple(out)


def roles_named(leaf: str) -> tuple[int, ...]:
    """The roles a fused module's name lists (``qkv``, ``kv``, ``query_key_value``,
    ``gate_up_proj``), in order; () when it names none or one (``c_attn``, ``in_proj``)."""
    out = role_words(leaf)
    return out if len(out) > 1 else ()
