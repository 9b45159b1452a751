"""Fault injection for trace integrity (issue 15): damage a reference trace in many ways and
check that the reader reports the damage and returns only correct numbers and names.

Run: ``.venv/bin/python tests/fault_inject.py [--quick] [--per-region N] [--spread N] [--jobs N]``

Faults: byte and bit flips across whole shards (records, string table, blob, tensor data,
offset and checksum tables, attributes, and evenly spread offsets for HDF5's own metadata),
truncations at many offsets, crafted rows and tables (written through h5py, with and without
recomputed checksums), foreign and misnamed shard files. Each fault runs in a forked child (a
crash or hang counts as a failure) on a copy of the trace; the outcome is one of

* ``detected``  - damage reported (``Trace.damage``/``health``, or open refused with a
                  one-line ``UserError``), every value returned is right;
* ``no effect`` - nothing reported, every record reads back exactly;
* a failure     - ``traceback`` (an exception that is not ours), ``wrong`` (a number, name,
                  shape or statistic differs silently), ``silent loss``, ``crash``, ``hang``.

Prints the counts: faults tried, detected, no effect, failures, records salvaged and lost.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fault_kinds import Fault, crafted_faults, file_faults, flip_faults, truncation_faults

from padiff_trace import (
    DamagedRecordError,
    Frame,
    Kind,
    Phase,
    RecordHeader,
    Summary,
    TraceWriter,
    UserError,
    WriterOptions,
    open_trace,
)

logger = logging.getLogger("fault_inject")
ODD_NAMES = ("layers.3", "odd\x00name", "tab\tand\x01ctrl", "bad\udcffname")


@dataclass
class Outcome:
    kind: str  # detected | no effect | traceback | wrong | silent loss | crash | hang
    salvaged: int
    lost: int
    note: str = ""


# ---------------------------------------------------------------------- the reference trace
def _h(kind: Kind, module: str, position: str = "out", phase: Phase = Phase.FORWARD, step: int = 0) -> RecordHeader:
    stack = (Frame("model.py", 10 + len(module), "forward", f"y = self.{module.split('.', maxsplit=1)[0]}(x)"),)
    return RecordHeader(step=step, phase=phase, kind=kind, module=module, module_type="Linear", position=position,
                        call=len(module), stack=stack)


def build_reference(path: Path, seed: int = 0) -> None:
    """Three shards: weights (small, bfloat16 bits, ints, bool, a large one), activations (odd
    names, a tensor recorded twice, a large float64, non-tensors, stats only), gradients."""
    rng = np.random.default_rng(seed)

    def f32(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    with TraceWriter(path, meta={"tags": {"model": "fault\x00ref"}}, options=WriterOptions(flush_seconds=60)) as w:
        w.append(_h(Kind.PARAM, "layers.3", "weight", Phase.OTHER), f32(64, 300))
        w.append(_h(Kind.PARAM, "layers.3", "bias", Phase.OTHER), f32(64))
        w.append(_h(Kind.PARAM, "embed", "weight", Phase.OTHER), f32(512, 600))  # 1.2 MB: own dataset
        w.append(_h(Kind.PARAM, "norm", "weight", Phase.OTHER), rng.integers(0, 65535, 64, dtype=np.uint16), dtype="bfloat16")
        w.append(_h(Kind.BUFFER, "norm", "count", Phase.OTHER), np.arange(10, dtype=np.int64))
        w.append(_h(Kind.BUFFER, "mask", "m", Phase.OTHER), rng.random(33) > 0.5)
        w.flush()
        w.append(_h(Kind.MODEL_INPUT, "", "args[0]"), f32(4, 64))
        shared = f32(4, 2048)
        for i, name in enumerate(ODD_NAMES):
            w.append(_h(Kind.MODULE_OUTPUT, name), f32(4, 2048) if i else shared)
        w.append(_h(Kind.MODULE_INPUT, "layers.4", "args[0]"), shared)  # the same array again: bytes shared
        w.append(_h(Kind.MODULE_OUTPUT, "big"), rng.standard_normal((160, 1024)))  # 1.3 MB float64
        w.append(_h(Kind.MODULE_OUTPUT, "big", "out[1]"), None, dtype="py:NoneType")
        w.append(_h(Kind.MODULE_OUTPUT, "half"), f32(3, 5).astype(np.float16))
        w.append(_h(Kind.MODULE_OUTPUT, "cplx"), (f32(7) + 1j * f32(7)).astype(np.complex64))
        w.append(_h(Kind.MODULE_OUTPUT, "stats"), Summary(100, (0.0, 1.0, 0.5, 0.1, 0.5, 5.0, 0.0, 0.0)), dtype="float32",
                 shape=(10, 10))
        w.flush()
        w.append(_h(Kind.LOSS, "", "loss", step=0), np.array(0.25, dtype=np.float32))
        w.append(_h(Kind.GRAD_OUTPUT, "layers.3", "out", Phase.BACKWARD), f32(4, 2048))
        w.append(_h(Kind.PARAM_GRAD, "embed", "weight", Phase.BACKWARD), f32(512, 600))


def snapshot(path: Path) -> dict[int, tuple[Any, ...]]:
    """Everything a reader returns about each record: metadata, statistics, stack, data bytes."""
    out: dict[int, tuple[Any, ...]] = {}
    with open_trace(path) as tr:
        for r in tr.records():
            out[r.seq] = _describe(tr, r)
    return out


def _describe(tr: Any, r: Any) -> tuple[Any, ...]:
    meta = (r.step, int(r.phase), int(r.kind), r.module, r.module_type, r.position, r.dtype, r.shape, r.device,
            r.numel, r.has_data, r.call, r.parent, r.call_index, tuple(r.stack),
            np.asarray(list(r.stats.values())).tobytes())
    data = None
    if r.has_data:
        arr = tr.read(r.seq)
        data = (str(arr.dtype), arr.shape, arr.tobytes())
    return meta + (data,)


# ---------------------------------------------------------------------- judging one faulted copy
def evaluate(path: Path, expected: dict[int, tuple[Any, ...]]) -> Outcome:
    """Open, list, read everything, check; compare with ``expected``."""
    try:
        tr = open_trace(path)
    except UserError as exc:
        if "\n" in str(exc):
            return Outcome("traceback", 0, len(expected), f"multi-line error: {exc!r}")
        return Outcome("detected", 0, len(expected), f"refused: {exc}")
    wrong: list[str] = []
    salvaged = lost = 0
    with tr:
        tr.counts(), tr.steps(), str(tr.health), repr(tr)
        seen = set()
        for r in tr.records():
            want = expected.get(r.seq)
            if want is None:
                wrong.append(f"phantom record {r.seq}")
                continue
            seen.add(r.seq)
            try:
                got = _describe(tr, r)
            except DamagedRecordError:
                lost += 1
                if r.damage is None:
                    wrong.append(f"record {r.seq} raised but is not listed as damaged")
                continue
            if got != want and r.damage is not None:  # flagged: its metadata is not trusted either
                lost += 1
            elif got != want:
                which = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
                wrong.append(f"record {r.seq} differs in fields {which}")
            else:
                salvaged += 1
        missing = set(expected) - seen
        lost += len(missing)
        tr.check()
        h = tr.health
        reported = bool(tr.damage) or h.records_skipped > 0
    if wrong:
        return Outcome("wrong", salvaged, lost, "; ".join(wrong[:3]))
    if missing and not reported:
        return Outcome("silent loss", salvaged, lost, f"records {sorted(missing)[:5]} gone, nothing reported")
    if reported:
        return Outcome("detected", salvaged, lost)
    return Outcome("no effect", salvaged, lost)


# ---------------------------------------------------------------------- running
def _copy(src: Path, dst: Path) -> None:
    dst.mkdir()
    for p in src.iterdir():
        shutil.copyfile(p, dst / p.name)


def run_one(trace: Path, expected: dict[int, tuple[Any, ...]], apply: Callable[[Path], None], scratch: Path,
            timeout: float = 60.0) -> Outcome:
    """Apply one fault to a copy of ``trace`` and evaluate it, in a forked child."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(rfd)
        code = 0
        try:
            work = Path(tempfile.mkdtemp(dir=scratch)) / "t"
            _copy(trace, work)
            apply(work)
            try:
                out = evaluate(work, expected)
            except Exception as exc:
                out = Outcome("traceback", 0, len(expected), f"{type(exc).__name__}: {str(exc)[:200]}")
            os.write(wfd, json.dumps(out.__dict__).encode())
            shutil.rmtree(work.parent, ignore_errors=True)
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    os.close(wfd)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(rfd)
            return Outcome("hang", 0, len(expected))
        time.sleep(0.005)
    data = b""
    while chunk := os.read(rfd, 65536):
        data += chunk
    os.close(rfd)
    if not data:
        return Outcome("crash", 0, len(expected), f"child status {status}")
    return Outcome(**json.loads(data))


