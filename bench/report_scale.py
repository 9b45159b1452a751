"""Report size and compare peak RSS with ``--report`` as the number of records grows.

Run: ``.venv/bin/python bench/report_scale.py [--sizes 10000 100000 1000000] [--markdown]``

For each size it writes two synthetic traces (paddle vs torch) of ``size`` records: one
step, a root call holding ``size // 2`` Linear calls, each with a 16-element input and
output and a three-frame stack (the stack strings repeat the way a model's do). B differs
from A by a tiny amount everywhere and by a planted jump in one call near the end. Then
``padiff-trace compare A B --report DIR`` runs in a fresh process and the bench reads that
process's peak RSS (``ru_maxrss`` from ``wait4`` on that child), its wall time, and the report files' sizes.
It checks that the report found the planted call. Peak RSS per record and the ratio of the
largest to the smallest size's peak are printed (flat: the ratio stays near 1).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from padiff_trace import Frame, Kind, Phase, RecordHeader, TraceWriter

logger = logging.getLogger("report_scale")

ELEMS = 16


def _stack(i: int) -> tuple[Frame, ...]:
    return (
        Frame("examples/model.py", 40 + i % 7, "forward", "x = layer(x)"),
        Frame("lib/linear.py", 12, "forward", "return x @ self.weight + self.bias"),
        Frame("train.py", 9, "<module>", "out = model(x)"),
    )


def write_trace(path: Path, n_records: int, framework: str, planted: int) -> None:
    rng = np.random.default_rng(0)
    base = rng.standard_normal(ELEMS).astype(np.float32)
    bump = np.float32(1e-7 if framework == "torch" else 0.0)
    calls = max(1, n_records // 2 - 1)
    with TraceWriter(path, {"framework": framework}) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]"), base)
        for i in range(calls):
            x = base + np.float32(i % 1000) * np.float32(1e-3)
            y = x * np.float32(1.5) + bump
            if framework == "torch" and i >= planted:
                y = y + np.float32(0.5)
            st = _stack(i)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, f"layers.{i}", "Linear", i + 1, 0, 0, "args[0]", stack=st), x)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, f"layers.{i}", "Linear", i + 1, 0, 0, "out", stack=st), y)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out"), base)


def _dir_mb(p: Path) -> dict[str, float]:
    return {f.name: f.stat().st_size / 2**20 for f in sorted(p.iterdir()) if f.is_file()}


def run_size(n: int, work: Path) -> dict[str, Any]:
    a, b, rep = work / f"a{n}", work / f"b{n}", work / f"report{n}"
    planted = max(1, int((n // 2 - 1) * 0.9))
    t0 = time.perf_counter()
    write_trace(a, n, "paddle", planted)
    write_trace(b, n, "torch", planted)
    t_write = time.perf_counter() - t0
    cmd = [sys.executable, "-m", "padiff_trace", "compare", str(a), str(b), "--report", str(rep), "--quiet", "--atol", "1e-4", "--rtol", "0"]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    peak = usage.ru_maxrss
    if proc.returncode != 1:
        raise SystemExit(f"compare exited {proc.returncode} (expected 1, DIVERGED): {stderr[-2000:]}")
    first = json.loads((rep / "report.json").read_text())["first_divergence"]
    found = first is not None and first["located"] is not None and first["located"]["a"]["module"] == f"layers.{planted}"
    sizes = _dir_mb(rep)
    shutil.rmtree(a)
    shutil.rmtree(b)
    shutil.rmtree(rep)
    return {"records": n, "peak_mb": peak / 1024, "wall_s": wall, "write_s": t_write, "found": found, "files_mb": sizes}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--dir", type=Path, default=None, help="work directory (default: a temporary one)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    work = Path(tempfile.mkdtemp(prefix="report_scale.", dir=args.dir))
    rows = []
    try:
        for n in sorted(args.sizes):
            rows.append(run_size(n, work))
            logger.info("%s", rows[-1])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows.sort(key=lambda r: r["records"])
    if args.markdown:
        logger.info("| records | compare --report peak RSS MB | KB per record | wall s | report.json MB | pairs.csv MB | report.txt MB | report.html MB | found |")
        logger.info("|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            f = r["files_mb"]
            logger.info(
                "| %d | %.0f | %.2f | %.1f | %.1f | %.1f | %.1f | %.2f | %s |", r["records"], r["peak_mb"],
                r["peak_mb"] * 1024 / r["records"], r["wall_s"], f.get("report.json", 0), f.get("pairs.csv", 0),
                f.get("report.txt", 0), f.get("report.html", 0), r["found"],
            )
    if len(rows) > 1:
        logger.info("peak RSS ratio, %d vs %d records: %.2f", rows[-1]["records"], rows[0]["records"],
                    rows[-1]["peak_mb"] / rows[0]["peak_mb"])
    return 0 if all(r["found"] for r in rows) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
