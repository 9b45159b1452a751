"""Op-level pairing: framework calls recorded inside paired module calls (``record --ops``).

Ops of a module call pair with the other side's ops of the paired call on equivalent op
names (the table below, extensible from a mapping file's ``ops`` section): first by
dataflow (ops reading the same tensors, in any order), then the rest by the same global
sequence alignment as module calls, preferring equal output shapes - so an extra
``reshape`` on one side shifts nothing.

Operands are paired by meaning, not by position (``_opsig``: which argument is which
operand, transposes folded in by a flag, framework axis orders), and by where they come
from: every operand is traced to the record that produced it - an input of the
enclosing call, an output of a call inside it, a weight, or an earlier op's output
(records of one tensor carry identical statistics), looking through transposes.
Two operands are compared only when they mean the same tensor: produced by paired
records and equally transposed, or both made by code that was not recorded. Ops
whose operands come from producers paired with *other* producers (a scale applied to
k on one side and to q on the other) do not pair at all.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from padiff_trace import Kind, Record, Trace
from padiff_trace.matching import align

from ._item import PlanItem
from ._opsig import OP_EQUIVALENTS, Perm, compose, inverse, layout_op_perm, layout_perm, normal, signature
from ._pairing import CallPair, pair_leaves
from ._records import stats_identity

__all__ = [
    "OP_EQUIVALENTS",
    "Links",
    "OpCall",
    "Operand",
    "Producers",
    "canonical_op",
    "collect_ops",
    "op_todo",
    "operands",
    "pair_ops",
    "PRODUCER_ROLES",
    "index_records",
]

_CANON = {alias: canon for canon, names in OP_EQUIVALENTS.items() for alias in names}
logger = logging.getLogger(__name__)
_MAX_WALK = 8  # transposes looked through from an operand to its producer
PRODUCER_ROLES = ("model_input", "input", "output", "param", "buffer")


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
    inputs: list[Record] = field(default_factory=list)  # tensor arguments
    outputs: list[Record] = field(default_factory=list)
    grads: dict[str, Record] = field(default_factory=dict)  # output position -> OP_GRAD_OUTPUT
    scalars: list[Record] = field(default_factory=list)  # python scalar arguments (flags, axes)
    framework: str = ""


def collect_ops(trace: Trace) -> dict[int, list[OpCall]]:
    """Ops by the id of their enclosing module call, in execution order."""
    t = trace.table
    framework = str(trace.meta.get("framework", ""))
    kinds = (int(Kind.OP_INPUT), int(Kind.OP_OUTPUT), int(Kind.OP_GRAD_OUTPUT))
    rows = np.flatnonzero(np.isin(t["kind"], kinds))
    by_call: dict[int, OpCall] = {}
    by_parent: dict[int, list[OpCall]] = defaultdict(list)
    for i in rows:
        rec = trace[int(t["seq"][i])]
        op = by_call.get(rec.call)
        if op is None:
            op = by_call[rec.call] = OpCall(rec.call, rec.module_type, rec.module, framework=framework)
            by_parent[rec.parent].append(op)
        if rec.kind == Kind.OP_INPUT:
            (op.scalars if rec.device == "python" else op.inputs).append(rec)
        elif rec.kind == Kind.OP_OUTPUT:
            op.outputs.append(rec)
        else:
            op.grads[rec.position] = rec
    return dict(by_parent)


# ---------------------------------------------------------------- where operands come from
def _fingerprint(r: Record) -> tuple[Any, ...] | None:
    """Records of one tensor (an op's output and the next op's input) have equal fingerprints;
    None for a constant tensor (zeros, a scalar), which many unrelated records share."""
    stats = r.stats
    if stats.get("min") == stats.get("max"):
        return None
    return (r.dtype, r.shape, stats_identity(stats))


_Index = dict[tuple[Any, ...], list[Record]]


def index_records(records: Iterable[Record]) -> _Index:
    """Tensor records by fingerprint, each list in record order."""
    by_fp: _Index = defaultdict(list)
    for r in sorted(records, key=lambda r: r.seq):
        fp = _fingerprint(r) if r.is_tensor and r.device != "python" else None
        if fp is not None:
            by_fp[fp].append(r)
    return by_fp


class Producers:
    """The records an op of one module call can take its operands from, and how to trace an
    operand back to them: inputs of the call, outputs of the calls inside it, the outputs of
    the ops before it, and weights (``shared``: indexed once per trace)."""

    def __init__(self, records: Iterable[Record], ops: list[OpCall], shared: _Index | None = None) -> None:
        self._indexes = (index_records((*records, *(o for op in ops for o in op.outputs))), shared or {})
        self._op_of = {o.seq: op for op in ops for o in op.outputs}

    def source(self, r: Record) -> Record | None:
        """The latest producer recorded before ``r`` holding the same tensor; None: made by
        code that was not recorded."""
        best: Record | None = None
        fp = _fingerprint(r)
        if fp is None:
            return None
        for index in self._indexes:
            for p in index.get(fp, ()):
                if p.seq >= r.seq:
                    break
                if best is None or p.seq > best.seq:
                    best = p
        return best

    def resolve(self, r: Record) -> tuple[Record | None, Perm | None]:
        """``r``'s producer, looking through transposes, and the permutation they applied
        (``r`` = producer.transpose(perm))."""
        node, walk = self.source(r), None
        for _ in range(_MAX_WALK):
            op = self._op_of.get(node.seq) if node is not None else None
            perm = _layout_perm(op) if op is not None else None
            inner = self.source(op.inputs[0]) if perm is not None and op is not None else None
            if inner is None:
                break
            node, walk = inner, compose(perm, walk)
        return node, walk


def _layout_perm(op: OpCall) -> Perm | None:
    """The axis permutation a transpose-like op applied, from its recorded scalars."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        return None
    ints = [int(s.stats.get("max", math.nan)) for s in op.scalars if math.isfinite(s.stats.get("max", math.nan))]
    return layout_op_perm(op.name, op.framework, ints, len(op.inputs[0].shape))


