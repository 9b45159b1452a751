"""What the arguments of an op mean, per framework - as data.

``OP_SIGNATURES`` says which argument of an op is which operand (its *role*), in which
axis order each framework passes it, and which flags fold a transpose into the op;
``LAYOUT_OPS`` says which axis permutation a transpose-like op applies. With these,
operands of paired ops are compared by meaning: paddle ``matmul(q, k, transpose_y=True)``
and torch ``matmul(q, k.transpose(-1, -2))`` both have operand ``b`` = kᵀ; paddle's
``scaled_dot_product_attention`` takes [B, S, H, D] where torch's takes [B, H, S, D].

A signature is one string per framework (``"*"``: both), its parameters in positional
order, each written

    name              an argument that is no operand (a scalar, an option)
    name:role         an operand; operands of paired ops pair by role
    name:role@T       an operand passed with its last two axes swapped (relative to the
                      canonical operand: torch's layout where the frameworks differ)
    name:role@0213    an operand passed in another axis order (recorded -> canonical)
    name:T(role)      a flag that, when true, makes the op transpose operand ``role``
    ->@0213           the op's output in another axis order (recorded -> canonical)

An op without a signature has one operand per argument position. Recorded op arguments
are ``args[i]``/``kwargs["name"]`` (a method's ``self`` is ``args[0]``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

__all__ = [
    "OP_EQUIVALENTS",
    "LAYOUT_OPS",
    "OP_SIGNATURES",
    "Param",
    "Perm",
    "Signature",
    "compose",
    "inverse",
    "layout_perm",
    "layout_op_perm",
    "normal",
    "signature",
]

Perm = tuple[int, ...]

OP_SIGNATURES: dict[str, dict[str, str]] = {
    "matmul": {"paddle": "x:a y:b transpose_x:T(a) transpose_y:T(b)", "torch": "input:a other:b"},
    "__matmul__": {"*": "self:a other:b"},
    "__rmatmul__": {"*": "self:b other:a"},
    "rmatmul": {"*": "self:b other:a"},
    "mm": {"paddle": "input:a mat2:b", "torch": "input:a mat2:b"},
    "bmm": {"paddle": "x:a y:b", "torch": "input:a mat2:b"},
    "linear": {"paddle": "x:x weight:w bias:bias", "torch": "input:x weight:w@T bias:bias"},
    "scaled_dot_product_attention": {
        "paddle": "query:q@0213 key:k@0213 value:v@0213 attn_mask:mask dropout_p is_causal training backend "
        "scale enable_gqa name ->@0213",
        "torch": "query:q key:k value:v attn_mask:mask dropout_p is_causal scale enable_gqa",
    },
    "where": {"paddle": "condition:cond x:x y:y", "torch": "condition:cond input:x other:y"},
    "masked_fill": {"paddle": "x:x mask:mask value:value", "torch": "input:x mask:mask value:value"},
}

# transpose-like ops (spelling -> framework -> how their python scalars give the permutation):
# "perm" the permutation itself, "swap" two axes to exchange, "reverse" all axes reversed,
# "swap_last" the last two axes exchanged
LAYOUT_OPS: dict[str, dict[str, str]] = {
    "transpose": {"paddle": "perm", "torch": "swap"},
    "swapaxes": {"*": "swap"},
    "permute": {"*": "perm"},
    "T": {"*": "reverse"},
    "t": {"*": "reverse"},
    "mT": {"*": "swap_last"},
}

_TOKEN = re.compile(r"^(?P<name>[A-Za-z_]\w*)(?::(?:T\((?P<flips>\w+)\)|(?P<role>\w+)(?:@(?P<layout>T|\d+))?))?$")
_OUT = re.compile(r"^->@(?P<layout>T|\d+)$")
_POSITION = re.compile(r'^(?:args\[(?P<index>\d+)\]|kwargs\["(?P<key>[^"]+)"\])(?P<tail>.*)$')


@dataclass(frozen=True)
class Param:
    """One parameter of a signature."""

    name: str
    role: str | None = None  # operand role; None: not an operand
    layout: str | None = None  # "T" or digits: recorded -> canonical axis order
    flips: str | None = None  # a flag transposing this operand role when true


@dataclass(frozen=True)
class Signature:
    params: tuple[Param, ...]
    out_layout: str | None = None

    def param(self, position: str) -> tuple[Param | None, str]:
        """The parameter an argument position names, and the rest of the position (``[0]`` of a list)."""
        m = _POSITION.match(position)
        if m is None:
            return None, ""
        if m.group("index") is not None:
            i = int(m.group("index"))
            return (self.params[i] if i < len(self.params) else None), m.group("tail")
        key = m.group("key")
        return next((p for p in self.params if p.name == key), None), m.group("tail")


def _parse_token(token: str) -> Param:
    m = _TOKEN.match(token)
    if m is None:
        raise ValueError(f"bad signature parameter {token!r}")
    return Param(m.group("name"), m.group("role"), m.group("layout"), m.group("flips"))


@cache
def _parse(text: str) -> Signature:
    params: list[Param] = []
    out_layout = None
    for token in text.split():
        m = _OUT.match(token)
        if m is not None:
            out_layout = m.group("layout")
        else:
            params.append(_parse_token(token))
    return Signature(tuple(params), out_layout)


def signature(op: str, framework: str) -> Signature | None:
    """The signature of op spelling ``op`` as recorded by ``framework``; None when unknown."""
    entry = OP_SIGNATURES.get(op)
    if entry is None:
        return None
    text = entry.get(framework, entry.get("*"))
    return _parse(text) if text is not None else None


def layout_perm(layout: str | None, ndim: int) -> Perm | None:
    """The permutation a layout code stands for on an ``ndim``-axis tensor; None for the identity.
    A code that does not fit ``ndim`` raises ValueError."""
    if layout is None:
        return None
    if layout == "T":
        if ndim < 2:
            raise ValueError("a transpose needs two axes")
        return (*range(ndim - 2), ndim - 1, ndim - 2)
    perm = tuple(int(c) for c in layout)
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"layout {layout} does not fit {ndim} axes")
    return perm


def layout_op_perm(op: str, framework: str, ints: list[int], ndim: int) -> Perm | None:
    """The permutation a transpose-like op applied to its ``ndim``-axis operand, from its python
    scalar arguments ``ints``; None when ``op`` is no such op or its arguments do not say."""
    entry = LAYOUT_OPS.get(op)
    how = entry.get(framework, entry.get("*")) if entry else None
    if how is None or ndim < 1:
        return None
    if how == "reverse":
        return tuple(reversed(range(ndim)))
    if how == "swap_last":
        return layout_perm("T", ndim) if ndim >= 2 else None
    axes = [i % ndim for i in ints if -ndim <= i < ndim] if len(ints) == (2 if how == "swap" else ndim) else []
    if how == "swap" and len(axes) == 2:
        perm = list(range(ndim))
        perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
        return tuple(perm)
    if how == "perm" and sorted(axes) == list(range(ndim)):
        return tuple(axes)
    return None


def compose(first: Perm | None, then: Perm | None) -> Perm | None:
    """The permutation of applying ``first`` then ``then`` (numpy ``transpose`` semantics)."""
    if first is None:
        return then
    if then is None:
        return first
    return tuple(first[j] for j in then)


def inverse(perm: Perm | None) -> Perm | None:
    if perm is None:
        return None
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


def normal(perm: Perm | None, ndim: int) -> Perm:
    """``perm`` with None spelled out as the identity of ``ndim`` axes."""
    return tuple(range(ndim)) if perm is None else perm


# canonical name -> spellings seen in paddle and torch (function names, Tensor methods, operators)
OP_EQUIVALENTS: dict[str, tuple[str, ...]] = {
    "matmul": ("matmul", "mm", "bmm", "__matmul__", "rmatmul", "__rmatmul__", "linalg_matmul"),
    "linear": ("linear", "addmm"),
    "add": ("add", "__add__", "radd", "__radd__", "add_"),
    "sub": ("sub", "subtract", "__sub__", "rsub", "__rsub__"),
    "mul": ("mul", "multiply", "__mul__", "rmul", "__rmul__", "scale"),
    "div": ("div", "divide", "true_divide", "truediv", "__truediv__", "rtruediv", "__rtruediv__"),
    "pow": ("pow", "__pow__", "square"),
    "neg": ("neg", "__neg__", "negative"),
    "exp": ("exp",),
    "log": ("log",),
    "sqrt": ("sqrt",),
    "rsqrt": ("rsqrt",),
    "logsumexp": ("logsumexp",),
    "softmax": ("softmax", "_softmax", "special_softmax"),
    "log_softmax": ("log_softmax",),
    "layer_norm": ("layer_norm",),
    "batch_norm": ("batch_norm",),
    "group_norm": ("group_norm",),
    "gelu": ("gelu",),
    "relu": ("relu",),
    "silu": ("silu", "swish"),
    "tanh": ("tanh",),
    "sigmoid": ("sigmoid",),
    "where": ("where",),
    "masked_fill": ("masked_fill",),
    "transpose": ("transpose", "permute", "T", "mT", "swapaxes", "t"),
    "reshape": ("reshape", "view", "flatten", "unflatten"),
    "squeeze": ("squeeze",),
    "unsqueeze": ("unsqueeze",),
    "concat": ("concat", "cat"),
    "stack": ("stack",),
    "split": ("split", "chunk"),
    "sum": ("sum",),
    "mean": ("mean",),
    "max": ("max", "amax"),
    "min": ("min", "amin"),
    "dropout": ("dropout",),
    "embedding": ("embedding",),
    "conv2d": ("conv2d",),
    "getitem": ("getitem", "__getitem__"),
    "cast": ("cast", "astype", "to", "float", "type"),
    "sdpa": ("scaled_dot_product_attention",),
}
