"""Check the training-mode pairs' ground truth (<family>_truth.json) without padiff-trace.

For each family this builds both spec models in this one process (the spec's own model(),
inputs(), loss(), optimizer() and clip_grad(), the loop the recorder runs: forward, loss,
backward, clip_grad, optimizer step), copies the paddle weights into the torch model through
the truth's pairs, trains both sides STEPS steps and compares, in torch names and layout, the
losses, the step-0 outputs and gradients, and every paired tensor after every update.

Clean twin:
  fp32, dropout off   every dropout call of both frameworks made the identity (p=0; BatchNorm
                      still normalises with batch statistics). Passes when every difference is
                      within FLOOR_FACTOR x the fp32 noise floor: what torch differs from itself
                      when its weights are perturbed by ~1 ulp (relative 1e-7; two draws) or its
                      convolutions run other kernels (oneDNN off), or below the strict
                      tolerances (LOSS_TOL, OUT_TOL, STATE_TOL). Tensors above the
                      strict tolerance but within the floor are listed (Adam normalising a
                      rounding-noise gradient; MobileNetV2's ReLU6 flips at batch 2).
  fp64, dropout off   both models and float inputs cast to float64: agreement to F64_TOL
                      (paddlenlp LLaMA/T5 keep a few float32 internals: rotary tables, casts).
  fp32, shared masks  dropout on: each call with p > 0 draws its keep-mask from numpy, seeded by
                      the call's rank, so the k-th dropout call of both sides drops the same
                      elements; the sequences of (p, shape) must be equal; same criterion as
                      the first run.

Each planted bug (its side built with PADIFF_BUG, the other clean), by its "where":
  forward        a dropout difference: the first dropout call that differs between the clean
                 and the buggy build of that side (same framework, same forward) is made inside
                 the truth's module for that side, its counterpart (the call of the same rank
                 with p > 0) inside the truth's module for the other side; with shared masks the
                 step-0 loss moves.
  optimizer      (fp64) loss and gradients of step 0 as in the clean twin; the first paired
                 tensor (torch registration order) whose value after update k differs beyond
                 BUG_FACTOR x the clean twin's difference names the modules; k == "first_step".
  loss           (fp64) the step-0 output agrees, the loss and the gradients differ.
  running_stats  (fp64) like optimizer, the first tensor is a running statistic, and no
                 parameter differs over all steps (training BatchNorm uses batch statistics).
The fp32 size of each optimizer/loss/running-stats difference is printed beside the clean
twin's fp32 difference of the same tensor.

Test code: imports both paddle and torch (and torchvision for mobilenet_v2_train).

    python tests/train_pairs/verify_truth.py                 # every family
    python tests/train_pairs/verify_truth.py gpt_train t5_train
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
STEPS = 3  # unless the truth's "flags" ask for another number (["--steps", "N"])
LOSS_TOL = 1e-5  # strict: |loss_a - loss_b| / |loss_a|
OUT_TOL = 1e-4  # strict: the step-0 output's max abs difference / its max abs value
STATE_TOL = 1e-5  # strict: max |a - b| / max(max |a|, 1e-3) per tensor after an update
FLOOR_FACTOR = 10.0  # a clean difference passes within this factor of the fp32 noise floor
F64_TOL = 1e-5  # fp64 clean twin: loss, outputs and every tensor (relative)
BUG_FACTOR, BUG_FLOOR = 20.0, 1e-9  # a bug changes a tensor: diff > max(BUG_FACTOR x clean diff, BUG_FLOOR)

_SLICE = re.compile(r"\btorch (columns|rows|elements) (\d+):(\d+)")


def families() -> list[str]:
    return sorted(p.name.removesuffix("_truth.json") for p in HERE.glob("*_truth.json"))


def truth(family: str) -> dict:
    return json.loads((HERE / f"{family}_truth.json").read_text())


def steps_of(family: str) -> int:
    """The training steps a family runs: its truth's ``--steps N`` flag, else STEPS."""
    flags = list(truth(family).get("flags", ()))
    return int(flags[flags.index("--steps") + 1]) if "--steps" in flags else STEPS