def faults(root: Path, quick: bool, per_region: int, spread: int, seed: int) -> tuple[Path, list[Fault]]:
    trace, other = root / "ref.trace", root / "other.trace"
    build_reference(trace, seed)
    build_reference(other, seed + 1)
    rng = np.random.default_rng(seed)
    found = list(crafted_faults(trace)) + list(file_faults(trace, other))
    cuts = list(truncation_faults(trace, 24))
    flips = list(flip_faults(trace, per_region, spread, rng))
    if quick:  # a sample: every kind of fault, fewer offsets
        cuts = [cuts[i] for i in sorted(rng.choice(len(cuts), min(9, len(cuts)), replace=False))]
        flips = [flips[i] for i in sorted(rng.choice(len(flips), min(45, len(flips)), replace=False))]
    return trace, found + cuts + flips


def run(root: Path, quick: bool = False, per_region: int = 3, spread: int = 120, seed: int = 0,
        progress: bool = False) -> tuple[Counter[str], int, int, list[tuple[str, Outcome]]]:
    trace, todo = faults(root, quick, per_region, spread, seed)
    expected = snapshot(trace)
    counts: Counter[str] = Counter()
    salvaged = lost = 0
    bad: list[tuple[str, Outcome]] = []
    for k, (name, apply) in enumerate(todo):
        out = run_one(trace, expected, apply, root)
        if out.kind == "hang":  # a loaded machine, or a real hang: once more decides
            out = run_one(trace, expected, apply, root, timeout=300.0)
        counts[out.kind] += 1
        salvaged += out.salvaged
        lost += out.lost
        if out.kind not in ("detected", "no effect"):
            bad.append((name, out))
        if progress and k % 50 == 49:
            print(f"  {k + 1}/{len(todo)} {dict(counts)}", file=sys.stderr, flush=True)
    return counts, salvaged, lost, bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the subset the test suite runs")
    ap.add_argument("--per-region", type=int, default=4, help="flip offsets per object region")
    ap.add_argument("--spread", type=int, default=200, help="evenly spread flip offsets per shard")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="padiff-faults-") as tmp:
        per, spread = (args.per_region, args.spread)
        counts, salvaged, lost, bad = run(Path(tmp), args.quick, per, spread, args.seed, progress=True)
    total = sum(counts.values())
    print(f"faults tried     {total}")
    print(f"detected         {counts['detected']}  (reported, the rest intact)")
    print(f"no effect        {counts['no effect']}")
    for kind in ("traceback", "wrong", "silent loss", "crash", "hang"):
        print(f"{kind:<16} {counts[kind]}")
    print(f"records salvaged {salvaged}  (read back exactly, summed over faults)")
    print(f"records lost     {lost}  (not in the index or unreadable, summed over faults)")
    print(f"time             {time.perf_counter() - t0:.1f} s")
    for name, out in bad[:40]:
        print(f"FAIL {out.kind}: {name}: {out.note}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
