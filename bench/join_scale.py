"""How far one machine joins a sharded run (issue 29): ``padiff-trace join`` on a synthetic
tensor-parallel trace, time and peak memory against the trace's size.

Run: ``.venv/bin/python bench/join_scale.py [--gb 2] [--ranks 2] [--mib 16] [--dir DIR]``

Writes a multi-rank trace as launchers' recorders leave it (``ranks.json``, ``rank-NNNNN/`` with
meta ``distributed``) holding ``--gb`` of float32 records in all, each a ``--mib`` MiB tensor split
on its last axis across ``--ranks`` ranks (a column-parallel output), half of them replicated
instead (a row-parallel output after its all-reduce), and the single-process trace they are
joined like. Then, in a fresh process each, ``join`` and ``compare`` of the joined trace: wall
time, GB/s over the multi-rank trace's bytes, and peak RSS (``ru_maxrss``), whose growth should
follow one record's slices, not the trace.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from padiff_trace import Kind, Phase, RecordHeader, TraceWriter, recorder

_CHILD = """
import resource, sys, time
from padiff_trace import pipeline, analyzer
t = time.perf_counter()
if sys.argv[1] == "join":
    r = pipeline.join_ranks(sys.argv[2], sys.argv[3], like=sys.argv[4], overwrite=True)
    what = dict(r.counts)
else:
    with analyzer.compare(sys.argv[2], sys.argv[3], quiet=True) as rep:
        what = rep.verdict
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, repr(what))
"""


def _header(i: int) -> RecordHeader:
    return RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, f"layers.{i}", "Linear", call=i, parent=-1, position="out")


def build(root: Path, gb: float, ranks: int, mib: int) -> tuple[Path, Path, int]:
    rows = 1024
    cols = mib * (1 << 20) // 4 // rows
    cols -= cols % ranks
    n = max(1, int(gb * (1 << 30) / (rows * cols * 4)))
    multi, single = root / "tp.trace", root / "one.trace"
    multi.mkdir(parents=True)
    (multi / "ranks.json").write_text(json.dumps({"format": recorder.RANKS_FORMAT, "version": 1, "world_size": ranks,
                                                  "launcher": "torchrun", "launch_id": "bench", "framework": "torch"}))
    writers = [TraceWriter(multi / f"rank-{k:05d}", {"distributed": {
        "rank": k, "world_size": ranks, "local_rank": k, "backend": "gloo", "launcher": "torchrun", "launch_id": "bench",
        "detected_from": "environment"}}) for k in range(ranks)]
    rng = np.random.default_rng(0)
    with TraceWriter(single) as one:
        for i in range(n):
            full = rng.standard_normal((rows, cols), dtype=np.float32)
            one.append(_header(i), full)
            if i % 2:  # replicated (after an all-reduce)
                for w in writers:
                    w.append(_header(i), full)
            else:  # split on the last axis (column-parallel)
                for w, part in zip(writers, np.split(full, ranks, axis=1)):
                    w.append(_header(i), np.ascontiguousarray(part))
    for w in writers:
        w.close()
    size = sum(p.stat().st_size for p in multi.rglob("*.h5"))
    return multi, single, size


def child(*args: str) -> tuple[float, float, str]:
    out = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, check=True).stdout.split(maxsplit=2)
    return float(out[0]), float(out[1]), out[2].strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=2.0, help="float32 bytes of the single-process trace")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--mib", type=int, default=16, help="size of one full tensor")
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--build-into", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.build_into is not None:  # in a child: Linux keeps a process's peak RSS across exec, so the
        build(a.build_into, a.gb, a.ranks, a.mib)  # measured children start from a small parent
        return
    root = Path(tempfile.mkdtemp(prefix="padiff-join-bench-", dir=a.dir))
    try:
        t = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--gb", str(a.gb), "--ranks", str(a.ranks), "--mib", str(a.mib),
                        "--build-into", str(root)], check=True)
        built = time.perf_counter() - t
        multi, single = root / "tp.trace", root / "one.trace"
        size = sum(p.stat().st_size for p in multi.rglob("*.h5"))
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        j_s, j_rss, counts = child("join", str(multi), str(root / "joined.trace"), str(single))
        c_s, c_rss, verdict = child("compare", str(root / "joined.trace"), str(single))
        print(f"machine: {platform.machine()}, nproc={len(__import__('os').sched_getaffinity(0))}, python {platform.python_version()}")
        print(f"multi-rank trace: {a.ranks} ranks, {size / 1e9:.2f} GB on disk, {a.mib} MiB tensors (built in {built:.1f} s)")
        print(f"join:    {j_s:6.1f} s  {size / 1e9 / j_s:5.2f} GB/s  peak RSS {j_rss:7.0f} MiB  rules {counts}")
        print(f"compare: {c_s:6.1f} s  peak RSS {c_rss:7.0f} MiB  verdict {verdict}")
        print(f"(this parent's peak RSS, where the children's start: {base:.0f} MiB; one full tensor: {a.mib} MiB)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