# ---------------------------------------------------------------- what operands mean
@dataclass(frozen=True)
class Operand:
    """One tensor argument of an op, by meaning."""

    record: Record
    role: str  # which operand (``a``/``b`` of a matmul; the argument position without a signature)
    canon: Perm | None  # recorded -> canonical operand (framework layout, transpose flags)
    source: Record | None  # the record that produced it (None: code that was not recorded)
    walk: Perm | None  # recorded = source.transpose(walk)


def _flag(r: Record) -> bool:
    v = r.stats.get("max", 0.0)
    return bool(v) and math.isfinite(v)


def operands(op: OpCall, producers: Producers | None) -> dict[str, Operand]:
    """The tensor operands of ``op`` by role; operands whose layout code does not fit are left out."""
    sig = signature(op.name, op.framework)
    flips = set()
    for s in op.scalars:
        p = sig.param(s.position)[0] if sig is not None else None
        if p is not None and p.flips and _flag(s):
            flips.add(p.flips)
    out: dict[str, Operand] = {}
    for r in op.inputs:
        p, tail = sig.param(r.position) if sig is not None else (None, "")
        role = (p.role or p.name) + tail if p is not None else r.position
        try:
            canon = layout_perm(p.layout if p is not None else None, len(r.shape))
            if p is not None and p.role in flips and not tail:
                canon = compose(canon, layout_perm("T", len(r.shape)))
        except ValueError:
            continue
        source, walk = producers.resolve(r) if producers is not None else (None, None)
        out[role] = Operand(r, role, canon, source, walk)
    return out


def _out_perm(op: OpCall, r: Record) -> Perm | None:
    """Recorded -> canonical permutation of an op output (None when the signature has none or it does not fit)."""
    sig = signature(op.name, op.framework)
    try:
        return layout_perm(sig.out_layout, len(r.shape)) if sig is not None else None
    except ValueError:
        return None


def _apply(shape: tuple[int, ...], perm: Perm | None) -> tuple[int, ...]:
    return tuple(shape[k] for k in perm) if perm is not None else shape


