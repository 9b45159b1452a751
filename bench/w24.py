"""W24 side by side (issue 5): bare runs vs padiff-trace (full, stats-only) vs PaDiff.

W24 = 24 x (Linear 1024 + LayerNorm + GELU), input [16,128,1024], forward + backward,
the same weights in both frameworks. Every configuration runs as separate processes,
timed with /usr/bin/time (wall, peak RSS per process), repeated --reps times; medians
and ratios are printed.

    python bench/w24.py [--reps 2] [--padiff-python /tmp/padiff-env/bin/python]

(a) bare: one process per framework running the spec's model fwd+bwd, no recorder
(b) padiff-trace full: record paddle, record torch (replaying paddle's inputs+weights), compare
(c) padiff-trace stats-only: the same with --stats-only
(b') ``padiff-trace run`` (the same as (b) in one command), sequential and with --concurrent
(d) PaDiff 0.2.0 auto_diff (both models in one process, auto_weights, loss (out**2).mean()),
    from a separate environment; it must print PADIFF_RESULT True or the run is rejected
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPEC_P, SPEC_T = HERE / "specs" / "w24_paddle.py", HERE / "specs" / "w24_torch.py"

BARE = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("spec", sys.argv[1]); mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
m = mod.model(); args = mod.inputs()
out = m(*args); mod.loss(out).backward()
"""

