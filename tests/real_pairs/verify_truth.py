"""Check a real pair's ground truth (<family>_truth.json) without padiff-trace.

Builds both spec models in this one process, copies every paddle tensor into the torch
model through the truth's pairs, runs both on the spec inputs and returns the max abs
difference of the final output. Test code: imports both paddle and torch.

Transforms: "none", "transpose", or free text naming a slice of a packed torch tensor:
"torch columns A:B ...", "torch rows A:B ...", "torch elements A:B ..." (add "paddle transposed"
when the paddle tensor must be transposed first). Anything else needs an
entry in HOOKS: HOOKS[family](transform, paddle_array, torch_array) -> torch_array.

    python tests/real_pairs/verify_truth.py gpt llama    # clean + every planted bug
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
# every folder of pairs: a family is found by its <family>_truth.json in one of them
PAIR_DIRS = (HERE, HERE.parent / "vision_pairs")

# family -> hook(transform, paddle_array, torch_array) -> new torch_array, or None if not handled.
# A family may also ship <family>_hook.py with convert(transform, paddle_array, torch_array).
HOOKS: dict[str, Callable[[str, np.ndarray, np.ndarray], np.ndarray | None]] = {}


def family_dir(family: str) -> Path:
    for d in PAIR_DIRS:
        if (d / f"{family}_truth.json").exists():
            return d
    raise FileNotFoundError(f"no {family}_truth.json in {', '.join(str(d) for d in PAIR_DIRS)}")

_SLICE = re.compile(r"\btorch (columns|rows|elements) (\d+):(\d+)")


def truth(family: str) -> dict:
    return json.loads((family_dir(family) / f"{family}_truth.json").read_text())


def load_spec(family: str, side: str):
    here = family_dir(family)
    path = here / f"{family}_{side}.py"
    name = f"_real_pair_{family}_{side}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    if str(here) not in sys.path:  # like the recorder: a spec may import its neighbours
        sys.path.insert(0, str(here))
    spec.loader.exec_module(mod)
    return mod


def _build(family: str, side: str, bug: str):
    old = os.environ.get("PADIFF_BUG")
    os.environ["PADIFF_BUG"] = bug
    try:
        spec = load_spec(family, side)
        return spec, spec.model()
    finally:
        if old is None:
            os.environ.pop("PADIFF_BUG", None)
        else:
            os.environ["PADIFF_BUG"] = old


def _paddle_tensors(m) -> dict:
    out = dict(m.named_parameters())
    out.update(dict(m.named_buffers()))
    return out


def _torch_tensors(m) -> dict:
    out = dict(m.named_parameters())
    out.update(dict(m.named_buffers()))
    return out


def _convert(family: str, transform: str, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    if transform == "none":
        return src.reshape(dst.shape)
    if transform == "transpose":
        return src.T
    hook = HOOKS.get(family)
    hook_file = family_dir(family) / f"{family}_hook.py"
    if hook is None and hook_file.exists():
        hspec = importlib.util.spec_from_file_location(f"_real_pair_{family}_hook", hook_file)
        hmod = importlib.util.module_from_spec(hspec)
        hspec.loader.exec_module(hmod)
        hook = HOOKS[family] = hmod.convert
    if hook is not None:
        res = hook(transform, src, dst)
        if res is not None:
            return res
    m = _SLICE.search(transform)
    if m is None:
        raise ValueError(f"{family}: no rule for transform {transform!r}")
    kind, a, b = m.group(1), int(m.group(2)), int(m.group(3))
    val = src.T if "paddle transposed" in transform else src
    out = dst.copy()
    if kind == "columns":
        out[:, a:b] = val
    else:  # rows of a matrix, elements of a vector
        out[a:b] = val
    return out


def check_coverage(family: str, pmodel, tmodel) -> None:
    """Every trainable tensor of both sides is in a pair; every other tensor is paired or derived."""
    t = truth(family)
    pp = {p["paddle"] for p in t["pairs"]}
    tp = {p["torch"] for p in t["pairs"]}
    pd, td = set(t["derived"]["paddle"]), set(t["derived"]["torch"])
    ptr = {n for n, p in pmodel.named_parameters() if not p.stop_gradient}
    ttr = {n for n, p in tmodel.named_parameters() if p.requires_grad}
    pall, tall = set(_paddle_tensors(pmodel)), set(_torch_tensors(tmodel))
    problems = []
    if ptr - pp:
        problems.append(f"paddle trainable not paired: {sorted(ptr - pp)}")
    if ttr - tp:
        problems.append(f"torch trainable not paired: {sorted(ttr - tp)}")
    if pall - pp - pd:
        problems.append(f"paddle tensors neither paired nor derived: {sorted(pall - pp - pd)}")
    if tall - tp - td:
        problems.append(f"torch tensors neither paired nor derived: {sorted(tall - tp - td)}")
    if (pp | pd) - pall:
        problems.append(f"paddle names in truth but not in model: {sorted((pp | pd) - pall)}")
    if (tp | td) - tall:
        problems.append(f"torch names in truth but not in model: {sorted((tp | td) - tall)}")
    if problems:
        raise AssertionError(f"{family} truth: " + "; ".join(problems))


def transfer(family: str, pmodel, tmodel) -> None:
    """Copy paddle tensors into the torch model along the truth pairs."""
    import torch

    ptens, ttens = _paddle_tensors(pmodel), _torch_tensors(tmodel)
    new: dict[str, np.ndarray] = {}
    for p in truth(family)["pairs"]:
        src = ptens[p["paddle"]].numpy()
        dst = new.get(p["torch"])
        if dst is None:
            dst = ttens[p["torch"]].detach().cpu().numpy().copy()
        val = _convert(family, p["transform"], src, dst)
        if tuple(val.shape) != tuple(dst.shape):
            raise ValueError(f"{family}: {p['paddle']} -> {p['torch']}: shape {val.shape} != {dst.shape}")
        new[p["torch"]] = np.ascontiguousarray(val)
    with torch.no_grad():
        for name, arr in new.items():
            ttens[name].copy_(torch.from_numpy(arr).to(ttens[name].dtype))


def _first_float(out):
    """Final output: a tensor, or the first element of a tuple / ModelOutput."""
    if isinstance(out, dict):  # HF ModelOutput
        return next(iter(out.values())) if "logits" not in out else out["logits"]
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


def _run_paddle(spec, m) -> np.ndarray:
    import paddle

    args, kwargs = spec.inputs()
    with paddle.no_grad():
        return _first_float(m(*args, **kwargs)).numpy().astype(np.float64)


def _run_torch(spec, m) -> np.ndarray:
    import torch

    args, kwargs = spec.inputs()
    with torch.no_grad():
        return _first_float(m(*args, **kwargs)).detach().cpu().numpy().astype(np.float64)


def compare(family: str, bugs: list[str] | tuple[str, ...] = ("",)) -> dict[str, tuple[float, float]]:
    """{bug: (max abs diff, max abs diff / max abs paddle output)}; bug "" is the clean pair.

    A bug's side is taken from the truth; the other side is built clean."""
    t = truth(family)
    results = {}
    cache: dict[str, tuple] = {}
    for bug in bugs:
        side = t["bugs"][bug]["side"] if bug else ""
        pkey = bug if side == "paddle" else ""
        if pkey not in cache:
            pspec, pm = _build(family, "paddle", pkey)
            cache[pkey] = (pspec, pm, _run_paddle(pspec, pm))
        pspec, pm, pout = cache[pkey]
        tspec, tm = _build(family, "torch", bug if side == "torch" else "")
        if not bug:
            check_coverage(family, pm, tm)
        transfer(family, pm, tm)
        tout = _run_torch(tspec, tm)
        if pout.shape != tout.shape:
            raise AssertionError(f"{family}: output shapes differ: paddle {pout.shape}, torch {tout.shape}")
        d = float(np.abs(pout - tout).max())
        results[bug] = (d, d / float(np.abs(pout).max()))
    return results


def verify(family: str) -> float:
    """Max abs diff of the final output of the clean pair (< 1e-4), after checking that every
    planted bug moves it by far more: 30 times the clean difference and 3e-5 relative
    (precision bugs, a softmax in bfloat16, sit near 1e-4; most bugs move it by percents)."""
    bugs = list(truth(family)["bugs"])
    if not bugs:
        raise AssertionError(f"{family}: no planted bug")
    res = compare(family, ["", *bugs])
    clean = res[""][0]
    if not clean < 1e-4:
        raise AssertionError(f"{family}: clean pair differs by {clean:.3e}")
    small = {b: r for b, r in res.items() if b and not (r[0] > 30 * clean and r[1] > 3e-5)}
    if small:
        raise AssertionError(f"{family}: planted bugs barely change the output (clean {clean:.3e}): {small}")
    return clean


if __name__ == "__main__":
    for fam in sys.argv[1:]:
        res = compare(fam, ["", *truth(fam)["bugs"]])
        for bug, (d, rel) in res.items():
            print(f"{fam:10s} {bug or 'clean':12s} max|diff|={d:.3e}  relative={rel:.3e}", flush=True)