@contextlib.contextmanager
def bug_env(bug: str) -> Iterator[None]:
    """PADIFF_BUG for the duration (specs read it in model(), loss(), optimizer(), clip_grad())."""
    old = os.environ.get("PADIFF_BUG")
    os.environ["PADIFF_BUG"] = bug
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PADIFF_BUG", None)
        else:
            os.environ["PADIFF_BUG"] = old


_SPECS: dict[tuple[str, str], Any] = {}


def load_spec(family: str, side: str):
    key = (family, side)
    if key not in _SPECS:
        path = HERE / f"{family}_{side}.py"
        spec = importlib.util.spec_from_file_location(f"_train_pair_{family}_{side}", path)
        mod = importlib.util.module_from_spec(spec)
        if str(HERE) not in sys.path:  # like the recorder: a spec may import its neighbours
            sys.path.insert(0, str(HERE))
        spec.loader.exec_module(mod)
        _SPECS[key] = mod
    return _SPECS[key]


# ---------------------------------------------------------------------------------------------
# dropout: off, shared masks, or the framework's own; every call recorded with its module


@dataclass
class DropCall:
    module: str  # innermost module (dotted path) running when the call was made
    p: float  # effective probability (0 when not training)
    shape: tuple[int, ...]


@dataclass
class DropoutControl:
    mode: str  # "off" | "shared" | "native"
    calls: list[DropCall] = field(default_factory=list)
    stack: list[str] = field(default_factory=list)
    drawn: int = 0  # calls with p > 0 so far (the mask seed of "shared")

    def decide(self, x_shape: tuple[int, ...], p: float, training: bool) -> np.ndarray | str | None:
        """None: identity; "native": the framework's own dropout; else the scaled keep-mask."""
        eff = float(p) if training else 0.0
        self.calls.append(DropCall(self.stack[-1] if self.stack else "", eff, tuple(x_shape)))
        if eff == 0.0 or self.mode == "off":
            return None
        if self.mode == "native":
            return "native"
        u = np.random.default_rng(1000 + self.drawn).random(x_shape)
        self.drawn += 1
        return (u >= eff) / (1.0 - eff)


@contextlib.contextmanager
def dropout_control(ctl: DropoutControl, fw: str, model: Any) -> Iterator[DropoutControl]:
    """Patch paddle.nn.functional.dropout and torch.nn.functional.dropout (nn.Dropout of both
    frameworks and the libraries' functional calls go through them) and track the module stack
    of ``model``."""
    import paddle
    import torch

    pf, tf = paddle.nn.functional, torch.nn.functional
    p_orig, t_orig = pf.dropout, tf.dropout

    def p_drop(x, p=0.5, axis=None, training=True, inplace=False, mode="upscale_in_train", name=None):
        if axis is not None or mode != "upscale_in_train":
            raise NotImplementedError(f"paddle dropout axis={axis} mode={mode}")
        what = ctl.decide(tuple(x.shape), p, training)
        if what is None:
            return x
        if isinstance(what, str):
            return p_orig(x, p, axis=axis, training=training, inplace=inplace, mode=mode, name=name)
        return x * paddle.to_tensor(what, dtype=x.dtype)

    def t_drop(input, p=0.5, training=True, inplace=False):
        what = ctl.decide(tuple(input.shape), p, training)
        if what is None:
            return input
        if isinstance(what, str):
            return t_orig(input, p, training, inplace)
        return input * torch.from_numpy(what).to(input.dtype)

    handles = []
    subs = model.named_sublayers(include_self=True) if fw == "paddle" else model.named_modules()
    for name, sub in subs:
        def pre(*_a, _n=name, **_k):
            ctl.stack.append(_n)

        def post(*_a, **_k):
            ctl.stack.pop()

        if fw == "paddle":
            handles += [sub.register_forward_pre_hook(pre), sub.register_forward_post_hook(post)]
        else:
            handles += [sub.register_forward_pre_hook(pre), sub.register_forward_hook(post)]
    pf.dropout, tf.dropout = p_drop, t_drop
    try:
        yield ctl
    finally:
        pf.dropout, tf.dropout = p_orig, t_orig
        for h in handles:
            h.remove()