PADIFF = """
import sys, os, time
import numpy as np
from padiff import auto_diff
import torch, paddle
N = int(os.environ.get("W24_LAYERS", "24")); D = int(os.environ.get("W24_DIM", "1024"))
class PB(paddle.nn.Layer):
    def __init__(self):
        super().__init__(); self.linear = paddle.nn.Linear(D, D); self.norm = paddle.nn.LayerNorm(D); self.act = paddle.nn.GELU()
    def forward(self, x): return self.act(self.norm(self.linear(x)))
class TB(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.linear = torch.nn.Linear(D, D); self.norm = torch.nn.LayerNorm(D); self.act = torch.nn.GELU()
    def forward(self, x): return self.act(self.norm(self.linear(x)))
class PN(paddle.nn.Layer):
    def __init__(self):
        super().__init__(); self.blocks = paddle.nn.LayerList([PB() for _ in range(N)])
    def forward(self, x):
        for b in self.blocks: x = b(x)
        return x
class TN(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.blocks = torch.nn.ModuleList([TB() for _ in range(N)])
    def forward(self, x):
        for b in self.blocks: x = b(x)
        return x
x = np.random.default_rng(0).standard_normal((16, 128, D)).astype("float32")
inp = ({"x": paddle.to_tensor(x)}, {"x": torch.as_tensor(x)})
ok = auto_diff(PN(), TN(), inp, auto_weights=True, options={"atol": 1e-4, "rtol": 1e-3, "compare_mode": "mean"},
               loss_fn=[lambda o: (o ** 2).mean(), lambda o: (o ** 2).mean()])
print("PADIFF_RESULT", ok)
"""


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, peak RSS MiB, exit code) of one process."""
    proc = subprocess.run(["/usr/bin/time", "-f", "__t %e %M", *argv], env=env, capture_output=True, text=True)
    m = re.search(r"__t ([\d.]+) (\d+)", proc.stderr)
    if m is None:
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-3000:])
        raise SystemExit(f"failed: {' '.join(argv)}")
    if proc.returncode not in (0, 1) or ("padiff" in argv[0] and "PADIFF_RESULT" not in proc.stdout):
        sys.stderr.write(proc.stderr[-3000:])
        raise SystemExit(f"failed: {' '.join(argv[:3])}")
    return float(m.group(1)), int(m.group(2)) / 1024, proc.returncode


def run_config(name: str, py: str, padiff_py: str | None, work: Path, env: dict[str, str]) -> dict[str, list[float]]:
    cli = [py, "-m", "padiff_trace"]
    steps: list[tuple[str, list[str]]]
    a, b = work / "p.trace", work / "t.trace"
    if name == "bare":
        steps = [("paddle", [py, "-c", BARE, str(SPEC_P)]), ("torch", [py, "-c", BARE, str(SPEC_T)])]
    elif name in ("full", "stats-only"):
        extra = ["--stats-only"] if name == "stats-only" else []
        steps = [
            ("paddle", [*cli, "record", str(SPEC_P), "--out", str(a), "--force", *extra]),
            ("torch", [*cli, "record", str(SPEC_T), "--out", str(b), "--force", "--inputs-from", str(a), "--weights-from", str(a), *extra]),
            ("compare", [*cli, "compare", str(a), str(b), "--quiet"]),
        ]
    elif name in ("run", "run-concurrent"):
        # the product's one command: both recorders (one after the other, or at once), then compare
        conc = ["--concurrent"] if name == "run-concurrent" else []
        steps = [("run", [*cli, "run", str(SPEC_P), str(SPEC_T), "--out", str(work / "run"), "--force", *conc])]
    else:
        assert padiff_py is not None
        # the same W24 written for PaDiff (its auto_diff needs a root with named sub-layers;
        # a bare Sequential root fails inside PaDiff 0.2.0)
        steps = [("padiff", [padiff_py, "-c", PADIFF])]
    out: dict[str, list[float]] = {"wall": [], "rss": []}
    total, peak = 0.0, 0.0
    for label, argv in steps:
        wall, rss, _ = timed(argv, env)
        print(f"    {name:<10} {label:<8} {wall:7.1f} s  {rss:7.0f} MiB", flush=True)
        total += wall
        peak = max(peak, rss)
        out.setdefault(f"{label}_wall", []).append(wall)
        out.setdefault(f"{label}_rss", []).append(rss)
    out["wall"].append(total)
    out["rss"].append(peak)
    for d in (a, b, work / "run"):
        shutil.rmtree(d, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--padiff-python", default="/tmp/padiff-env/bin/python", help="python of an env with padiff installed")
    ap.add_argument("--work", default=None, help="directory for traces (default: a temp dir)")
    a = ap.parse_args()
    padiff_py = a.padiff_python if Path(a.padiff_python).exists() else None
    env = dict(os.environ)
    work = Path(a.work or tempfile.mkdtemp(prefix="w24-"))
    work.mkdir(parents=True, exist_ok=True)
    configs = ["bare", "full", "stats-only", "run", "run-concurrent"] + (["padiff"] if padiff_py else [])
    res: dict[str, dict[str, list[float]]] = {c: {} for c in configs}
    for rep in range(a.reps):
        print(f"rep {rep + 1}/{a.reps}", flush=True)
        for c in configs:
            got = run_config(c, sys.executable, padiff_py, work, env)
            for k, v in got.items():
                res[c].setdefault(k, []).extend(v)
    med = {c: {k: statistics.median(v) for k, v in d.items()} for c, d in res.items()}
    print("\nmedians (wall = sum of the configuration's processes, RSS = largest process)")
    for c in configs:
        print(f"  ({c}) wall {med[c]['wall']:6.1f} s   peak RSS {med[c]['rss']:6.0f} MiB")
    bare = med["bare"]
    print("\nratios")
    print(f"  (b) full / (a) bare        wall {med['full']['wall'] / bare['wall']:.2f}")
    print(f"  (c) stats-only / (a) bare  wall {med['stats-only']['wall'] / bare['wall']:.2f}")
    for fw in ("paddle", "torch"):
        for c in ("full", "stats-only"):
            print(f"  {c:<10} {fw} recorder RSS / bare {fw} RSS: {med[c][fw + '_rss'] / bare[fw + '_rss']:.2f}")
    print(f"  run (sequential) / (a)     wall {med['run']['wall'] / bare['wall']:.2f}")
    print(f"  run --concurrent / (a)     wall {med['run-concurrent']['wall'] / bare['wall']:.2f}")
    if "padiff" in med:
        print(f"  (b) full / (d) PaDiff      wall {med['full']['wall'] / med['padiff']['wall']:.2f}")
        print(f"  run (sequential) / (d)     wall {med['run']['wall'] / med['padiff']['wall']:.2f}")
        print(f"  run --concurrent / (d)     wall {med['run-concurrent']['wall'] / med['padiff']['wall']:.2f}")
        print(f"  (d) PaDiff peak RSS {med['padiff']['rss']:.0f} MiB vs largest padiff-trace process {med['full']['rss']:.0f} MiB")


if __name__ == "__main__":
    main()
