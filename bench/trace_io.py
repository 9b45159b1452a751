"""Trace I/O benchmark (issue 2): large-tensor write rate, small-record rate, open+list time.

Run: ``.venv/bin/python bench/trace_io.py [--repeat N] [--dir DIR] [--markdown]``

Prints, from ONE run, the medians of N repetitions of
  (a) writing 64 x 16 MiB float32 tensors through TraceWriter vs ``ndarray.tofile``
      of the same bytes (ratio target >= 0.7),
  (b) writing then reading back 100k small records (<= 4 KB each), records/s
      (target >= 50k/s each way),
  (c) opening a 100k-record trace and iterating all Record metadata, seconds
      (target < 1 s),
  (d) reading the 64 x 16 MiB tensors back with ``Trace.read`` (each byte verified against
      its CRC-32, format 1.1), GB/s (no target; the page cache holds them).

``--ab OLD_TREE`` compares two source trees on a shared, noisy machine: each round runs one
repetition in a fresh process importing ``padiff_trace`` from OLD_TREE, then one from this
checkout (``--tree``), and the medians and new/old ratios are printed per measure:

    git worktree add /tmp/old HEAD && (cd /tmp/old && python setup.py build_ext --inplace)
    .venv/bin/python bench/trace_io.py --ab /tmp/old --repeat 5
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


class _TreeFinder(importlib.abc.MetaPathFinder):
    """``padiff_trace.recorder``/``.analyzer`` from a source tree's ``recorder/``, ``analyzer/``
    (an editable install maps them to this checkout's folders, whatever ``sys.path`` says)."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        pkg, _, sub = fullname.partition(".")
        init = self.tree / sub / "__init__.py"
        if pkg != "padiff_trace" or sub not in ("recorder", "analyzer") or not init.exists():
            return None
        return importlib.util.spec_from_file_location(fullname, init, submodule_search_locations=[str(init.parent)])


def use_tree(tree: Path) -> None:
    """Import ``padiff_trace`` (with its recorder and analyzer) from the source tree ``tree``."""
    sys.path.insert(0, str(tree))
    sys.meta_path.insert(0, _TreeFinder(tree))
    import padiff_trace

    if not Path(padiff_trace.__file__).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"padiff_trace was imported from {padiff_trace.__file__}, not from {tree}")


def tree_from_argv(argv: list[str]) -> Path:
    """The ``--tree`` of the command line (read before argparse: it decides what is imported)."""
    for i, arg in enumerate(argv):
        if arg == "--tree" and i + 1 < len(argv):
            return Path(argv[i + 1])
        if arg.startswith("--tree="):
            return Path(arg.split("=", 1)[1])
    return HERE.parent


use_tree(tree_from_argv(sys.argv))

from padiff_trace import Kind, Phase, RecordHeader, TraceWriter, WriterOptions, open_trace  # noqa: E402


def interleave(script: Path, old: Path, new: Path, rounds: int, extra: list[str]) -> dict[str, list[dict[str, float]]]:
    """Run ``script --tree T --child-json`` for T = old, new in turn, ``rounds`` times; the
    results per tree (each child prints one ``RESULT <json>`` line)."""
    res: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for r in range(rounds):
        for name, tree in (("old", old), ("new", new)):
            out = subprocess.run([sys.executable, str(script), "--tree", str(tree), "--child-json", *extra],
                                 capture_output=True, text=True, cwd=tempfile.gettempdir())
            line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
            if out.returncode != 0 or not line:
                sys.stderr.write(out.stdout[-2000:] + out.stderr[-3000:])
                raise SystemExit(f"{name} ({tree}): child failed (exit {out.returncode})")
            res[name].append(json.loads(line[0][len("RESULT "):]))
            print(f"round {r + 1} {name}: " + ", ".join(f"{k} {v:.4g}" for k, v in res[name][-1].items()), flush=True)
    return res


def print_ab(res: dict[str, list[dict[str, float]]], higher_better: dict[str, bool]) -> None:
    """Medians per tree and the new/old ratio of each measure."""
    print()
    print(f"| measure | old (median of {len(res['old'])}) | new (median of {len(res['new'])}) | new / old |")
    print("|---|---|---|---|")
    for key, up in higher_better.items():
        o = statistics.median(r[key] for r in res["old"])
        n = statistics.median(r[key] for r in res["new"])
        print(f"| {key} ({'higher' if up else 'lower'} is better) | {o:.4g} | {n:.4g} | {n / o:.3f} |")