# ---------------------------------------------------------------------------------------------
# tensors, layouts, the truth's pairs


def _tensors(m) -> dict:
    out = dict(m.named_parameters())
    out.update(dict(m.named_buffers()))
    return out


def _np(t) -> np.ndarray:
    return (t.detach().cpu().numpy() if hasattr(t, "detach") else t.numpy()).copy()


def _convert(transform: str, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    if transform == "none":
        return src.reshape(dst.shape)
    if transform == "transpose":
        return src.T
    m = _SLICE.search(transform)
    if m is None:
        raise ValueError(f"no rule for transform {transform!r}")
    kind, a, b = m.group(1), int(m.group(2)), int(m.group(3))
    val = src.T if "paddle transposed" in transform else src
    out = dst.copy()
    if kind == "columns":
        out[:, a:b] = val
    else:
        out[a:b] = val
    return out


def in_torch_layout(family: str, paddle_arrays: dict[str, np.ndarray], torch_shapes: dict[str, tuple]) -> dict[str, np.ndarray]:
    """Paddle arrays (by paddle name) assembled into torch-named, torch-shaped arrays."""
    new: dict[str, np.ndarray] = {}
    for p in truth(family)["pairs"]:
        if p["paddle"] not in paddle_arrays or p["torch"] not in torch_shapes:
            continue
        src = paddle_arrays[p["paddle"]]
        dst = new.get(p["torch"])
        if dst is None:
            dst = np.zeros(torch_shapes[p["torch"]], src.dtype)
        new[p["torch"]] = _convert(p["transform"], src, dst)
    return new


def check_coverage(family: str, pmodel, tmodel) -> None:
    """Every trainable tensor of both sides is in a pair; every other tensor is paired or derived."""
    t = truth(family)
    pp, tp = {p["paddle"] for p in t["pairs"]}, {p["torch"] for p in t["pairs"]}
    pd, td = set(t["derived"]["paddle"]), set(t["derived"]["torch"])
    ptr = {n for n, p in pmodel.named_parameters() if not p.stop_gradient}
    ttr = {n for n, p in tmodel.named_parameters() if p.requires_grad}
    pall, tall = set(_tensors(pmodel)), set(_tensors(tmodel))
    problems = []
    for what, s in (("paddle trainable not paired", ptr - pp), ("torch trainable not paired", ttr - tp),
                    ("paddle tensors neither paired nor derived", pall - pp - pd),
                    ("torch tensors neither paired nor derived", tall - tp - td),
                    ("paddle names in truth but not in model", (pp | pd) - pall),
                    ("torch names in truth but not in model", (tp | td) - tall)):
        if s:
            problems.append(f"{what}: {sorted(s)}")
    if problems:
        raise AssertionError(f"{family} truth: " + "; ".join(problems))


def _first_float(out):
    if isinstance(out, dict):  # HF ModelOutput
        return out["logits"] if "logits" in out else next(iter(out.values()))
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


def _split(obj):
    if isinstance(obj, dict):
        return (), obj
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], (tuple, list)) and isinstance(obj[1], dict):
        return tuple(obj[0]), obj[1]
    return (tuple(obj) if isinstance(obj, (tuple, list)) else (obj,)), {}


# ---------------------------------------------------------------------------------------------
# one side's training run, recorded in torch names and layout


@dataclass
class Trace:
    losses: list[float]
    outs: list[np.ndarray]  # the first float output (logits) of each step
    grads: list[dict[str, np.ndarray]]  # before clipping
    states: list[dict[str, np.ndarray]]  # every paired tensor after update k (index k - 1)
    calls: list[DropCall]
    order: list[str]  # torch names, registration order (parameters, then buffers)
    params: set[str]  # torch names of the parameters


