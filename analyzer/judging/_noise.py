"""The rounding noise floor of a trace, estimated from what the trace carries.

For every record of one trace: ``sigma``, the expected RMS (per element) of the
rounding error that a run in the record's dtype carries at that point, compared
with exact arithmetic. Two independent runs (paddle, torch) then differ by about
``sqrt(sigma_a**2 + sigma_b**2)``; a pair is *within the noise floor* when its RMS
difference is at most ``NOISE_FACTOR`` times that.

    u        = eps(dtype) / 2                           unit roundoff (fp32: 6.0e-8)
    local(c) = u * (1 + sqrt(K(c)))                     one leaf module call, relative
    rel(r)   = sqrt(sum of local(c)**2 over the leaf calls finished before r)
    sigma(r) = rel(r) * scale(r)

``K`` is the reduction length of the op producing an output: Linear the input's last
dimension, ConvNd in_channels/groups * kernel size (from the weight shape), norms the
normalized size, Softmax the last dimension, MultiHeadAttention 2*embed + key length,
elementwise layers 0; a user-defined leaf the input's last dimension. Containers add
nothing themselves: their output carries what their children accumulated. Errors of
successive ops add in quadrature (independent, gain ~1 per op), which is how error
grows with depth. Gradients accumulate the forward total plus the backward of the ops
after them. ``scale`` is the RMS of the record itself, except for gradients: a
gradient is noise relative to the gradient that flows *into* it, so its scale is at
least the step's largest output-gradient RMS (the loss seed); a parameter gradient's
at least that times the RMS of the module's input and sqrt(rows summed over); a
loss's scale is at least the RMS of the model output it reduces.

Limits: functional code between recorded modules is invisible (its ops add no
noise here); amplification by ill-conditioned ops (cancellation, large pretrained
weights, softmax over large logits) is not modelled, so a deep fp32 model can drift
past this floor by rounding alone - the float64 referee (``_referee``) measures
instead of estimating. Gradients that legitimately vanish to ~1e-6 of the loss seed
are judged as noise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from padiff_trace import Kind, Record, Trace
from padiff_trace.matching import canonical_type

from ..alignment._calls import Call, TraceView
from ..alignment._records import RecordLike

__all__ = ["NOISE_FACTOR", "UNIT_ROUNDOFF", "NoiseFloor", "noise_floor", "noise_ratio", "pair_noise"]

NOISE_FACTOR = 4.0
UNIT_ROUNDOFF = {
    "float64": 2.0**-53,
    "complex128": 2.0**-53,
    "float32": 2.0**-24,
    "complex64": 2.0**-24,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
}
_ELEMENTWISE = {
    "relu", "gelu", "silu", "sigmoid", "tanh", "dropout", "identity", "leakyrelu", "elu", "hardswish",
    "hardsigmoid", "mish", "softplus", "embedding", "flatten", "prelu", "relu6", "selu", "celu", "swish",
}
_NORMS = {"layernorm", "rmsnorm", "groupnorm", "batchnorm", "batchnorm1d", "batchnorm2d", "batchnorm3d",
          "instancenorm1d", "instancenorm2d", "instancenorm3d", "localresponsenorm"}


def unit_roundoff(dtype: str) -> float:
    """u of a dtype; 0 for exact (integer, bool, python) values."""
    return UNIT_ROUNDOFF.get(dtype, 0.0)


def _rms(r: RecordLike) -> float:
    if not r.is_tensor or r.numel == 0:
        return 0.0
    l2 = r.stats.get("l2", math.nan)
    return l2 / math.sqrt(r.numel) if math.isfinite(l2) else 0.0


class NoiseFloor:
    """Per record of one trace: relative accumulated error and the scale it applies to, as
    two float64 columns by row (NaN: not estimated; 16 bytes a record, where dicts by
    sequence number took ~100)."""

    def __init__(self, trace: Trace, rel: np.ndarray, scale: np.ndarray) -> None:
        self.trace, self._rel, self._scale = trace, rel, scale

    def _row(self, seq: int) -> int | None:
        row_of = getattr(self.trace, "row_of", None)
        return row_of(seq) if row_of is not None else None

    def relative(self, seq: int) -> float | None:
        """The relative error estimated for record ``seq`` (None: none estimated)."""
        i = self._row(seq)
        v = float(self._rel[i]) if i is not None else math.nan
        return None if math.isnan(v) else v

    def sigma(self, r: RecordLike) -> float:
        i = self._row(r.seq)
        rel = float(self._rel[i]) if i is not None else math.nan
        scale = float(self._scale[i]) if i is not None else math.nan
        return (unit_roundoff(r.dtype) if math.isnan(rel) else rel) * (_rms(r) if math.isnan(scale) else scale)


def _reduction(c: Call, weights: Mapping[tuple[str, str], Record]) -> int:
    t = canonical_type(c.module_type)
    ins = c.tensor_inputs()
    last_in = ins[0].shape[-1] if ins and ins[0].shape else 1
    outs = c.tensor_outputs()
    last_out = outs[0].shape[-1] if outs and outs[0].shape else 1
    w = weights.get((c.module, "weight"))
    if t == "linear" or t.endswith("linear"):
        return int(last_in)
    if t.startswith("conv"):
        if w is not None and len(w.shape) >= 2:
            return int(np.prod(w.shape[1:]))
        return int(last_in)
    if t in _NORMS:
        if w is not None and w.shape:
            return int(np.prod(w.shape)) if t == "layernorm" else int(last_out)
        return int(last_out)
    if t in ("softmax", "logsoftmax"):
        return int(last_out)
    if t == "multiheadattention":
        keys = ins[1].shape[-2] if len(ins) > 1 and len(ins[1].shape) >= 2 else (ins[0].shape[-2] if ins and len(ins[0].shape) >= 2 else 1)
        return int(2 * last_out + keys)
    if t in _ELEMENTWISE:
        return 0
    return int(last_in)


def noise_floor(view: TraceView, half_as: str | None = None) -> NoiseFloor:
    """Estimate ``rel`` and ``scale`` for every record of ``view`` (all steps). ``half_as``: the
    dtype whose rounding bfloat16/float16 records are expected to have (half precision nobody
    declared, judged at float32: ``_precision.half_undeclared``)."""

    def u_of(dtype: str) -> float:  # ``unit_roundoff``, half precision taken as ``half_as``
        return unit_roundoff(half_as if half_as and dtype in ("bfloat16", "float16") else dtype)

    rel = np.full(len(view.trace), math.nan)
    scale = np.full(len(view.trace), math.nan)
    for step, calls in view.calls.items():
        has_child = {c.parent for c in calls}
        weights = view.weights.get(step) or view.weights.get(min(view.weights, default=0), {})
        run2 = 0.0
        entry2 = np.zeros(len(calls))  # by position in ``calls``: 8 bytes a call (dicts by id took ~100)
        exit2 = np.zeros(len(calls))
        open_: list[int] = []
        for i, c in enumerate(calls):  # entry order; a call is closed when the next call is not inside it
            while open_ and not _inside(view, c, calls[open_[-1]]):
                exit2[open_.pop()] = run2
            entry2[i] = run2
            if c.id not in has_child:
                u = max((u_of(r.dtype) for r in c.tensor_outputs()), default=0.0)
                run2 += (u * (1.0 + math.sqrt(_reduction(c, weights)))) ** 2
                exit2[i] = run2
            else:
                open_.append(i)
        while open_:
            exit2[open_.pop()] = run2
        total2 = run2
        seed = 0.0
        if len(view.grads_out):
            in_step = {c.id for c in calls}
            seed = max((_rms(view.grads_out[k]) for k in view.grads_out if k[0] in in_step), default=0.0)
        for i, c in enumerate(calls):
            ins, outs = c.inputs, c.outputs
            enter, leave = float(entry2[i]), float(exit2[i])
            for r in ins:
                u = u_of(r.dtype)
                rel[r.row] = max(math.sqrt(enter), u)
            for r in outs:
                rel[r.row] = max(math.sqrt(leave), u_of(r.dtype))
            for r in outs:
                g = view.grads_out.get((c.id, r.position))
                if g is not None:
                    rel[g.row] = max(math.sqrt(total2 + total2 - leave), u_of(g.dtype))
                    scale[g.row] = max(_rms(g), seed)
            for r in ins:
                g = view.grads_in.get((c.id, r.position))
                if g is not None:
                    rel[g.row] = max(math.sqrt(total2 + total2 - enter), u_of(g.dtype))
                    scale[g.row] = max(_rms(g), seed)
        pgrads = view.param_grads.get(step, {})
        wanted = {mod for mod, _ in pgrads}  # only modules with parameter gradients: a record each
        first_in = {}
        for c in reversed(calls):
            if c.module in wanted:
                ins = c.tensor_inputs()
                if ins:
                    first_in[c.module] = ins[0]
        for (mod, _), r in pgrads.items():
            rel[r.row] = max(math.sqrt(2.0 * total2), u_of(r.dtype))
            x = first_in.get(mod)
            s = seed
            if x is not None and x.shape:
                rows = max(x.numel // max(x.shape[-1], 1), 1)
                s = seed * _rms(x) * math.sqrt(rows)
            scale[r.row] = max(_rms(r), s)
        for r in view.losses.get(step, []):
            root = next((c for c in calls if c.parent == -1), None)
            n = sum(o.numel for o in root.tensor_outputs()) if root is not None else 1
            u = u_of(r.dtype)
            rel[r.row] = math.sqrt(total2 + (u * (1 + math.sqrt(n))) ** 2)
            # a loss near 0 (mean of a LayerNorm output) is noise relative to what it averages
            scale[r.row] = max(_rms(r), max((_rms(o) for o in root.tensor_outputs()), default=0.0) if root else 0.0)
    return NoiseFloor(view.trace, rel, scale)


def _inside(view: TraceView, c: Call, anc: Call) -> bool:
    return any(p is anc for p in view.ancestors(c))  # cycle-safe walk up the parent links


def noise_ratio(diff_rms: float, expected: float) -> float:
    """How many times the expected RMS difference a measured one is."""
    return diff_rms / expected if expected > 0 else (0.0 if diff_rms == 0 else math.inf)


def pair_noise(a: RecordLike, b: RecordLike, fa: NoiseFloor, fb: NoiseFloor, diff_rms: float) -> dict[str, float | bool]:
    """The noise verdict of one A/B pair: expected RMS difference and whether ``diff_rms`` is within it."""
    if a.kind in (Kind.PARAM, Kind.BUFFER, Kind.MODEL_INPUT) and diff_rms == 0.0:
        expected = 0.0
    else:
        expected = math.hypot(fa.sigma(a), fb.sigma(b))
    return {
        "expected_rms": expected,
        "diff_rms": diff_rms,
        "ratio": noise_ratio(diff_rms, expected),
        "within": diff_rms <= NOISE_FACTOR * expected,
    }
