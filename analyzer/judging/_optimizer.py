"""The optimizers of two traces, compared: settings per parameter through the weight map,
learning rate and clipping per step, and the algorithms' own conventions.

A recorder stores the optimizer in the trace metadata (``meta["optimizer"]``: type, and per
parameter group its hyperparameters in one vocabulary, its parameters and those it decays)
and, per step, ``Kind.OPTIMIZER`` records (``lr/<group>``, ``clip:<how>/<setting>``, ``passes/forward``). This
module turns the two into differences a person can act on: "AdamW eps 1e-08 vs 1e-06 (8
tensors)", "weight decay on 3 tensors in A and 8 in B (B also: biases, norm scales)",
"learning rate at step 1: 0.01 vs 0.005".
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from padiff_trace import Kind
from padiff_trace.matching import OPTIMIZER_CONVENTIONS, OPTIMIZER_LR_FACTORS, WeightMap

if TYPE_CHECKING:
    from ..alignment._calls import TraceView

__all__ = ["OptimizerDiff", "lr_by_param", "optimizer_diff", "per_param", "step_values"]

_HYPER_LABEL = {"eps": "epsilon", "beta1": "beta1", "beta2": "beta2", "weight_decay": "weight decay", "momentum": "momentum",
                "nesterov": "nesterov", "amsgrad": "amsgrad", "rho": "rho (squared-gradient decay)",
                "centered": "centered", "dampening": "dampening", "initial_accumulator": "initial accumulator",
                "lr_decay": "lr decay", "decoupled": "decoupled weight decay", "maximize": "maximize",
                "l1_decay": "L1 decay"}
_DEFAULTS = {"momentum": 0.0, "nesterov": False, "amsgrad": False, "dampening": 0.0, "centered": False,
             "weight_decay": 0.0, "initial_accumulator": 0.0, "lr_decay": 0.0, "maximize": False, "l1_decay": 0.0}


@dataclass
class OptimizerDiff:
    """What differs between the two optimizers (empty lists: nothing known differs)."""

    a: dict[str, Any] | None
    b: dict[str, Any] | None
    settings: list[dict[str, Any]] = field(default_factory=list)  # {"what", "a", "b", "tensors", "text"}
    per_step: list[dict[str, Any]] = field(default_factory=list)  # {"step", "what", "a", "b", "text"}
    convention: str | None = None  # the algorithms differ by definition (same settings, other formula)
    notes: list[str] = field(default_factory=list)  # settings that differ yet give the same updates

    @property
    def any(self) -> bool:
        return bool(self.settings or self.per_step)

    def first_step(self) -> int | None:
        return min((d["step"] for d in self.per_step), default=None)

    def texts(self, step: int | None = None) -> list[str]:
        """Static differences, then per-step ones (of ``step`` when given, else the first of each)."""
        out = [d["text"] for d in self.settings]
        seen: set[str] = set()
        for d in self.per_step:
            if (step is None or d["step"] <= step) and d["what"] not in seen:
                seen.add(d["what"])
                out.append(d["text"])
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"a": _brief(self.a), "b": _brief(self.b), "settings": self.settings, "per_step": self.per_step,
                "convention": self.convention, "notes": self.notes}


def _brief(d: dict[str, Any] | None) -> dict[str, Any] | None:
    if d is None:
        return None
    return {"class": d.get("class"), "type": d.get("type"), "scheduler": d.get("scheduler"),
            "groups": [{"hyper": g.get("hyper", {}), "params": len(g.get("params", [])), "decay": len(g.get("decay", []))}
                       for g in d.get("groups", [])]}


def step_values(view: TraceView) -> dict[int, dict[str, float]]:
    """step -> {lr/<group> or clip:<how>/<setting>: value} from the trace's OPTIMIZER records."""
    out: dict[int, dict[str, float]] = defaultdict(dict)
    for r in view.trace.select(kind=Kind.OPTIMIZER):
        try:
            out[r.step][r.position] = float(np.asarray(r.read()).reshape(-1)[0])
        except (ValueError, IndexError, TypeError, OSError):
            continue
    return dict(out)


