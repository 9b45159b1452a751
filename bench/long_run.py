"""Long training runs stay cheap (issue 25): per-step recording cost and analyzer memory.

A small MLP (4 x Linear 256 + GELU + Dropout + LayerNorm, batch 32, AdamW; bench/specs/long_*.py)
is trained for N steps in four ways, each in its own process:

    bare      the spec's loop without padiff-trace (forward, loss, backward, step, zero-grad)
    recorded  ``padiff-trace record SPEC --steps N --stats-only --every K`` (A: torch; B: paddle
              replaying A's weights, inputs and dropout masks, as ``run`` does)

Per-step cost is taken from two run lengths, (T(N) - T(N/10)) / (N - N/10), so interpreter
start-up and framework imports cancel out. Then ``padiff-trace compare`` of the two traces is
run for both lengths, each in a fresh process, with its peak RSS: the analyzer's memory must
not grow with the number of steps (the ratio of the two peaks is printed).

    .venv/bin/python bench/long_run.py [--steps 1000] [--every 10] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SPECS = {"torch": HERE / "specs" / "long_torch.py", "paddle": HERE / "specs" / "long_paddle.py"}

BARE = r"""
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("spec", sys.argv[1]); mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
steps = int(sys.argv[2])
m = mod.model(); x = mod.inputs(); opt = mod.optimizer(m)
for _ in range(steps):
    mod.loss(m(x)).backward()
    opt.step()
    (opt.zero_grad if hasattr(opt, "zero_grad") else opt.clear_grad)()
"""

# runs a command and prints its peak RSS (the only child this process waits for)
MEASURE = r"""
import resource, subprocess, sys, time
t0 = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(rc, time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""


def measured(argv: list[str]) -> tuple[int, float, float]:
    """(exit code, seconds, peak RSS MiB) of ``argv`` run in a fresh process."""
    out = subprocess.run([sys.executable, "-c", MEASURE, *argv], capture_output=True, text=True, cwd=ROOT, check=True)
    rc, secs, rss = out.stdout.split()
    return int(rc), float(secs), float(rss)


def cli(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "padiff_trace", *map(str, args)]


def record(fw: str, steps: int, every: int, out: Path, source: Path | None) -> tuple[float, float]:
    args = cli("record", SPECS[fw], "--out", out, "--steps", steps, "--stats-only", "--every", every, "--force")
    if source is not None:
        args += ["--weights-from", str(source), "--inputs-from", str(source), "--random-from", str(source)]
    rc, secs, rss = measured(args)
    if rc != 0:
        raise SystemExit(f"record {fw} {steps} steps failed (exit {rc}): {' '.join(args)}")
    return secs, rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--work", type=Path, default=None)
    o = ap.parse_args()
    work = o.work or Path(tempfile.mkdtemp(prefix="padiff-long-"))
    short = max(o.every, o.steps // 10)
    rows: dict[str, dict[str, float]] = {}
    compares: dict[int, tuple[int, float, float]] = {}
    try:
        for n in (short, o.steps):
            for fw in ("torch", "paddle"):
                rc, secs, _ = measured([sys.executable, "-c", BARE, str(SPECS[fw]), str(n)])
                if rc:
                    raise SystemExit(f"bare {fw} failed (exit {rc})")
                rows.setdefault(f"{fw} bare", {})[str(n)] = secs
            a, b = work / f"a{n}.trace", work / f"b{n}.trace"
            rows.setdefault("torch recorded (A)", {})[str(n)] = record("torch", n, o.every, a, None)[0]
            rows.setdefault("paddle recorded (B)", {})[str(n)] = record("paddle", n, o.every, b, a)[0]
            compares[n] = measured(cli("compare", a, b, "--report", work / f"rep{n}"))
            doc = json.loads((work / f"rep{n}" / "report.json").read_text())
            print(f"{n} steps (every {o.every}): compare exit {compares[n][0]}, verdict {doc['verdict']}, "
                  f"{len(doc['steps'])} step rows, {compares[n][1]:.1f} s, peak RSS {compares[n][2]:.0f} MiB", flush=True)
        per = {k: (v[str(o.steps)] - v[str(short)]) / (o.steps - short) * 1000 for k, v in rows.items()}
        print(f"\nper-step cost, ms (from {short} and {o.steps} steps; start-up cancels)")
        for fw, rec in (("torch", "torch recorded (A)"), ("paddle", "paddle recorded (B)")):
            print(f"  {fw:7s} bare {per[f'{fw} bare']:7.2f}   recorded --stats-only --every {o.every} {per[rec]:7.2f}"
                  f"   ratio {per[rec] / per[f'{fw} bare']:.2f}")
        (_, ts, rs), (_, tl, rl) = compares[short], compares[o.steps]
        print(f"compare: {short} steps {ts:.1f} s {rs:.0f} MiB; {o.steps} steps {tl:.1f} s {rl:.0f} MiB; "
              f"RSS ratio {rl / rs:.2f}, time ratio {tl / ts:.2f} (steps ratio {o.steps / short:.0f})")
    finally:
        if o.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)")
