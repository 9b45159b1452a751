"""Op-level pairing: framework calls recorded inside paired module calls (``record --ops``).

Ops of a module call are aligned with the other side's ops of the paired call by
the same global sequence alignment as module calls, on equivalent op names (the
table below, extensible from a mapping file's ``ops`` section) and equal output
shapes - so an extra ``reshape`` on one side shifts nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from padiff_trace import Kind, Record, Trace
from padiff_trace._match import align

from ._pairing import pair_leaves

__all__ = ["OP_EQUIVALENTS", "OpCall", "canonical_op", "collect_ops", "pair_ops"]

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

_CANON = {alias: canon for canon, names in OP_EQUIVALENTS.items() for alias in names}


def canonical_op(name: str, extra: Mapping[str, str] | None = None) -> str:
    """Framework-neutral op name (``__matmul__``/``bmm``/``mm`` -> ``matmul``); ``extra`` maps
    further names to a name of the table (or to each other)."""
    if extra and name in extra:
        name = extra[name]
    return _CANON.get(name, name.strip("_").lower())


@dataclass(eq=False)
class OpCall:
    """One recorded op: its records, grouped."""

    call: int
    name: str
    module: str
    inputs: list[Record] = field(default_factory=list)
    outputs: list[Record] = field(default_factory=list)
    grads: dict[str, Record] = field(default_factory=dict)  # output position -> OP_GRAD_OUTPUT


def collect_ops(trace: Trace) -> dict[int, list[OpCall]]:
    """Ops by the id of their enclosing module call, in execution order."""
    t = trace.table
    kinds = (int(Kind.OP_INPUT), int(Kind.OP_OUTPUT), int(Kind.OP_GRAD_OUTPUT))
    rows = np.flatnonzero(np.isin(t["kind"], kinds))
    by_call: dict[int, OpCall] = {}
    by_parent: dict[int, list[OpCall]] = defaultdict(list)
    for i in rows:
        rec = trace[int(t["seq"][i])]
        op = by_call.get(rec.call)
        if op is None:
            op = by_call[rec.call] = OpCall(rec.call, rec.module_type, rec.module)
            by_parent[rec.parent].append(op)
        if rec.kind == Kind.OP_INPUT:
            op.inputs.append(rec)
        elif rec.kind == Kind.OP_OUTPUT:
            op.outputs.append(rec)
        else:
            op.grads[rec.position] = rec
    return dict(by_parent)


def _shape(op: OpCall) -> tuple[int, ...] | None:
    outs = [r for r in op.outputs if r.is_tensor]
    return outs[0].shape if outs else None


def pair_ops(ops_a: list[OpCall], ops_b: list[OpCall], extra: Mapping[str, str] | None = None) -> list[tuple[OpCall, OpCall]]:
    """Align two op sequences: equivalent names are required; equal first-output shapes are
    preferred, a same-size different layout pairs only where nothing better fits."""
    if not ops_a or not ops_b:
        return []
    score = np.zeros((len(ops_a), len(ops_b)))
    names_b = [canonical_op(o.name, extra) for o in ops_b]
    shapes_b = [_shape(o) for o in ops_b]
    for i, oa in enumerate(ops_a):
        ca, sa = canonical_op(oa.name, extra), _shape(oa)
        for j in range(len(ops_b)):
            sb = shapes_b[j]
            if names_b[j] != ca or sa is None or sb is None:
                continue
            if sb == sa:
                score[i, j] = 2.0 + (1.0 if oa.name == ops_b[j].name else 0.0)
            elif len(sb) == len(sa) and int(np.prod(sb)) == int(np.prod(sa)):
                score[i, j] = 0.5  # same op, same size, other layout: paired, reported as a shape mismatch
    return [(ops_a[i], ops_b[j]) for i, j in align(score)]


def op_todo(
    ops_a: list[OpCall], ops_b: list[OpCall], call_pair: object, extra: Mapping[str, str] | None = None
) -> list[tuple[str, Record, Record, tuple[int, ...] | None, object]]:
    """Comparison items (role, A record, B record, permutation, enclosing call pair) for paired ops;
    ``extra`` (a mapping file's ``ops`` section) adds op-name equivalences."""
    out: list[tuple[str, Record, Record, tuple[int, ...] | None, object]] = []
    for oa, ob in pair_ops(ops_a, ops_b, extra):
        ins, _, _ = pair_leaves(oa.inputs, ob.inputs)
        outs, _, _ = pair_leaves(oa.outputs, ob.outputs)
        # operand layouts legitimately differ between frameworks' op conventions
        # (paddle matmul(x, y, transpose_y=True) vs torch x @ y.T): compare equal shapes only
        out += [("op_input", x, y, p, call_pair) for x, y, p in ins if x.shape == y.shape]
        for x, y, p in outs:
            out.append(("op_output", x, y, p, call_pair))
            gx, gy = oa.grads.get(x.position), ob.grads.get(y.position)
            if gx is not None and gy is not None:
                out.append(("op_grad_output", gx, gy, p, call_pair))
    return out
