"""Analyzer throughput and memory, measured in one run.

1. Throughput: ``analyzer.compare`` on a trace pair vs a raw h5py read of the same
   bytes (both traces), median of ``--repeat`` runs; prints the ratio
   (raw-read time / compare time; target >= 0.5).
2. Peak RSS of ``compare`` in fresh subprocesses on a small and a 4x larger trace
   pair with the same largest tensor (target: flat, <= 2x largest tensor + 300 MB).

    .venv/bin/python bench/compare_io.py --small-gb 1 --large-gb 4

``--ab OLD_TREE``: the small pair is written once, then ``--repeat`` rounds each measure the
throughput ratio (median of 3, as above) in a fresh process importing ``padiff_trace`` from
OLD_TREE, then in one importing it from this checkout (``--tree``); medians over the rounds
and new/old ratios are printed (no RSS):

    .venv/bin/python bench/compare_io.py --ab /tmp/old --repeat 7
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np
import trace_io  # this folder: --tree (where padiff_trace is imported from), interleaved A/B runs

from padiff_trace import Kind, Phase, RecordHeader, TraceWriter


def make_pair(root: Path, total_bytes: int, tensor_mb: int) -> tuple[Path, Path]:
    """Two float32 traces of ``total_bytes`` each: a chain of Linear-like calls."""
    n = tensor_mb * (1 << 20) // 4
    count = max(1, total_bytes // (n * 4))
    rng = np.random.default_rng(0)
    base = rng.standard_normal(n).astype(np.float32)
    paths = []
    for side, fw in (("a", "paddle"), ("b", "torch")):
        p = root / side
        noise = 1 + 1e-7 * (1 if side == "a" else -1)
        with TraceWriter(p, meta={"framework": fw}) as w:
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]"), base[:16])
            for i in range(count):
                h = RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, f"l{i}", "Linear", i + 1, 0, 0, "out")
                w.append(h, (base * np.float32(noise)) if i % 2 else base)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out"), base[:16])
        paths.append(p)
    return paths[0], paths[1]


def raw_read(p: Path) -> int:
    total = 0
    for shard in sorted(p.glob("shard-*.h5")):
        with h5py.File(shard, "r") as f:
            blob = f["blob"]
            step = 64 << 20
            for off in range(0, blob.shape[0], step):
                total += blob[off : off + step].nbytes
            for ds in f.get("tensors", {}).values():
                total += ds[...].nbytes
    return total


def throughput(a: Path, b: Path, repeat: int) -> dict[str, float]:
    from padiff_trace import analyzer

    t_raw, t_cmp = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        nbytes = raw_read(a) + raw_read(b)
        t_raw.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        analyzer.compare(a, b, progress=False)
        t_cmp.append(time.perf_counter() - t0)
    raw, cmp_ = statistics.median(t_raw), statistics.median(t_cmp)
    return {"bytes": nbytes, "raw_s": raw, "compare_s": cmp_, "raw_MBps": nbytes / raw / 1e6,
            "compare_MBps": nbytes / cmp_ / 1e6, "ratio": raw / cmp_}


def _peak_mb() -> float:
    """This process's peak RSS. Linux: VmHWM of the process image. ``ru_maxrss`` is not used
    there: it survives exec, so a child forked from a parent holding 400 MB reports >= 400 MB
    (what made the first measurement of this benchmark read 464 MB)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(a: str, b: str) -> None:
    from padiff_trace import analyzer

    analyzer.compare(a, b, progress=False)
    print(json.dumps({"maxrss_mb": _peak_mb()}))


def peak_rss(a: Path, b: Path) -> float:
    out = subprocess.run([sys.executable, __file__, "--child", str(a), str(b)], check=True,
                         capture_output=True, text=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["maxrss_mb"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small-gb", type=float, default=1.0, help="bytes per trace, small pair")
    ap.add_argument("--large-gb", type=float, default=4.0, help="bytes per trace, large pair")
    ap.add_argument("--tensor-mb", type=int, default=64, help="size of each tensor")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", help="scratch directory (default: a temporary one)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--tree", type=Path, default=trace_io.HERE.parent, help="source tree to import padiff_trace from (default: this checkout)")
    ap.add_argument("--ab", type=Path, metavar="OLD_TREE", help="interleave --repeat throughput rounds of OLD_TREE and --tree")
    ap.add_argument("--pair", nargs=2, type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--child-json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(*args.child)
        return
    if args.pair:  # one A/B round: the throughput on a given pair, median of 3 in this process
        got = throughput(*args.pair, 3)
        print("RESULT " + json.dumps({k: got[k] for k in ("ratio", "compare_MBps", "raw_MBps")}))
        return
    if args.ab is not None:
        print("machine: " + ", ".join(f"{k}={v}" for k, v in trace_io.machine().items()) + f"; load average {os.getloadavg()}")
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            a, b = make_pair(Path(tmp), int(args.small_gb * (1 << 30)), args.tensor_mb)
            res = trace_io.interleave(Path(__file__).resolve(), args.ab, args.tree, args.repeat, ["--pair", str(a), str(b)])
        print(f"load average after: {os.getloadavg()}")
        trace_io.print_ab(res, {"ratio": True, "compare_MBps": True, "raw_MBps": True})
        return
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        res = {}
        for name, gb in (("small", args.small_gb), ("large", args.large_gb)):
            a, b = make_pair(root / name, int(gb * (1 << 30)), args.tensor_mb)
            rss = [peak_rss(a, b) for _ in range(args.repeat)]
            res[name] = {"gb_per_trace": gb, "peak_rss_mb_median": statistics.median(rss)}
            if name == "small":
                res["throughput"] = throughput(a, b, args.repeat)
            for side in (a, b):
                for f in side.glob("shard-*.h5"):
                    f.unlink()
        res["largest_tensor_mb"] = args.tensor_mb
        res["rss_bound_mb"] = 2 * args.tensor_mb + 300
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