@dataclass
class Family:
    """What every run of a family shares: the clean paddle weights in torch layout, shapes, names."""

    name: str
    torch_shapes: dict[str, tuple]
    torch_order: list[str]
    torch_params: set[str]
    weights: dict[str, np.ndarray]  # clean paddle build, torch names and layout
    torch_to_paddle: dict[str, str]


_FAMILIES: dict[str, Family] = {}


def family(name: str) -> Family:
    if name not in _FAMILIES:
        with bug_env(""):
            pm, tm = load_spec(name, "paddle").model(), load_spec(name, "torch").model()
        check_coverage(name, pm, tm)
        shapes = {n: tuple(t.shape) for n, t in _tensors(tm).items()}
        weights = in_torch_layout(name, {n: _np(t) for n, t in _tensors(pm).items()}, shapes)
        t2p: dict[str, str] = {}
        for p in truth(name)["pairs"]:
            t2p.setdefault(p["torch"], p["paddle"])
        order = list(dict(tm.named_parameters())) + [n for n, _ in tm.named_buffers()]
        _FAMILIES[name] = Family(name, shapes, order, set(dict(tm.named_parameters())), weights, t2p)
    return _FAMILIES[name]


def _cast_inputs(fw: str, args, kwargs, dtype: str):
    def cast(x):
        if fw == "paddle":
            import paddle

            return x.astype(dtype) if isinstance(x, paddle.Tensor) and x.is_floating_point() else x
        import torch

        return x.to(getattr(torch, dtype)) if isinstance(x, torch.Tensor) and x.is_floating_point() else x

    return tuple(cast(a) for a in args), {k: cast(v) for k, v in kwargs.items()}


class _BatchNormVariance:
    """Paddle's BatchNorm running variance in torch's convention (a convention, not a bug).

    Both update ``running = m * running + (1 - m) * batch`` (paddle momentum m = 0.9 = 1 - torch's
    0.1), but paddle takes the biased batch variance, torch the unbiased one (x N / (N - 1), N the
    elements per channel). Each paddle update's increment is rescaled by N / (N - 1), with N
    counted from the layer's input in that step's forward."""

    def __init__(self, model) -> None:
        self.layers = {n: sub for n, sub in model.named_sublayers() if hasattr(sub, "_variance") and hasattr(sub, "_mean")}
        self.n: dict[str, int] = {}
        self.raw: dict[str, np.ndarray] = {n: _np(sub._variance) for n, sub in self.layers.items()}
        self.conv: dict[str, np.ndarray] = {n: v.copy() for n, v in self.raw.items()}
        for name, layer in self.layers.items():
            layer.register_forward_post_hook(self._hook(name))

    def _hook(self, name: str):
        def hook(layer, inputs, _output):
            if layer.training and not getattr(layer, "_use_global_stats", False):
                x = inputs[0]
                self.n[name] = int(np.prod(x.shape)) // int(x.shape[1])
        return hook

    def to_unbiased(self, state: dict[str, np.ndarray]) -> None:
        for name, layer in self.layers.items():
            key = f"{name}._variance"
            now, n, mom = state[key], self.n.pop(name, None), float(layer._momentum)
            if n is not None and n > 1:
                self.conv[name] = mom * self.conv[name] + (now - mom * self.raw[name]) * (n / (n - 1))
            self.raw[name] = now.copy()
            state[key] = self.conv[name].astype(now.dtype)


_RUNS: dict[tuple, Trace] = {}


