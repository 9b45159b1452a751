"""Interleaved A/B of recording overhead between two source trees (e.g. a worktree of an
older commit and this checkout) on W24: each round runs both trees in fresh processes, one
after the other, so a slow phase of a shared machine hits both alike.

    git worktree add /tmp/old <commit> && (cd /tmp/old && python setup.py build_ext --inplace)
    .venv/bin/python bench/ab_recorder.py --old /tmp/old --framework torch --rounds 5

Each process: one warm-up, then 2 timed iterations each of bare, stats-only and full
(trace written and closed); it reports its median stats-only and full time divided by its
own bare time. The script prints each round and the medians per tree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import importlib.util, shutil, statistics, sys, time
fw, spec_path, trace = sys.argv[1], sys.argv[2], sys.argv[3]
spec = importlib.util.spec_from_file_location("spec", spec_path); mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
import padiff_trace, recorder
model = mod.model(); (x,) = mod.inputs()

def iteration(mode):
    t0 = time.perf_counter()
    if mode == "bare":
        mod.loss(model(x)).backward()
    else:
        with recorder.record(model, trace, overwrite=True, stats_only=(mode == "stats")) as rec:
            loss = rec.loss(mod.loss(model(x)))
            loss.backward()
            rec.step()
    dt = time.perf_counter() - t0
    model.zero_grad(set_to_none=True) if fw == "torch" else model.clear_gradients()
    shutil.rmtree(trace, ignore_errors=True)
    return dt

iteration("full")
times = {m: [] for m in ("bare", "stats", "full")}
for _ in range(2):
    for m in times:
        times[m].append(iteration(m))
print("RESULT", padiff_trace.__file__, *(statistics.median(v) for v in times.values()))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True, help="source tree A (its C kernel built in place)")
    ap.add_argument("--new", default=str(HERE.parent), help="source tree B (default: this checkout)")
    ap.add_argument("--framework", choices=["torch", "paddle"], default="torch")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    spec = HERE / "specs" / f"w24_{a.framework}.py"
    trace = Path(tempfile.mkdtemp(prefix="ab-recorder-")) / "t.trace"
    res: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
    for r in range(a.rounds):
        for name, tree in (("old", a.old), ("new", a.new)):
            env = dict(os.environ, PYTHONPATH=tree)
            out = subprocess.run([sys.executable, "-c", CHILD, a.framework, str(spec), str(trace)],
                                 env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
            line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
            if out.returncode != 0 or not line:
                sys.stderr.write(out.stderr[-3000:])
                raise SystemExit(f"{name}: child failed (exit {out.returncode})")
            _, where, bare, stats, full = line[0].split()
            if not Path(where).resolve().is_relative_to(Path(tree).resolve()):
                raise SystemExit(f"{name}: imported padiff_trace from {where}, not from {tree}")
            res[name].append((float(stats) / float(bare), float(full) / float(bare)))
            print(f"round {r + 1} {name}: stats-only {res[name][-1][0]:.3f}x  full {res[name][-1][1]:.3f}x", flush=True)
    for name, v in res.items():
        print(f"{name} median: stats-only {statistics.median(s for s, _ in v):.3f}x  "
              f"full {statistics.median(f for _, f in v):.3f}x bare")


if __name__ == "__main__":
    main()
