"""Recording overhead (issue 3): bare vs recorded stats-only vs recorded full tensors.

W24 = 24 x (Linear 1024 + LayerNorm + GELU), input [16, 128, 1024], forward + backward
(bench/specs/w24_*.py), in torch AND paddle. Every (framework, mode) runs in its own
subprocess (so its peak RSS is its own), all in this one invocation:

    bare        model(x); loss.backward()
    stats-only  the same inside recorder.record(..., stats_only=True)
    full        the same inside recorder.record(...) writing every tensor to a trace

Each subprocess does one warm-up iteration, then --reps timed iterations (a recorded
iteration includes opening and closing its trace, i.e. all data flushed to the OS);
medians are printed with ratios to bare, peak RSS (ru_maxrss) vs bare, and for full
mode the bytes written, MB/s and the raw ``ndarray.tofile`` rate of the same bytes
in the same directory for reference.

    .venv/bin/python bench/record_overhead.py [--reps 3] [--layers 24] [--work DIR]
                                              [--frameworks torch paddle] [--profile MODE]

``--profile stats-only`` (or full) runs cProfile in that mode's subprocesses and
prints where the time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODES = ("bare", "stats-only", "full")

CHILD = r"""
import cProfile, importlib.util, json, os, pstats, resource, shutil, sys, time
from pathlib import Path
fw, mode, reps, work, profile = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]), sys.argv[5] == "1"
spec = importlib.util.spec_from_file_location("spec", sys.argv[6]); mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
import numpy as np
from padiff_trace import recorder
from padiff_trace import open_trace

model = mod.model()
(x,) = mod.inputs()
trace = work / f"{fw}-{mode}.trace"

def iteration():
    if mode == "bare":
        mod.loss(model(x)).backward()
    else:
        with recorder.record(model, trace, overwrite=True, stats_only=(mode == "stats-only")) as rec:
            loss = rec.loss(mod.loss(model(x)))
            loss.backward()
            rec.step()
    if fw == "torch":
        model.zero_grad(set_to_none=True)
    else:
        model.clear_gradients()

iteration()  # warm-up (allocator, kernels, page cache)
prof = cProfile.Profile() if profile else None
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    if prof: prof.enable()
    iteration()
    if prof: prof.disable()
    times.append(time.perf_counter() - t0)
res = {"fw": fw, "mode": mode, "times": times, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
if mode != "bare":
    with open_trace(trace) as tr:
        res["records"] = len(tr)
        res["bytes"] = tr.size_bytes()
        res["complete"] = tr.complete
if mode == "full":
    # raw reference: the same number of bytes as 8 MiB float32 arrays, ndarray.tofile, same directory
    chunk = np.random.default_rng(0).standard_normal(2 << 20).astype(np.float32)
    n = max(1, res["bytes"] // chunk.nbytes)
    raw = work / f"{fw}-raw.bin"
    t0 = time.perf_counter()
    with open(raw, "wb") as f:
        for _ in range(n):
            chunk.tofile(f)
    res["raw_s"] = time.perf_counter() - t0
    res["raw_bytes"] = n * chunk.nbytes
    raw.unlink()
if prof:
    st = pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime")
    st.print_stats(18)
shutil.rmtree(trace, ignore_errors=True)
print("RESULT " + json.dumps(res), flush=True)
"""


def run_child(py: str, fw: str, mode: str, reps: int, work: Path, profile: bool, env: dict[str, str]) -> dict:
    spec = HERE / "specs" / f"w24_{fw}.py"
    argv = [py, "-c", CHILD, fw, mode, str(reps), str(work), "1" if profile else "0", str(spec)]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"{fw} {mode}: child failed (exit {proc.returncode})")
    if profile:
        prof = proc.stderr[proc.stderr.find("   Ordered by") :] if "Ordered by" in proc.stderr else proc.stderr
        print(f"\n--- cProfile {fw} {mode} (tottime, all timed iterations) ---\n{prof.strip()}\n")
    return json.loads(lines[-1][len("RESULT ") :])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--frameworks", nargs="+", default=["torch", "paddle"], choices=["torch", "paddle"])
    ap.add_argument("--work", help="directory for the traces (default: a temporary directory on local disk)")
    ap.add_argument("--profile", choices=MODES, help="run cProfile in this mode's subprocesses")
    a = ap.parse_args()
    env = dict(os.environ, W24_LAYERS=str(a.layers), W24_DIM=str(a.dim))
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="record-overhead-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"W{a.layers}: {a.layers} x (Linear {a.dim} + LayerNorm + GELU), input [16, 128, {a.dim}], fwd+bwd; "
          f"{a.reps} timed reps per mode; traces in {work}")
    results: dict[tuple[str, str], dict] = {}
    try:
        for fw in a.frameworks:
            for mode in MODES:
                r = run_child(sys.executable, fw, mode, a.reps, work, a.profile == mode, env)
                r["median"] = statistics.median(r["times"])
                results[(fw, mode)] = r
                extra = f", {r['records']} records, {r['bytes'] / 1e6:.0f} MB" if "bytes" in r else ""
                print(f"  {fw:<6} {mode:<10} median {r['median']:6.2f} s  (reps {', '.join(f'{t:.2f}' for t in r['times'])})  "
                      f"peak RSS {r['rss_mib']:.0f} MiB{extra}", flush=True)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    print("\n| framework | mode | median s | ratio to bare | peak RSS MiB | RSS vs bare | MB written | MB/s | raw tofile MB/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fw in a.frameworks:
        bare = results[(fw, "bare")]
        for mode in MODES:
            r = results[(fw, mode)]
            mb = r.get("bytes", 0) / 1e6
            rate = f"{mb / r['median']:.0f}" if mode == "full" else ""
            raw = f"{r['raw_bytes'] / 1e6 / r['raw_s']:.0f}" if "raw_s" in r else ""
            print(f"| {fw} | {mode} | {r['median']:.2f} | {r['median'] / bare['median']:.2f} | {r['rss_mib']:.0f} | "
                  f"{r['rss_mib'] / bare['rss_mib']:.2f} | {mb:.0f} | {rate} | {raw} |")


if __name__ == "__main__":
    main()
