"""Per-module outputs with forward hooks: where does a planted bug first show, on each side?

Usage: .venv/bin/python tests/vision_pairs/_bug_modules.py FAMILY BUG   (no padiff-trace involved)
Builds clean paddle (P), clean torch (T), and the buggy side (B), weights copied from P along the
truth pairs. Buggy side X: innermost module calls whose inputs agree with clean X and whose output
differs. Other side Y: calls whose inputs match values of the buggy run but whose output matches a
clean-X value and no buggy-X value. Train pairs: every model is built fresh, runs once.
"""
import os, sys, json
import numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "real_pairs"))
import verify_truth as vt
import paddle, torch

fam, bug = sys.argv[1], sys.argv[2]
side = vt.truth(fam)["bugs"][bug]["side"]


def arrs(x):
    out = []
    if isinstance(x, (list, tuple)):
        for e in x: out += arrs(e)
    elif isinstance(x, paddle.Tensor):
        out.append(x.numpy().astype(np.float64).copy())
    elif isinstance(x, torch.Tensor):
        out.append(x.detach().numpy().astype(np.float64).copy())
    return out


def record(fw, m, spec):
    calls = []
    stack = []
    if fw == "paddle":
        mods = list(m.named_sublayers(include_self=True))
    else:
        mods = list(m.named_modules())
    for name, mod in mods:
        def pre(mod_, inp, name=name):
            calls.append([name, arrs(inp), None]); stack.append(len(calls) - 1)
        def post(mod_, inp, out, name=name):
            calls[stack.pop()][2] = arrs(out)
        if fw == "paddle":
            mod.register_forward_pre_hook(pre); mod.register_forward_post_hook(post)
        else:
            mod.register_forward_pre_hook(pre); mod.register_forward_hook(post)
    args, kwargs = spec.inputs()
    ctx = paddle.no_grad() if fw == "paddle" else torch.no_grad()
    with ctx:
        m(*args, **kwargs)
    return calls


def rel(a, b):
    if a.shape != b.shape: return np.inf
    return float(np.abs(a - b).max() / (np.abs(b).max() + 1e-12))


def close(xs, ys, tol=1e-4):
    return len(xs) == len(ys) and all(rel(a, b) < tol for a, b in zip(xs, ys))


def found(a, pool, tol=1e-4):
    return any(rel(a, b) < tol for b in pool if b.shape == a.shape)


def build(s, b):
    spec, m = vt._build(fam, s, b)
    return spec, m

pspec, P = build("paddle", "")
tspec, T = build("torch", "")
vt.transfer(fam, P, T)
if side == "paddle":
    _, B = build("paddle", bug)
    vt.transfer(fam, B, T)  # sanity: weights equal to P's
    X, Y, xspec, yspec, xfw, yfw = P, T, pspec, tspec, "paddle", "torch"
else:
    _, B = build("torch", bug)
    vt.transfer(fam, P, B)
    X, Y, xspec, yspec, xfw, yfw = T, P, tspec, pspec, "torch", "paddle"
cx = record(xfw, X, xspec)
cb = record(xfw, B, xspec)
cy = record(yfw, Y, yspec)
print("calls", xfw, len(cx), "buggy", len(cb), yfw, len(cy))
# buggy side: align by call index (same structure) where names agree
cands = []
for i, (a, b) in enumerate(zip(cx, cb)):
    if a[0] != b[0]:
        print("call order diverges at", i, a[0], b[0]); break
    if close(b[1], a[1]) and not close(b[2], a[2]):
        cands.append((i, b[0], max(rel(u, v) for u, v in zip(b[2], a[2])) if len(b[2]) == len(a[2]) else "shape"))
print(f"[{xfw} buggy side] calls with agreeing inputs, differing output:")
for c in cands[:8]: print("   ", c)
inn = [c for c in cands if not any(d[1].startswith(c[1] + ".") or (c[1] == "" and d[1]) for d in cands if d[0] > c[0])]
print("  innermost first:", inn[:3])
# other side
cleanx_out = [o for c in cx for o in c[2]] + [i for c in cx for i in c[1]]
bug_vals = [o for c in cb for o in c[2]] + [i for c in cb for i in c[1]]
yc = []
for i, (n, ins, outs) in enumerate(cy):
    if ins and all(found(a, bug_vals) for a in ins) and outs and any(found(o, cleanx_out) and not found(o, bug_vals) for o in outs):
        yc.append((i, n))
print(f"[{yfw} other side] inputs found in buggy run, output = a clean value absent from buggy run:")
for c in yc[:8]: print("   ", c)
inn = [c for c in yc if not any(d[1].startswith(c[1] + ".") or (c[1] == "" and d[1]) for d in yc if d[0] > c[0])]
print("  innermost first:", inn[:3])