def _shape(op: OpCall) -> tuple[int, ...] | None:
    """The first tensor output's shape in the canonical layout."""
    outs = [r for r in op.outputs if r.is_tensor]
    return _apply(outs[0].shape, _out_perm(op, outs[0])) if outs else None


# ---------------------------------------------------------------- pairing
class Links:
    """Which producer records of A pair with which of B (module leaves, weights, and the op
    outputs learnt while pairing ops), and the operands of both sides' ops."""

    def __init__(self, base: Mapping[int, tuple[int, Perm | None]], ops_a: list[OpCall], ops_b: list[OpCall],
                 producers: tuple[Producers | None, Producers | None]) -> None:
        self.pairs = dict(base)
        self._back = {b: a for a, (b, _) in base.items()}
        self.operands_a = {op.call: operands(op, producers[0]) for op in ops_a}
        self.operands_b = {op.call: operands(op, producers[1]) for op in ops_b}

    def learn(self, oa: OpCall, ob: OpCall) -> None:
        """The outputs of two paired ops are paired producers from now on."""
        for x, y, p in output_pairs(oa, ob):
            if x.seq not in self.pairs and y.seq not in self._back:
                self.pairs[x.seq] = (y.seq, p)
                self._back[y.seq] = x.seq

    def _crossed(self, x: Operand, y: Operand) -> bool:
        """Both operands come from paired producers, but not paired with each other."""
        if x.source is None or y.source is None:
            return False
        partner = self.pairs.get(x.source.seq)
        return partner is not None and y.source.seq in self._back and partner[0] != y.source.seq

    def support(self, oa: OpCall, ob: OpCall) -> int:
        """How many operands of the two ops are the same tensor by their producers; -1 when
        one pair is crossed (k on one side, q on the other). A producer paired with nothing
        (a scale applied on one side only) neither supports nor refutes the pair."""
        ops_b = self.operands_b[ob.call]
        n = 0
        for role, x in self.operands_a[oa.call].items():
            y = ops_b.get(role)
            if y is None or x.source is None or y.source is None:
                continue
            if self._crossed(x, y):
                return -1
            n += self.same_tensor(x, y)[0]
        return n

    def same_tensor(self, x: Operand, y: Operand) -> tuple[bool, Perm | None]:
        """Whether two operands mean the same tensor, and the permutation of A's recorded operand
        into B's; both made by unrecorded code counts as the same (their roles say so)."""
        if (x.source is None) != (y.source is None):
            return False, None
        ndim = len(x.record.shape)
        perm = compose(x.canon, inverse(y.canon))
        if _apply(x.record.shape, perm) != y.record.shape:
            return False, None
        if x.source is not None and y.source is not None:
            pair = self.pairs.get(x.source.seq)
            if pair is None or pair[0] != y.source.seq:
                return False, None
            lhs = compose(x.walk, x.canon)
            rhs = compose(pair[1], compose(y.walk, y.canon))
            if any(p is not None and len(p) != ndim for p in (lhs, rhs)) or normal(lhs, ndim) != normal(rhs, ndim):
                return False, None
        return True, perm if perm is not None and perm != tuple(range(ndim)) else None


def _scores(ops_a: list[OpCall], ops_b: list[OpCall], extra: Mapping[str, str] | None) -> np.ndarray:
    """Equivalent names are required; equal (canonical) first-output shapes are preferred, a
    same-size different layout pairs only where nothing better fits."""
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
    return score