def per_param(opt: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """parameter name -> its settings (weight decay 0 where the group does not decay it)."""
    out: dict[str, dict[str, Any]] = {}
    for g in opt.get("groups", []):
        decay = set(g.get("decay", []))
        for name in g.get("params", []):
            h = dict(g.get("hyper", {}))
            if name not in decay:
                h["weight_decay"] = 0.0
            out[name] = h
    return out


def _kind_of(name: str) -> str:
    leaf = name.rsplit(".", 1)[-1].lower()
    if "bias" in leaf or leaf in ("b_0", "beta"):
        return "biases"
    if any(k in name.lower() for k in ("norm", "ln", "bn")):
        return "norm scales"
    return "other weights"


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _pairs(a: dict[str, Any], b: dict[str, Any], wm: WeightMap | None) -> list[tuple[str, str]]:
    """(A's parameter, B's parameter) for every whole tensor the weight map pairs (without
    one: the parameters both name alike)."""
    pairs = [(p.a, p.b) for p in wm.pairs if p.a_part is None and p.b_part is None] if wm is not None else []
    if not pairs:
        pb = set(per_param(b))
        pairs = [(n, n) for n in per_param(a) if n in pb]
    return pairs


def _settings(a: dict[str, Any], b: dict[str, Any], wm: WeightMap | None, per_step_lr: bool) -> list[dict[str, Any]]:
    """Settings that differ between paired tensors; with per-step learning rates recorded on both
    sides, a setting that scales the rate inside the update (``OPTIMIZER_LR_FACTORS``) is left to
    the per-step comparison of the rates the updates used."""
    out: list[dict[str, Any]] = []
    if a.get("type") != b.get("type"):
        out.append({"what": "type", "a": a.get("class"), "b": b.get("class"), "tensors": None,
                    "text": f"optimizer: A {a.get('class')} vs B {b.get('class')} (different algorithms)"})
        return out
    pa, pb = per_param(a), per_param(b)
    pairs = _pairs(a, b, wm)
    name = a.get("class") if a.get("class") == b.get("class") else f"{a.get('class')}/{b.get('class')}"
    diffs: dict[tuple[str, Any, Any], list[tuple[str, str]]] = defaultdict(list)
    for na, nb in pairs:
        ha, hb = pa.get(na), pb.get(nb)
        if ha is None or hb is None:
            continue
        for key in sorted(set(ha) | set(hb)):
            va, vb = ha.get(key, _DEFAULTS.get(key)), hb.get(key, _DEFAULTS.get(key))
            if va is None or vb is None or _same(va, vb) or (per_step_lr and key in OPTIMIZER_LR_FACTORS):
                continue
            diffs[(key, va, vb)].append((na, nb))
    decay_a = {na for na, nb in pairs if pa.get(na, {}).get("weight_decay")}
    decay_b = {nb for na, nb in pairs if pb.get(nb, {}).get("weight_decay")}
    for (key, va, vb), tensors in sorted(diffs.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        label = _HYPER_LABEL.get(key, key)
        if key == "weight_decay" and (not va or not vb):
            only = [na for na, nb in tensors]
            side, others = ("A", "B") if va else ("B", "A")
            kinds = sorted({_kind_of(n) for n in only})
            text = (f"weight decay applied to {len(decay_a)} tensor(s) in A and {len(decay_b)} in B: {side} also decays "
                    f"{len(only)} that {others} does not ({', '.join(kinds)}: {', '.join(only[:4])}"
                    f"{' ...' if len(only) > 4 else ''})")
        else:
            text = f"{name} {label} {_fmt(va)} vs {_fmt(vb)} ({len(tensors)} of {len(pairs)} tensors)"
        out.append({"what": key, "a": va, "b": vb, "tensors": [na for na, _ in tensors], "text": text})
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b)
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return bool(a == b)
    return abs(fa - fb) <= 1e-9 * max(abs(fa), abs(fb), 1e-30)


def lr_by_param(opt: dict[str, Any], values: dict[str, float], step: int | None = None) -> dict[str, float]:
    """parameter name -> its learning rate in one step (its group's ``lr/<group>``); with
    ``step``, the rate that step's update used: times the factors of settings that decay it
    inside the optimizer (``OPTIMIZER_LR_FACTORS``, the trace's step taken as the update's index)."""
    out = {}
    for i, g in enumerate(opt.get("groups", [])):
        lr = values.get(f"lr/{i}")
        if lr is None:
            continue
        if step is not None:
            for key, (_, factor) in OPTIMIZER_LR_FACTORS.items():
                k = g.get("hyper", {}).get(key)
                if isinstance(k, (int, float)) and not isinstance(k, bool) and k:
                    lr *= factor(float(k), step)
        out.update(dict.fromkeys(g.get("params", []), lr))
    return out


def _lr_notes(a: dict[str, Any], b: dict[str, Any], sa: dict[int, dict[str, float]], sb: dict[int, dict[str, float]],
              per_step: list[dict[str, Any]]) -> list[str]:
    """A decay kept in the optimizer on one side that gives the rates of the other side's
    recorded ones (a scheduler's) at every step: said once, as the convention it is."""
    if any(d["what"] == "lr" for d in per_step):
        return []
    out = []
    for key, (what, _) in OPTIMIZER_LR_FACTORS.items():
        ka = {g.get("hyper", {}).get(key) or 0 for g in a.get("groups", [])}
        kb = {g.get("hyper", {}).get(key) or 0 for g in b.get("groups", [])}
        if ka != kb:
            steps = sorted(set(sa) & set(sb))
            out.append(f"{key} {', '.join(f'{v:g}' for v in sorted(ka))} in A vs {', '.join(f'{v:g}' for v in sorted(kb))} in B "
                       f"({what}; A's scheduler: {a.get('scheduler') or 'none'}, B's: {b.get('scheduler') or 'none'}): the "
                       f"learning rates the updates used agree at every recorded step ({len(steps)}) — where the decay "
                       "lives is a convention, not a difference")
    return out


def _per_step(a: dict[str, Any], b: dict[str, Any], sa: dict[int, dict[str, float]], sb: dict[int, dict[str, float]],
              pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for step in sorted(set(sa) & set(sb)):
        va, vb = sa[step], sb[step]
        la, lb = lr_by_param(a, va, step), lr_by_param(b, vb, step)
        diffs: dict[tuple[float, float], int] = defaultdict(int)
        for na, nb in pairs:
            x, y = la.get(na), lb.get(nb)
            if x is not None and y is not None and not _same(x, y):
                diffs[(x, y)] += 1
        for (x, y), n in sorted(diffs.items(), key=lambda kv: -kv[1]):
            out.append({"step": step, "what": "lr", "a": x, "b": y,
                        "text": f"learning rate at step {step}: A {_fmt(x)} vs B {_fmt(y)} ({n} of {len(pairs)} tensors; "
                                "the schedule or the base rate differs)"})
        ca = {k: v for k, v in va.items() if k.startswith("clip:")}
        cb = {k: v for k, v in vb.items() if k.startswith("clip:")}
        if set(ca) != set(cb) or any(not _same(ca[k], cb[k]) for k in ca):
            out.append({"step": step, "what": "clip", "a": ca, "b": cb,
                        "text": f"gradient clipping at step {step}: A {_clip_text(ca)}, B {_clip_text(cb)}"})
    return out


def _passes(sa: dict[int, dict[str, float]], sb: dict[int, dict[str, float]]) -> list[dict[str, Any]]:
    """Steps whose model ran another number of times before the optimizer step (``passes/forward``,
    recorded where it is more than one): gradients summed over other micro-batches."""
    out: list[dict[str, Any]] = []
    for step in sorted(set(sa) | set(sb)):
        x, y = sa.get(step, {}).get("passes/forward", 1.0), sb.get(step, {}).get("passes/forward", 1.0)
        if not _same(x, y):
            out.append({"step": step, "what": "passes", "a": x, "b": y,
                        "text": f"forward passes before the optimizer step {step}: A {x:g} vs B {y:g} (gradient accumulation "
                                "over another number of micro-batches, or the model run another number of times)"})
    return out


def _clip_text(values: dict[str, float]) -> str:
    parts = [f"{k.removeprefix('clip:')}={_fmt(v)}" for k, v in sorted(values.items()) if k.startswith("clip:")]
    return "by " + ", ".join(parts) if parts else "none"


def optimizer_diff(va: TraceView, vb: TraceView, wm: WeightMap | None) -> OptimizerDiff | None:
    """The two traces' optimizers compared; None when neither trace holds one."""
    a, b = va.trace.meta.get("optimizer"), vb.trace.meta.get("optimizer")
    sa, sb = step_values(va), step_values(vb)
    passes = _passes(sa, sb)  # recorded by any recorder, with or without the optimizer's settings
    if not isinstance(a, dict) and not isinstance(b, dict):
        return OptimizerDiff(None, None, per_step=passes) if passes else None
    d = OptimizerDiff(a if isinstance(a, dict) else None, b if isinstance(b, dict) else None, per_step=passes)
    if d.a is None or d.b is None:
        side = "A" if d.a is None else "B"
        d.settings.append({"what": "presence", "a": None, "b": None, "tensors": None,
                           "text": f"only one trace records an optimizer ({side} has none: its weights stay put)"})
        return d
    per_step_lr = any(k.startswith("lr/") for v in sa.values() for k in v) and any(k.startswith("lr/") for v in sb.values() for k in v)
    d.settings = _settings(d.a, d.b, wm, per_step_lr)
    d.per_step = sorted(passes + _per_step(d.a, d.b, sa, sb, _pairs(d.a, d.b, wm)), key=lambda x: x["step"])
    if per_step_lr:
        d.notes = _lr_notes(d.a, d.b, sa, sb, d.per_step)
    conv = OPTIMIZER_CONVENTIONS.get(str(d.a.get("type")))
    if conv is not None and va.framework != vb.framework:
        d.convention = conv
    return d


def update_sentences(report: Any, diff: OptimizerDiff | None) -> list[tuple[str, str]] | None:
    """When the first divergence is a weight after an optimizer step whose gradients agreed:
    (code, sentence) pairs saying the update differs and why; None otherwise."""
    d = report.first_divergence
    if d is None or d.pair.step < 1:
        return None
    t = report.pairs
    step_col = t.col("step")
    if d.pair.role == "param":
        prev = d.pair.step - 1
        grads = t.role_mask("param_grad") & (step_col == prev)
        n = int(grads.sum())
        if not n or not bool(t.passed[grads].all()):
            return None
        out = [("update_differs", f"the gradients of step {prev} agree ({n} of {n} parameter gradients) but the weights "
                f"after its optimizer step differ: the optimizer update differs, not the model")]
    else:
        # step 0 agrees whole, and the weights already drifted (within the noise floor) when a
        # later step first fails: what changed between the steps is the update
        first = step_col == 0
        weights = t.role_mask("param") & (step_col == d.pair.step) & t.has_metrics
        drift = t.metric("rel_l2")[weights]
        if not first.any() or not bool(t.passed[first].all()) or not len(drift) or not np.nanmax(drift) > 0:
            return None
        if diff is None or not (diff.settings or diff.per_step or diff.convention):
            return None  # nothing known differs: rounding carried through many updates is as likely
        out = [("update_differs", f"step 0 agrees whole (forward, backward, gradients), and the weights used in step "
                f"{d.pair.step} already differ (rel-L2 up to {float(np.nanmax(drift)):.2e}, within the noise floor): "
                "the optimizer update differs, not the model")]
        prev = d.pair.step - 1
    if diff is None:
        out.append(("optimizer_unknown", "the traces hold no optimizer settings (recorded before padiff-trace 0.x, or "
                    "a plain callable): compare the optimizers' settings by hand"))
        return out
    texts = diff.texts(step=prev)
    if texts:
        out.append(("optimizer_cause", "optimizer difference: " + "; ".join(texts)))
    elif diff.convention is not None:
        out.append(("optimizer_convention", f"the optimizer settings agree; the frameworks define the update "
                    f"differently: {diff.convention}"))
    else:
        kind = (diff.a or {}).get("type", "?")
        out.append(("optimizer_semantics", f"the optimizer settings agree ({kind}); the two frameworks' updates differ "
                    "in a way padiff-trace does not know (an unrecorded setting, or optimizer state from earlier steps)"))
    return out