def run_side(fam: str, side: str, bug: str = "", *, dropout: str = "off", dtype: str = "float32",
             steps: int | None = None, perturb: int | None = None) -> Trace:
    """``steps`` steps of the recorder's loop on one side, from the family's clean paddle weights.
    ``perturb``: multiply the torch weights by 1 + 1e-7 N(0, 1) (numpy seed ``perturb``).
    Deterministic: a run already made is returned again."""
    import torch

    steps = steps_of(fam) if steps is None else steps
    key = (fam, side, bug, dropout, dtype, steps, perturb, torch.backends.mkldnn.enabled)
    if key not in _RUNS:
        _RUNS[key] = _run_side(fam, side, bug, dropout, dtype, steps, perturb)
    return _RUNS[key]


def _run_side(fam: str, side: str, bug: str, dropout: str, dtype: str, steps: int, perturb: int | None) -> Trace:
    f = family(fam)
    spec = load_spec(fam, side)
    ctl = DropoutControl(dropout)
    with bug_env(bug):
        m = spec.model()
        if side == "torch":
            import torch

            tens = _tensors(m)
            rng = np.random.default_rng(perturb) if perturb is not None else None
            with torch.no_grad():
                for name, w in f.weights.items():
                    arr = w * (1.0 + 1e-7 * rng.standard_normal(w.shape)).astype(w.dtype) if rng is not None and name in f.torch_params else w
                    tens[name].copy_(torch.from_numpy(np.ascontiguousarray(arr)).to(tens[name].dtype))
            if dtype == "float64":
                m.double()
        elif dtype == "float64":
            m.to(dtype="float64")

        def torch_layout(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
            return in_torch_layout(fam, arrays, f.torch_shapes) if side == "paddle" else arrays

        bn = _BatchNormVariance(m) if side == "paddle" else None
        losses, outs, grads, states = [], [], [], []
        with dropout_control(ctl, side, m):
            opt, sched = spec.optimizer(m), None
            if isinstance(opt, tuple):  # (optimizer, lr scheduler), as the spec contract allows
                opt, sched = opt
            clip = getattr(spec, "clip_grad", None)
            per_step = bool(inspect.signature(spec.inputs).parameters)  # inputs(step): new data each step
            for step in range(steps):
                args, kwargs = _cast_inputs(side, *_split(spec.inputs(step) if per_step else spec.inputs()), dtype)
                out = m(*args, **kwargs)
                loss = spec.loss(out)
                loss.backward()
                grads.append(torch_layout({n: _np(p.grad) for n, p in m.named_parameters() if p.grad is not None}))
                if clip is not None:
                    clip(m)
                opt.step()
                if sched is not None:
                    sched.step()
                if side == "paddle":
                    opt.clear_grad()
                else:
                    opt.zero_grad(set_to_none=True)
                state = {n: _np(t) for n, t in _tensors(m).items()}
                if bn is not None:
                    bn.to_unbiased(state)
                states.append(torch_layout(state))
                losses.append(float(loss))
                outs.append(_np(_first_float(out)).astype(np.float64))
    return Trace(losses, outs, grads, states, ctl.calls, f.torch_order, f.torch_params)


# ---------------------------------------------------------------------------------------------
# differences between two traces


def _tensor_diffs(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> dict[str, tuple[float, float]]:
    """torch name -> (max abs diff, relative to max(max |a|, 1e-3))."""
    out = {}
    for n, x in a.items():
        if n in b and np.issubdtype(x.dtype, np.floating):
            d = float(np.abs(x.astype(np.float64) - b[n]).max())
            out[n] = (d, d / max(float(np.abs(x).max()), 1e-3))
    return out


@dataclass
class Diff:
    loss: list[float]  # relative, per step
    out0: float  # step-0 output, max abs diff relative to max |a|
    grads0: dict[str, tuple[float, float]]
    states: list[dict[str, tuple[float, float]]]  # after update k (index k - 1)

    @classmethod
    def of(cls, a: Trace, b: Trace) -> Diff:
        return cls([abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a.losses, b.losses)],
                   float(np.abs(a.outs[0] - b.outs[0]).max() / max(np.abs(a.outs[0]).max(), 1e-12)),
                   _tensor_diffs(a.grads[0], b.grads[0]),
                   [_tensor_diffs(x, y) for x, y in zip(a.states, b.states)])

    def worst_state(self) -> tuple[str, float]:
        n, (_, r) = max(((n, v) for s in self.states for n, v in s.items()), key=lambda kv: kv[1][1])
        return n, r


def _floor(fam: str, dropout: str) -> Diff:
    """The fp32 noise floor: torch against itself with ~1-ulp perturbed weights (two draws) and,
    for a model with convolutions, with other kernels (oneDNN off: other rounding in every
    convolution, forward and backward); per number the largest difference."""
    import torch

    base = run_side(fam, "torch", dropout=dropout)
    diffs = [Diff.of(base, run_side(fam, "torch", dropout=dropout, perturb=s)) for s in (1, 2)]
    with bug_env(""):
        convs = any(isinstance(m, torch.nn.Conv2d) for m in load_spec(fam, "torch").model().modules())
    if convs:  # oneDNN only changes the convolutions here (linear layers go to BLAS either way)
        old = torch.backends.mkldnn.enabled
        torch.backends.mkldnn.enabled = False
        try:
            diffs.append(Diff.of(base, run_side(fam, "torch", dropout=dropout)))
        finally:
            torch.backends.mkldnn.enabled = old

    def mx(ds: list[dict]) -> dict:
        return {n: (max(d[n][0] for d in ds), max(d[n][1] for d in ds)) for n in ds[0]}

    return Diff([max(x) for x in zip(*(d.loss for d in diffs))], max(d.out0 for d in diffs),
                mx([d.grads0 for d in diffs]), [mx(list(s)) for s in zip(*(d.states for d in diffs))])


def _within(d: Diff, floor: Diff) -> tuple[bool, list[str]]:
    """Every difference below the strict tolerance or within FLOOR_FACTOR x the floor; the
    tensors only the floor admits."""
    ok = all(x < LOSS_TOL or x <= FLOOR_FACTOR * f for x, f in zip(d.loss, floor.loss))
    ok &= d.out0 < OUT_TOL or d.out0 <= FLOOR_FACTOR * floor.out0
    noisy = set()
    for s, fs in zip(d.states, floor.states):
        for n, (a, r) in s.items():
            if r >= STATE_TOL:
                if a <= FLOOR_FACTOR * fs[n][0]:
                    noisy.add(n)
                else:
                    ok = False
    return ok, sorted(noisy)


def _module(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else "<root>"


def _short(names: list[str], k: int = 3) -> str:
    return ", ".join(names[:k]) + (f" and {len(names) - k} more" if len(names) > k else "")


# ---------------------------------------------------------------------------------------------
# the checks


@dataclass
class Clean:
    fp32: Diff
    fp64: Diff
    shared: Diff
    floor: Diff


def check_clean(fam: str, out: Callable[[str], None]) -> tuple[bool, Clean]:
    ok_all = True
    floor = _floor(fam, "off")
    p32, t32 = run_side(fam, "paddle"), run_side(fam, "torch")
    d32 = Diff.of(p32, t32)
    ok, noisy = _within(d32, floor)
    ok_all &= ok
    w, r = d32.worst_state()
    g0 = max(d32.grads0.items(), key=lambda kv: kv[1][1])
    out(f"{fam:20s} clean fp32, dropout off   {'ok' if ok else 'FAIL'}  loss "
        + " ".join(f"{a:.6f}/{b:.6f}" for a, b in zip(p32.losses, t32.losses))
        + f" (rel {max(d32.loss):.1e}; floor {max(floor.loss):.1e}); step-0 output {d32.out0:.1e}, grads worst "
        f"{g0[1][1]:.1e} ({g0[0]}; floor {floor.grads0[g0[0]][1]:.1e}); tensors after updates worst {r:.1e} ({w}); "
        f"above {STATE_TOL:g} but within the noise floor: {len(noisy)}{' (' + _short(noisy) + ')' if noisy else ''}")
    d64 = Diff.of(run_side(fam, "paddle", dtype="float64"), run_side(fam, "torch", dtype="float64"))
    w64, r64 = d64.worst_state()
    ok = max(d64.loss) < F64_TOL and d64.out0 < F64_TOL and r64 < F64_TOL
    ok_all &= ok
    out(f"{fam:20s} clean fp64, dropout off   {'ok' if ok else 'FAIL'}  loss rel {max(d64.loss):.1e}, step-0 "
        f"output {d64.out0:.1e}, tensors after {steps_of(fam)} updates worst {r64:.1e} ({w64})")
    ps, ts = run_side(fam, "paddle", dropout="shared"), run_side(fam, "torch", dropout="shared")
    dsh = Diff.of(ps, ts)
    pn, tn = [(c.p, c.shape) for c in ps.calls if c.p > 0], [(c.p, c.shape) for c in ts.calls if c.p > 0]
    floor_sh = _floor(fam, "shared") if pn else floor
    ok, noisy = _within(dsh, floor_sh)
    ok &= pn == tn
    ok_all &= ok
    w, r = dsh.worst_state()
    out(f"{fam:20s} clean fp32, shared masks  {'ok' if ok else 'FAIL'}  dropout calls with p>0 over {steps_of(fam)} steps: "
        f"paddle {len(pn)}, torch {len(tn)}, same p and shapes: {pn == tn}; loss "
        + " ".join(f"{a:.6f}/{b:.6f}" for a, b in zip(ps.losses, ts.losses))
        + f" (rel {max(dsh.loss):.1e}); tensors worst {r:.1e} ({w}); within the noise floor only: {len(noisy)}")
    return ok_all, Clean(d32, d64, dsh, floor)


def _dropout_calls(fam: str, side: str, bug: str) -> list[DropCall]:
    """The dropout calls of one forward (train mode) of that side's model built with ``bug``."""
    spec = load_spec(fam, side)
    ctl = DropoutControl("off")
    with bug_env(bug):
        m = spec.model()
        with dropout_control(ctl, side, m):
            args, kwargs = _split(spec.inputs())
            m(*args, **kwargs)
    return ctl.calls


def _has_module(fam: str, side: str, path: str) -> bool:
    with bug_env(""):
        m = load_spec(fam, side).model()
    return path in dict(m.named_sublayers() if side == "paddle" else m.named_modules())


def _changed(bug_d: dict[str, tuple[float, float]], clean_d: dict[str, tuple[float, float]]) -> list[str]:
    return [n for n, (d, _) in bug_d.items() if d > max(BUG_FACTOR * clean_d.get(n, (0.0, 0.0))[0], BUG_FLOOR)]


def check_bug(fam: str, bug: str, clean: Clean) -> tuple[bool, str]:
    spec = truth(fam)["bugs"][bug]
    side, where = spec["side"], spec["where"]
    other = "torch" if side == "paddle" else "paddle"
    want = {"paddle": spec["paddle_module"], "torch": spec["torch_module"]}

    def pair(dtype: str, dropout: str = "off", steps: int | None = None) -> Diff:
        return Diff.of(run_side(fam, "paddle", bug if side == "paddle" else "", dropout=dropout, dtype=dtype, steps=steps),
                       run_side(fam, "torch", bug if side == "torch" else "", dropout=dropout, dtype=dtype, steps=steps))

    if where == "forward":
        a, b = _dropout_calls(fam, side, ""), _dropout_calls(fam, side, bug)
        i = next((i for i, (x, y) in enumerate(zip(a, b)) if (x.module, x.p) != (y.module, y.p)), None)
        if i is None:
            return False, "no dropout call differs"
        rank = sum(1 for c in a[:i] if c.p > 0)  # the same rank among the other side's calls with p > 0
        others = [c for c in _dropout_calls(fam, other, "") if c.p > 0]
        if rank < len(others):
            counterpart = f"{others[rank].module} p {others[rank].p:g}"
            got = {side: a[i].module, other: others[rank].module}
        else:  # the other model has no dropout there (paddlenlp LLaMA: none at all): its module must exist
            counterpart = f"none (no dropout call of rank {rank}; {want[other]} exists)"
            got = {side: a[i].module, other: want[other] if _has_module(fam, other, want[other]) else "?"}
        d = pair("float32", "shared", steps=1)
        ok = got == want and d.loss[0] > 100 * max(clean.shared.loss[0], 1e-7) and spec["first_step"] == 0
        return ok, (f"first differing dropout call on the {side} side: {a[i].module} p {a[i].p:g} -> {b[i].p:g}; "
                    f"counterpart on the {other} side: {counterpart}; step-0 loss with shared masks moves by rel "
                    f"{d.loss[0]:.1e} (clean {clean.shared.loss[0]:.1e})")
    d = pair("float64")
    d32 = pair("float32")
    if where == "loss":
        g = _changed(d.grads0, clean.fp64.grads0)
        ok = d.out0 < F64_TOL and d.loss[0] > 1e-3 and bool(g) and want == {"paddle": "<root>", "torch": "<root>"}
        return ok, (f"step-0 output agrees (fp64 rel {d.out0:.1e}); loss differs by rel {d.loss[0]:.1e} "
                    f"(fp32 {d32.loss[0]:.1e}, clean fp32 {clean.fp32.loss[0]:.1e}); {len(g)} of {len(d.grads0)} "
                    f"step-0 gradients changed")
    g = _changed(d.grads0, clean.fp64.grads0)
    first_k, changed = None, []
    for k in range(1, steps_of(fam) + 1):
        changed = _changed(d.states[k - 1], clean.fp64.states[k - 1])
        if changed:
            first_k = k
            break
    if first_k is None:
        return False, "no update differs"
    order = family(fam).torch_order
    first = min(changed, key=order.index)
    got = {"torch": _module(first), "paddle": _module(family(fam).torch_to_paddle[first])}
    params = family(fam).torch_params
    ok = got == want and not g and d.loss[0] < F64_TOL and first_k == spec["first_step"]
    a32, c32 = d32.states[first_k - 1][first][0], clean.fp32.states[first_k - 1][first][0]
    msg = (f"step-0 loss and gradients as the clean twin ({len(g)} gradients changed); first update that differs: "
           f"{first_k} ({len(changed)} tensors, first {first}: fp64 {d.states[first_k - 1][first][0]:.1e} vs clean "
           f"{clean.fp64.states[first_k - 1][first][0]:.1e}; fp32 {a32:.1e} vs clean {c32:.1e})")
    if where == "running_stats":
        moved = sorted({n for s, c in zip(d.states, clean.fp64.states) for n in _changed(s, c) if n in params})
        ok &= not moved and first not in params
        msg += f"; parameters changed over {steps_of(fam)} updates: {len(moved)}"
    return ok, msg


def verify(fam: str, out: Callable[[str], None] = print) -> bool:
    t0 = time.perf_counter()
    _RUNS.clear()
    ok_all, clean = check_clean(fam, out)
    for bug, spec in truth(fam)["bugs"].items():
        ok, msg = check_bug(fam, bug, clean)
        ok_all &= ok
        out(f"{fam:20s} {bug:16s} {spec['where']:13s} {'ok' if ok else 'FAIL'}  "
            f"{spec['paddle_module']} / {spec['torch_module']}: {msg}")
    out(f"{fam:20s} {'all ok' if ok_all else 'FAILED'} in {time.perf_counter() - t0:.1f} s")
    return ok_all


def main(argv: list[str]) -> int:
    import warnings

    warnings.filterwarnings("ignore")
    chosen = argv or families()
    results = {fam: verify(fam) for fam in chosen}
    bad = [f for f, ok in results.items() if not ok]
    print("every family as its truth says" if not bad else f"FAILED: {bad}")
    return 0 if not bad else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
