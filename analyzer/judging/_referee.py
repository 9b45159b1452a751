"""Rounding or bug: judge an A/B pair by its distance from a float64 referee run.

R is a float64 recording (``record --dtype float64 --inputs-from A --weights-from A``)
of A's model (or of B's: the side is read from R's framework); RB optionally one of
the other model. Each side is aligned with its referee by the same machinery as
A with B, and per record the RMS error against float64 is measured:
eA = rms(A - R), eB = rms(B - R or RB), e64 = rms(R - RB) (with RB only).

Decision table (k = ``RATIO``; floor = the noise estimate ``_noise`` of that side,
``NOISE_FACTOR`` * sigma; "far" = eX > k * max(e_other, floor_X)):

    e64 significant and explains A-B   -> model difference  (needs RB)
    neither side far                   -> rounding          (both within k x of each
                                                             other, or both under their floor)
    A far                              -> A deviates
    B far                              -> B deviates

"e64 significant and explains A-B": e64 > NOISE_FACTOR * max(sigma64, 1e-10 * scale)
- float64 runs of the same math agree to ~1e-13; the 1e-10 relative margin absorbs
constants that a framework rounds to float32 even in a float64 run - and e64 beyond the
fp32 noise floor of the pair, sqrt(floor_A**2 + floor_B**2) (a float32 constant in one
model's loss moves its float64 run by one ulp of the constant: invisible at fp32), and
e64 >= rms(A - B) / k (the float64 disagreement accounts for the fp32 difference) and
rms(A - B) > k * max(eA, eB) (the fp32 difference is beyond what rounding gives here).
The fp32 floor is an estimate and grows with depth; a float64 disagreement beyond
``F32_CONSTANT_REL`` (1e-6 relative) is significant below it: a float32 constant or table
inside a float64 run moves it by ~1e-7 at most, so this much is a difference in the math (an
epsilon outside a square root that a deep network's floor hides at fp32, and that grows into
the outputs later). A model difference smaller than that and under the floor is classified
rounding.

With both referees, a pair whose A and B agree far better (by ``RATIO``) than one of them agrees
with its float64 run is rounding: the fp32 runs share a path the float64 runs part on (an Adam
step driven by a gradient that is fp32 rounding noise and exactly zero in float64), which is
neither side's numerics.

With one referee of A's model, "B deviates" means: B is far from the float64 run of
A's model while A is close. That is a model difference or B's fp32 numerics being far
worse than A's (a lower-precision kernel, an unstable formula); only RB separates them:
if RB agrees with R the class stays "B deviates" (numerics), else "model difference".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from padiff_trace import Record
from padiff_trace.matching import Mapping, orient

from ..alignment._calls import TraceView
from ..alignment._computed import ComputedView
from ..alignment._pairing import align_views
from ..alignment._records import RecordLike, ReshapedView
from ._metrics import Tolerance, measure
from ._noise import NOISE_FACTOR, NoiseFloor

__all__ = ["CLASSES", "RATIO", "F32_CONSTANT_REL", "F64_REL_MARGIN", "Referee", "RefereeResult", "side_errors", "classify"]

RATIO = 8.0
F64_REL_MARGIN = 1e-10
# float64 runs farther apart than this (relative) differ in their math, whatever the fp32 floor:
# a float32 constant or table inside a float64 run moves it by ~1e-7 at most
F32_CONSTANT_REL = 1e-6
CLASSES = ("rounding", "A deviates", "B deviates", "model difference")
_TOL = Tolerance(0.0, 0.0, "rel-l2")
# the class of one pair ("class") and the numbers behind it (errors against float64, floors,
# the referee records' names)
RefereeResult = dict[str, float | str | None]


@dataclass(frozen=True)
class Referee:
    """Errors against float64 for one side: X record seq -> (referee record, rms(X - R))."""

    view: TraceView
    errors: dict[int, tuple[RecordLike, float]]


def _rms_diff(x: RecordLike, y: RecordLike, perm: tuple[int, ...] | None) -> float | None:
    """rms(x - y), ``perm`` permuting x's axes into y's layout; None when not comparable."""
    if not (x.is_tensor and y.is_tensor):
        return None
    if perm is not None and sorted(perm) != list(range(len(x.shape))):
        return None  # the float64 run recorded it in another rank than the fp32 pair's layout says
    shape_x = tuple(x.shape[k] for k in perm) if perm is not None else x.shape
    if shape_x != y.shape and (perm is not None or x.numel != y.numel):
        return None  # the same elements in another shape (tokens [B, H*W] against [B, H, W]) compare flattened
    if y.numel == 0:
        return 0.0
    m = measure(x, y, _TOL, perm)
    if m.stats_only:
        return None
    return m.rel_l2 * m.norm_b / math.sqrt(m.n) if m.norm_b > 0 else m.max_abs


def side_errors(vx: TraceView, vr: TraceView, mapping: Mapping | None = None) -> Referee:
    """Align trace X with its float64 referee and measure every paired record. ``mapping``
    applies only when X and its referee are of different frameworks; a run and the float64 run
    of the same model pair by their identical paths."""
    from ..alignment._plan import plan as _plan  # the same pairing as A with B
    from ..alignment._weights import trace_weight_map

    given = mapping if vx.framework != vr.framework else None
    sided = orient(given, vx.framework, vr.framework)
    x_first = not sided.reversed
    first, second = (vx, vr) if x_first else (vr, vx)
    if not x_first:  # pair in the order the mapping file names the two traces (as compare() pairs them)
        sided = orient(given, vr.framework, vx.framework)
    al = align_views(first, second, sided)
    wm = trace_weight_map(first, second, sided)
    errors: dict[int, tuple[RecordLike, float]] = {}
    for item in _plan(al, first, second, wm):
        d = _rms_diff(item.a, item.b, item.perm)
        if d is None:
            continue
        x, r = (item.a, item.b) if x_first else (item.b, item.a)
        errors[x.seq] = (r, d)
    return Referee(vr, errors)


def classify(
    a: RecordLike,
    b: RecordLike,
    perm: tuple[int, ...] | None,
    diff_ab: float,
    ref_a: Referee,
    ref_b: Referee,
    floor_a: NoiseFloor,
    floor_b: NoiseFloor,
    floor_64: tuple[NoiseFloor, NoiseFloor] | None,
    two_referees: bool,
) -> RefereeResult | None:
    """The class of one A/B pair and the numbers behind it; None when a referee lacks the record."""
    ea, eb = ref_a.errors.get(a.seq), ref_b.errors.get(b.seq)
    if ea is None or eb is None:
        return None
    (ra, err_a), (rb, err_b) = ea, eb
    fa = NOISE_FACTOR * floor_a.sigma(a)
    fb = NOISE_FACTOR * floor_b.sigma(b)
    scale = max(_rms(ra), _rms(rb))
    out: RefereeResult = {
        "err_a": err_a,
        "err_b": err_b,
        "rel_err_a": err_a / scale if scale > 0 else 0.0,
        "rel_err_b": err_b / scale if scale > 0 else 0.0,
        "floor_a": fa,
        "floor_b": fb,
        "err_64": None,
        "referee_a": ra.name,
        "referee_b": rb.name,
    }
    # a value one side computes from its records (exp of a log-space parameter, a weight-normed
    # weight) against the float64 runs' records as stored: the two float64 runs are not comparable
    computed = isinstance(a, ComputedView) != isinstance(ra, ComputedView) or isinstance(b, ComputedView) != isinstance(rb, ComputedView)
    if two_referees and floor_64 is not None and not computed:
        e64 = _rms_diff(_viewed_as(ra, a), _viewed_as(rb, b), perm)
        out["err_64"] = e64
        if e64 is None and diff_ab > RATIO * max(err_a, err_b, fa, fb):
            # the float64 runs cannot be compared as the pair is, and the sides differ far beyond
            # either's error against float64: no class, the pair keeps its own verdict
            return None
        if e64 is not None:
            beyond_rounding = diff_ab > RATIO * max(err_a, err_b)
            significant = e64 > _significance_64(ra, rb, scale, floor_64, fa, fb)
            if significant and e64 * RATIO >= diff_ab and beyond_rounding:
                out["class"] = "model difference"
                return out
    if computed and diff_ab > RATIO * max(err_a, err_b, fa, fb):
        # the errors were measured on the records the value is computed from (one part of inputs
        # joined, a parameter before its exp), not on the value compared, and the sides differ
        # far beyond them: the referee cannot call that rounding
        return None
    if two_referees and RATIO * diff_ab < max(err_a, err_b):
        # the two fp32 runs agree far better than either agrees with float64: they take one path
        # the float64 runs part on (Adam steps driven by a gradient that is rounding noise in
        # fp32 and zero in float64); neither side's numerics are its own
        out["class"] = "rounding"
    elif err_a > RATIO * max(err_b, fa):
        out["class"] = "A deviates"
    elif err_b > RATIO * max(err_a, fb):
        out["class"] = "B deviates"
    else:
        out["class"] = "rounding"
    return out


def _viewed_as(r: RecordLike, pair_side: RecordLike) -> RecordLike:
    """A float64 run's record seen as the pair's record is (a value read in the layout of the
    call around it, ``ReshapedView``), so that the pair's permutation applies to it."""
    if isinstance(pair_side, ReshapedView) and isinstance(r, Record) and r.numel == pair_side.numel:
        return ReshapedView(r, tuple(pair_side.shape))
    return r


def _significance_64(
    ra: RecordLike, rb: RecordLike, scale: float, floor_64: tuple[NoiseFloor, NoiseFloor], fa: float, fb: float
) -> float:
    """How far apart the two float64 runs must be for a model difference: beyond their own
    rounding (and the ``F64_REL_MARGIN`` of float32 constants), and beyond the fp32 noise floor
    of the pair (``fa``, ``fb``: NOISE_FACTOR x sigma of A and B) or ``F32_CONSTANT_REL`` of
    the values, whichever is less - a disagreement of the float64 runs that fp32 rounding would
    hide and a float32 constant can make (one ulp of a constant in one model's loss) is rounding
    at the precision compared."""
    s64 = max(floor_64[0].sigma(ra), floor_64[1].sigma(rb), F64_REL_MARGIN * scale)
    return max(NOISE_FACTOR * s64, min(math.hypot(fa, fb), F32_CONSTANT_REL * scale))


def _rms(r: RecordLike) -> float:
    if not r.is_tensor or r.numel == 0:
        return 0.0
    l2 = r.stats.get("l2", math.nan)
    return l2 / math.sqrt(r.numel) if math.isfinite(l2) else 0.0