LARGE_N = 64
LARGE_ELEMS = 4 << 20  # 16 MiB of float32
SMALL_N = 100_000


def _drop(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def bench_large(root: Path, arrays: list[np.ndarray], options: WriterOptions) -> tuple[float, float, float]:
    """Seconds for tofile of all arrays, for TraceWriter of the same arrays, and to read them back."""
    raw = root / "raw.bin"
    t0 = time.perf_counter()
    with open(raw, "wb") as fh:
        for a in arrays:
            a.tofile(fh)
    t_raw = time.perf_counter() - t0
    _drop(raw)

    out = root / "large.trace"
    header = RecordHeader(step=0, phase=Phase.FORWARD, kind=Kind.MODULE_OUTPUT, module="layer", position="out")
    t0 = time.perf_counter()
    with TraceWriter(out, options=options) as w:
        for a in arrays:
            w.append(header, a)
    t_trace = time.perf_counter() - t0
    t0 = time.perf_counter()
    with open_trace(out) as tr:
        for seq in tr:
            tr.read(seq)
    t_read = time.perf_counter() - t0
    _drop(out)
    return t_raw, t_trace, t_read


def _small_headers(n: int) -> list[RecordHeader]:
    kinds = (Kind.MODULE_INPUT, Kind.MODULE_OUTPUT, Kind.GRAD_OUTPUT, Kind.PARAM)
    return [
        RecordHeader(
            step=i // 10_000,
            phase=Phase.BACKWARD if kinds[i % 4] is Kind.GRAD_OUTPUT else Phase.FORWARD,
            kind=kinds[i % 4],
            module=f"encoder.layers.{(i // 4) % 12}.linear{i % 3}",
            module_type="Linear",
            call=i // 4,
            position="out" if i % 4 else "args[0]",
        )
        for i in range(n)
    ]


def bench_small(path: Path, headers: list[RecordHeader], arrays: list[np.ndarray]) -> tuple[float, float, float]:
    """(write s, open+list s, read-all s) for small records."""
    t0 = time.perf_counter()
    with TraceWriter(path) as w:
        for h, a in zip(headers, arrays):
            w.append(h, a)
    t_write = time.perf_counter() - t0

    t0 = time.perf_counter()
    with open_trace(path) as tr:
        n = 0
        for rec in tr.records():
            n += rec.numel
        t_list = time.perf_counter() - t0
        assert len(tr) == len(headers), (len(tr), len(headers))
        t0 = time.perf_counter()
        total = 0
        for seq in tr:
            total += tr.read(seq).size
        t_read = time.perf_counter() - t0
        assert total == n
    return t_write, t_list, t_read


def machine() -> dict[str, str]:
    cpu = "?"
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / (1 << 20):.1f} GiB"
                break
    try:
        disk = subprocess.run(
            ["df", "-hT", tempfile.gettempdir()], capture_output=True, text=True, check=True
        ).stdout.splitlines()[-1]
        disk = " ".join(disk.split()[:3])
    except (OSError, subprocess.CalledProcessError):
        disk = "?"
    import h5py

    return {
        "nproc": str(os.cpu_count()),
        "ram": mem,
        "cpu": cpu,
        "disk": disk,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "h5py": h5py.version.version,
        "hdf5": h5py.version.hdf5_version,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="scratch directory (default: a temp dir under /tmp)")
    ap.add_argument("--small", type=int, default=SMALL_N, help="number of small records")
    ap.add_argument("--large", type=int, default=LARGE_N, help="number of 16 MiB tensors")
    ap.add_argument("--markdown", action="store_true", help="also print a markdown table")
    ap.add_argument("--tree", type=Path, default=HERE.parent, help="source tree to import padiff_trace from (default: this checkout)")
    ap.add_argument("--ab", type=Path, metavar="OLD_TREE", help="interleave --repeat rounds of OLD_TREE and --tree, one process each")
    ap.add_argument("--child-json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ab is not None:
        print("machine: " + ", ".join(f"{k}={v}" for k, v in machine().items()) + f"; load average {os.getloadavg()}")
        sizes = ["--repeat", "1", "--small", str(args.small), "--large", str(args.large)] + (["--dir", args.dir] if args.dir else [])
        res = interleave(Path(__file__).resolve(), args.ab, args.tree, args.repeat, sizes)
        print(f"load average after: {os.getloadavg()}")
        print_ab(res, {"write_ratio": True, "trace_GBps": True, "tofile_GBps": True, "read_GBps": True,
                       "small_write_rps": True, "small_read_rps": True, "list_s": False})
        return 0

    m = machine()
    print("machine: " + ", ".join(f"{k}={v}" for k, v in m.items()))
    rng = np.random.default_rng(0)
    large = [rng.standard_normal(LARGE_ELEMS, dtype=np.float32) for _ in range(args.large)]
    sizes = rng.integers(1, 1024, size=args.small)  # 4 B .. 4 KB of float32
    small = [rng.standard_normal(int(s), dtype=np.float32) for s in sizes]
    headers = _small_headers(args.small)
    large_bytes = sum(a.nbytes for a in large)

    rows: dict[str, list[float]] = {k: [] for k in ("raw", "trace", "big_r", "w", "l", "r")}
    with tempfile.TemporaryDirectory(prefix="padiff-bench-", dir=args.dir) as tmp:
        root = Path(tmp)
        if args.child_json:  # one A/B round: warm up first (thread start-up, first file creations)
            bench_large(root, large[:4], WriterOptions())
        for rep in range(args.repeat):
            t_raw, t_trace, t_big_read = bench_large(root, large, WriterOptions())
            rows["raw"].append(t_raw)
            rows["trace"].append(t_trace)
            rows["big_r"].append(t_big_read)
            t_w, t_l, t_r = bench_small(root / f"small{rep}.trace", headers, small)
            rows["w"].append(t_w)
            rows["l"].append(t_l)
            rows["r"].append(t_r)
            if rep == 0:
                print(f"(single shard size of small trace: {sum(p.stat().st_size for p in (root / 'small0.trace').iterdir()) / 1e6:.1f} MB)")
            _drop(root / f"small{rep}.trace")
            print(
                f"rep {rep}: raw {large_bytes / t_raw / 1e9:.2f} GB/s, trace {large_bytes / t_trace / 1e9:.2f} GB/s, "
                f"read back {large_bytes / t_big_read / 1e9:.2f} GB/s; "
                f"small write {args.small / t_w:,.0f} rec/s, list {t_l:.3f} s, read {args.small / t_r:,.0f} rec/s",
                flush=True,
            )
    med = {k: statistics.median(v) for k, v in rows.items() if v}
    ratio = med["raw"] / med["trace"]
    w_rate = args.small / med["w"]
    r_rate = args.small / med["r"]
    if args.child_json:
        print("RESULT " + json.dumps({
            "write_ratio": ratio, "trace_GBps": large_bytes / med["trace"] / 1e9, "tofile_GBps": large_bytes / med["raw"] / 1e9,
            "read_GBps": large_bytes / med["big_r"] / 1e9, "small_write_rps": w_rate, "small_read_rps": r_rate,
            "list_s": med["l"],
        }))
        return 0
    print()
    print(f"median of {args.repeat}:")
    print(
        f"(a) large write  {args.large} x 16 MiB: tofile {large_bytes / med['raw'] / 1e9:.2f} GB/s, "
        f"TraceWriter {large_bytes / med['trace'] / 1e9:.2f} GB/s, ratio {ratio:.2f} (target >= 0.7) "
        f"{'OK' if ratio >= 0.7 else 'MISS'}"
    )
    print(
        f"(b) small records {args.small:,}: write {w_rate:,.0f} rec/s, read {r_rate:,.0f} rec/s "
        f"(target >= 50,000) {'OK' if min(w_rate, r_rate) >= 50_000 else 'MISS'}"
    )
    print(f"(c) open + list {args.small:,} records: {med['l']:.3f} s (target < 1 s) {'OK' if med['l'] < 1 else 'MISS'}")
    print(f"(d) large read back (verified): {large_bytes / med['big_r'] / 1e9:.2f} GB/s")
    if args.markdown:
        print()
        print("| measure | median | target |")
        print("|---|---|---|")
        print(f"| tofile, {args.large} x 16 MiB float32 | {large_bytes / med['raw'] / 1e9:.2f} GB/s | |")
        print(f"| TraceWriter, same tensors | {large_bytes / med['trace'] / 1e9:.2f} GB/s | |")
        print(f"| ratio TraceWriter / tofile | {ratio:.2f} | >= 0.7 |")
        print(f"| small records write (<= 4 KB, {args.small:,}) | {w_rate:,.0f} rec/s | >= 50,000 |")
        print(f"| small records read back (`Trace.read`) | {r_rate:,.0f} rec/s | >= 50,000 |")
        print(f"| open + list all Record metadata | {med['l']:.3f} s | < 1 s |")
        print(f"| large tensors read back, verified (`Trace.read`) | {large_bytes / med['big_r'] / 1e9:.2f} GB/s | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