def pair_ops(
    ops_a: list[OpCall], ops_b: list[OpCall], extra: Mapping[str, str] | None = None, links: Links | None = None
) -> list[tuple[OpCall, OpCall]]:
    """Pair two op sequences. Without ``links``: aligned in order (``_scores``). With ``links``:
    first by dataflow - in A's order, each op takes the first free equivalent op of B that
    reads the same tensors (``Links.support``), so independent ops may run in another order
    (paddle reshapes q, k, v then transposes them; torch reshapes and transposes each) - then
    the ops left are aligned in order, never where their operands are crossed."""
    if not ops_a or not ops_b:
        return []
    score = _scores(ops_a, ops_b, extra)
    if links is None:
        return [(ops_a[i], ops_b[j]) for i, j in align(score)]
    found = _pair_by_dataflow(ops_a, ops_b, score, links)
    done_a, done_b = {i for i, _ in found}, {j for _, j in found}
    rest_a = [i for i in range(len(ops_a)) if i not in done_a]
    rest_b = [j for j in range(len(ops_b)) if j not in done_b]
    sub = score[np.ix_(rest_a, rest_b)] if rest_a and rest_b else np.zeros((0, 0))
    for i, j in zip(*np.nonzero(sub)):
        if links.support(ops_a[rest_a[i]], ops_b[rest_b[j]]) < 0:
            sub[i, j] = 0.0
    for i, j in align(sub) if sub.size else []:
        found.append((rest_a[i], rest_b[j]))
        links.learn(ops_a[rest_a[i]], ops_b[rest_b[j]])
    return [(ops_a[i], ops_b[j]) for i, j in sorted(found)]


def _pair_by_dataflow(ops_a: list[OpCall], ops_b: list[OpCall], score: np.ndarray, links: Links) -> list[tuple[int, int]]:
    """Pairs of ops (indices) that read the same tensors, greedily in A's order; each pair's
    outputs are learnt at once, so the ops reading them pair next."""
    found: list[tuple[int, int]] = []
    used: set[int] = set()
    for i, oa in enumerate(ops_a):
        best: tuple[tuple[int, float], int] | None = None
        for j in np.flatnonzero(score[i]):
            if int(j) in used:
                continue
            key = (links.support(oa, ops_b[j]), float(score[i, j]))
            if key[0] > 0 and (best is None or key > best[0]):
                best = (key, int(j))
        if best is not None:
            found.append((i, best[1]))
            used.add(best[1])
            links.learn(oa, ops_b[best[1]])
    return found


def output_pairs(oa: OpCall, ob: OpCall) -> list[tuple[Record, Record, Perm | None]]:
    """Output leaves of two paired ops, with the permutation between the frameworks' layouts."""
    out = []
    for x, y, given in pair_leaves(oa.outputs, ob.outputs)[0]:
        perm = compose(_out_perm(oa, x), inverse(_out_perm(ob, y)))
        moved = perm is not None and _apply(x.shape, perm) == y.shape and perm != tuple(range(len(x.shape)))
        out.append((x, y, perm if moved else given))
    return out


def op_todo(
    ops_a: list[OpCall],
    ops_b: list[OpCall],
    call_pair: CallPair | None,
    extra: Mapping[str, str] | None = None,
    links: Links | None = None,
) -> list[PlanItem]:
    """Comparison items (role, A record, B record, permutation, enclosing call pair) for paired ops;
    ``extra`` (a mapping file's ``ops`` section) adds op-name equivalences. Operands are compared
    where they mean the same tensor (``Links.same_tensor``; without ``links``: by role and shape)."""
    links = links if links is not None else Links({}, ops_a, ops_b, (None, None))
    out: list[PlanItem] = []
    for oa, ob in pair_ops(ops_a, ops_b, extra, links):
        ins_b = links.operands_b[ob.call]
        for role, x in links.operands_a[oa.call].items():
            y = ins_b.get(role)
            same, perm = links.same_tensor(x, y) if y is not None else (False, None)
            if same and y is not None:
                out.append(PlanItem("op_input", x.record, y.record, perm, call_pair))
            elif y is not None:
                logger.debug("%s / %s: operand %s not compared (other tensors)", x.record.name, y.record.name, role)
        for xo, yo, p in output_pairs(oa, ob):
            out.append(PlanItem("op_output", xo, yo, p, call_pair))
            gx, gy = oa.grads.get(xo.position), ob.grads.get(yo.position)
            if gx is not None and gy is not None:
                out.append(PlanItem("op_grad_output", gx, gy, p, call_pair))
    return out

