"""What a comparison means, in sentences: computed once per report, shown by every renderer.

``diagnose(report)`` returns ``Finding``s: facts ("inputs of this call: rel-L2 3e-08 (still
matching)") and conclusions (``hint``: "the error starts inside this module call"). Those
about the first divergence have topic ``first_divergence``; those about the whole
comparison ``comparison``. The terminal summary, report.txt, report.json and report.html
render this list; none of them composes a diagnosis of its own. Texts hold trace strings
exactly; renderers make them visible (text) or escape them (HTML).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from padiff_trace.matching import role_words, summed_groups

from ..judging._carried import DRIFT_REASON
from ..judging._dataorder import data_sentences
from ..judging._environment import explaining
from ..judging._optimizer import update_sentences
from ..judging._randomness import randomness_sentences
from ._contents import Finding, ReportData
from ._shadowcopies import shadow_findings

if TYPE_CHECKING:
    from ..judging._divergence import Divergence
    from ..judging._pairview import PairResult

__all__ = ["diagnose"]


def diagnose(report: ReportData) -> list[Finding]:
    """The findings of a comparison, in reading order."""
    out = _comparison(report)
    d = report.first_divergence
    if d is not None:
        out += _divergence(report, d)
        out += _environment_explains(report, d)
    return out


def _environment(report: ReportData) -> list[Finding]:
    """The numerics settings that differ (TF32, threads, oneDNN, ...): said before anything else."""
    diffs = report.environment
    if not diffs:
        return []
    head = Finding("environment_difference", f"environment differences that can change numbers: {len(diffs)} "
                   "setting(s) differ between the two recordings", "comparison")
    return [head, *(Finding("environment_difference", x.text(), "comparison") for x in diffs)]


def _environment_explains(report: ReportData, d: Divergence) -> list[Finding]:
    """A differing setting that acts on the kind of op the first divergence is (TF32 and a matmul)."""
    p = d.pair
    if p.role in ("model_input", "input", "param"):
        return []  # data given to the model, or weights as initialised: no kernel computed them
    rel = p.metrics.rel_l2 if p.metrics is not None and not p.metrics.uncomparable else None
    out, too_large = [], []
    for x, name, fits in explaining(report.environment, [p.a.module_type, p.b.module_type], rel, p.a.dtype):
        if not fits:
            too_large.append(x.label)
            continue
        how = "may explain it" if "*" in x.effect.kinds else "can explain it"
        switch = f"; to remove the difference: {x.effect.switch}" if x.effect.switch else ""
        out.append(Finding(
            "environment_explains",
            f"the first divergence is in a {name} call, and {x.label} differs (A {x.shown('a')}, B {x.shown('b')}), "
            f"which {how}: {x.effect.effect}{switch}",
            hint=True,
        ))
    if too_large and not out:
        out.append(Finding(
            "environment_ruled_out",
            f"the first divergence's error (rel-L2 {rel:.2e}) is far larger than the differing settings that act on a "
            f"{p.a.module_type} call make ({'; '.join(too_large)}): they do not explain it",
        ))
    return out[:3]


def _comparison(report: ReportData) -> list[Finding]:
    out: list[Finding] = _environment(report)  # first: it can explain everything below
    if report.same_trace:
        out.append(Finding("same_trace", "A and B are the same trace: it is compared with itself", "comparison"))
    for why in report.missing:
        partial = " (partial comparison allowed)" if report.allow_partial else ""
        out.append(Finding("incomplete", f"incomplete{partial}: {why}", "comparison"))
    for tag, view in (("A", report.a), ("B", report.b)):
        summary = view.trace.summary if isinstance(view.trace.summary, dict) else {}
        notes = summary.get("notes")
        said = notes.get("backward") if isinstance(notes, dict) else None
        if isinstance(said, str):  # the recorder's own sentence, from the trace: shown as text, cut short
            out.append(Finding("backward_failed", f"{tag}: {said[:400]}; gradients are compared only where "
                               "both traces hold them", "comparison"))
    t = report.pairs
    data = data_sentences(t)  # the data of a step differs: said before anything about the model
    out += [Finding(code, text, "comparison", hint=code == "data_order") for code, text in data]
    damaged = sorted(i for i, why in t.reasons.items() if why.startswith("damaged"))
    if damaged:
        p0 = t[damaged[0]]
        out.append(Finding("damaged", f"{len(damaged)} pair(s) not compared, their stored bytes are damaged "
                           f"(first: {p0.a.name} / {p0.b.name}); run padiff-trace check on both traces",
                           "comparison"))
    if t.uncomparable:
        first = t.uncomparable[min(t.uncomparable)]
        out.append(Finding(
            "uncomparable",
            f"{len(t.uncomparable)} pair(s) not compared, their values cannot be decoded (first: {first})",
            "comparison",
        ))
    wm = report.weight_map
    if wm is not None and wm.one_sided():
        out.append(Finding("structural_difference", "structural difference (not compared): "
                           + wm.one_sided_text(), "comparison"))
    rows = [p for p in wm.pairs if p.how == "extra rows"] if wm is not None else []
    if rows:
        w0 = rows[0]
        big, small = (f"A's {w0.a}", f"B's {w0.b}") if w0.a_part is not None else (f"B's {w0.b}", f"A's {w0.a}")
        n = (w0.a_part or w0.b_part or (0, 0))[1]
        more = f" (and {len(rows) - 1} more table(s) alike)" if len(rows) > 1 else ""
        out.append(Finding(
            "extra_rows",
            f"lookup table {big} has rows {small} lacks: compared on the first {n} rows{more}; a padding row "
            "or a padded vocabulary is a convention, a vocabulary size set wrong is not (check the config)",
            "comparison"))
    summed = summed_groups(wm.pairs) if wm is not None else []
    if summed:
        side, g0 = summed[0]
        one, many = (f"A's {g0[0].a}", ", ".join(f"B's {p.b}" for p in g0)) if side == "a" else \
            (f"B's {g0[0].b}", ", ".join(f"A's {p.a}" for p in g0))
        more = f" (and {len(summed) - 1} more alike)" if len(summed) > 1 else ""
        out.append(Finding(
            "summed_tensors",
            f"{one} is the sum of {many}: its weight holds theirs side by side along the input axis, so its one "
            f"bias stands for theirs (a convention: "
            + ("copied into the first, zeros into the others" if side == "a" else "their sum copied")
            + f"; compared as the sum){more}",
            "comparison"))
    # one module against copies of it, on either side: grouped by the side holding the one
    copies: dict[tuple[str, str], list[str]] = {}
    for p in wm.pairs if wm is not None else []:
        if p.how == "copies":
            ma, mb = p.a.rpartition(".")[0], p.b.rpartition(".")[0]
            for key, other in ((("A", ma), mb), (("B", mb), ma)):
                if other not in (group := copies.setdefault(key, [])):
                    group.append(other)
    copies = {k: v for k, v in copies.items() if len(v) > 1}
    if copies:
        (one, single), kept = next(iter(copies.items()))
        more = f" (and {len(copies) - 1} more module(s) alike)" if len(copies) > 1 else ""
        out.append(Finding(
            "module_copies",
            f"{one}'s {single} is one module where {'B' if one == 'A' else 'A'} keeps {len(kept)} copies of it "
            f"({', '.join(kept)}): each copy holds its values, its calls pair with the first copy's, its gradient "
            f"is compared with the sum of the copies'{more}",
            "comparison"))
    bounds = [c for c in report.conventions if c.get("kind", "boundary") == "boundary"]
    if bounds:
        c0 = bounds[0]
        more = f" (and {len(bounds) - 1} more)" if len(bounds) > 1 else ""
        out.append(Finding(
            "boundary_difference",
            f"{len(bounds)} boundary difference(s), not divergences: the output of {c0['a']} [{c0['a_type']}] / "
            f"{c0['b']} [{c0['b_type']}] differs but {c0['relation']}{more}",
            "comparison",
        ))
    opt = report.optimizer
    if opt is not None:
        out += [Finding("optimizer_setting", f"optimizer setting differs: {x['text']}", "comparison") for x in opt.settings]
        firsts: dict[str, dict[str, Any]] = {}
        for x in opt.per_step:
            firsts.setdefault(x["what"], x)
        out += [Finding("optimizer_step", f"optimizer differs: {x['text']}", "comparison") for x in firsts.values()]
        out += [Finding("optimizer_convention", f"optimizer convention: {x}", "comparison") for x in opt.notes]
    if report.randomness is not None:
        out += [Finding(code, text, "comparison", hint) for code, text, hint in randomness_sentences(*report.randomness)]
    for c in report.conventions:
        if c.get("kind") == "convention":
            out.append(Finding("convention", str(c["text"]), "comparison"))
    # A and B computed some outputs in different dtypes (autocast): said before any divergence it explains
    prec = getattr(report, "precision", None)
    if prec is not None:
        d0 = report.first_divergence
        out += [Finding(code, text, "comparison", hint) for code, text, hint in prec.sentences(d0.pair.index if d0 else None)]
    noisy = int((t.within_noise & t.has_metrics & (t.metric("max_abs") > 0)).sum()) if len(t) else 0
    if noisy:
        low = {"bfloat16": "bf16", "float16": "fp16", "float64": "fp64"}.get(prec.lowest or "", "fp32") if prec else "fp32"
        out.append(Finding("noise_floor", f"within the estimated {low} noise floor: {noisy} of {len(t)} pairs",
                           "comparison"))
    drift = [i for i, why in t.reasons.items() if t.passed[i] and why.startswith(DRIFT_REASON)] if len(t) else []
    if drift:
        rel, steps = t.metric("rel_l2")[drift], t.col("step")[drift]
        out.append(Finding(
            "training_drift",
            f"{DRIFT_REASON}: {len(drift)} pair(s) from step {int(steps.min())} on differ by up to rel-L2 "
            f"{float(np.nanmax(rel)):.2g}, computed from weights that the earlier updates' rounding moved apart "
            "(fp32 training amplifies rounding; --referee, a float64 run of both, tells it from a bug)", "comparison"))
    return out


def _divergence(report: ReportData, d: Divergence) -> list[Finding]:
    p = d.pair
    out: list[Finding] = []
    if d.type_difference is not None:
        out.append(Finding("type_difference", f"type difference: A {d.type_difference[0]} vs B {d.type_difference[1]}"))
    if p.referee is not None:
        out += _class(p, report.referees)
    site = p.a.stack[-1] if p.a.stack else None
    where = f" ({site.file}:{site.line})" if site else ""
    inside = p.a.module or "<root>"
    if p.role == "op_input" and p.metrics is not None:
        out.append(Finding(
            "op_inputs_differ",
            f"inside {inside}, op {p.a.module_type}{where} already receives different inputs (rel-L2 "
            f"{p.metrics.rel_l2:.2e}) while the ops before it match: the error comes from code between them "
            "(an op on one side only, or a Python-level computation)",
            hint=True,
        ))
    elif p.role.startswith("op_"):
        before = "?" if d.input_rel_l2 is None else f"{d.input_rel_l2:.2e}"
        after = f"output by {p.metrics.rel_l2:.2e}" if p.metrics is not None else p.reason
        out.append(Finding(
            "first_divergent_op",
            f"inside {inside}, the first divergent op is {p.a.module_type}{where}: inputs differed by rel-L2 {before}, {after}",
            hint=True,
        ))
    if d.input_rel_l2 is not None and p.role == "grad_output":
        out.append(Finding("call_inputs", f"forward inputs of this call: rel-L2 {d.input_rel_l2:.3g} "
                                          f"({'already wrong' if d.inputs_failed else 'still matching'}); this is the "
                                          "gradient of its output: the backward of the calls that used it made it"))
    elif d.input_rel_l2 is not None and p.role != "op_input":
        state = "already wrong" if d.inputs_failed else "still matching"
        out.append(Finding("call_inputs", f"inputs of this call: rel-L2 {d.input_rel_l2:.3g} ({state})"))
        if not d.inputs_failed and d.type_difference is not None:
            out.append(Finding("type_difference_cause", "same inputs, different module types: the type difference is the cause",
                               hint=True))
        elif not d.inputs_failed:
            out.append(Finding("error_starts_inside", "the error starts inside this module call", hint=True))
        else:
            out.append(Finding("inputs_differed", "it received wrong inputs: look at the code that produced them", hint=True))
    elif p.role == "input":
        out.append(Finding("code_between", "earlier recorded outputs match: look at the code between them and this call",
                           hint=True))
    if d.half is not None:
        out.append(Finding("half_precision", d.half.sentence(p.metrics.rel_l2 if p.metrics is not None else None), hint=True))
    if p.role == "model_input":
        return out + [Finding("model_inputs_differ", f"the first difference is the data given to the model at step "
                              f"{p.step}, not anything the model computed", hint=True)]
    copies = shadow_findings(report, d)
    if copies is not None:  # a copy of the weights (an EMA) diverged: its own update, where the weights agree
        return out + copies
    update = update_sentences(report, report.optimizer)
    if update is not None:  # the weights differ after an update whose gradients agreed: the optimizer
        return out + [Finding(code, text, hint=True) for code, text in update]
    if d.located is not None:  # the module call that made the error, on each side (_culprit)
        out += [Finding(code, text, hint=True) for code, text in d.located.sentences()]
        out += _packing_assumed(report, d)
    return out


def _packing_assumed(report: ReportData, d: Divergence) -> list[Finding]:
    """A fused q|k|v projection inside the call named, split into consecutive blocks only because
    its class is not in ``QKV_PACKING``: a library that packs head by head would make exactly
    this divergence, so the report says how to pin the packing."""
    wm, loc = report.weight_map, d.located
    if wm is None or loc is None:
        return []
    keys = dict(zip(("a", "b"), wm.side_keys()))
    known = {"a": report.a.trace.meta.get("pack_groups") or {}, "b": report.b.trace.meta.get("pack_groups") or {}}
    qkv = {role_words(w)[0] for w in ("q", "k", "v")}
    parts: dict[tuple[str, str], set[int]] = {}  # a fused tensor -> the roles its partners' names say
    for p in wm.pairs:
        for side, name, part, groups, other in (("a", p.a, p.a_part, p.a_groups, p.b), ("b", p.b, p.b_part, p.b_groups, p.a)):
            # q|k|v are output rows (axis 0); parts along the input axis are modules summed
            if p.how == "packed" and part is not None and groups == 1 and p.axis == 0 and name.endswith(".weight"):
                parts.setdefault((side, name), set()).update(role_words(other.rpartition(".")[0].rpartition(".")[2]))
    for (side, name), roles in parts.items():
        module = name.rpartition(".")[0]
        call = loc.a.call if side == "a" else loc.b.call
        inside = call.module == "" or module.startswith(call.module + ".")
        # three parts whose partners are the q, k and v projections (not three fields' tables)
        if roles == qkv and inside and module not in known[side]:
            k = keys[side]
            return [Finding("packing_assumed", f"{side.upper()} {module} holds q, k and v fused and was split as "
                            f"[q | k | v] (its class is not among the known packings): if its library packs them head by "
                            f"head, add its parts to a mapping file with \"{k}_groups\": <key/value heads> beside "
                            f"\"{k}_part\" (weightmap.json holds the entries to edit)", hint=True)]
    return []


def _class(p: PairResult, ref: dict[str, Any] | None) -> list[Finding]:
    r = p.referee or {}
    out = [Finding("referee_class", f"class: {p.cls} (vs float64: A {r.get('rel_err_a', 0):.2e}, B {r.get('rel_err_b', 0):.2e})")]
    if ref is not None and not ref.get("reference_b") and p.cls in ("A deviates", "B deviates"):
        other = "B" if ref["reference_model"] == "A" else "A"
        if p.cls == f"{other} deviates":
            out.append(Finding(
                "referee_one_model",
                f"{other} is far from the float64 run of {ref['reference_model']}'s model: a model difference or "
                f"{other}'s fp32 numerics; --reference-b tells them apart",
                hint=True,
            ))
    if p.cls == "model difference":
        out.append(Finding("referee_model_difference",
                           "the float64 runs of the two models disagree here: a real difference, not rounding", hint=True))
    return out
