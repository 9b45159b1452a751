"""Fault injection for trace integrity (issue 15): damage a reference trace in many ways and
check that the reader reports the damage and returns only correct numbers and names.

Run: ``.venv/bin/python tests/fault_inject.py [--quick] [--per-region N] [--spread N] [--only FAMILY]``

Families of faults (``fault_kinds.py``, ``fault_hostile.py``):

* ``flip``      byte and bit flips across whole shards (records, string table, blob, tensor
                data, offset and checksum tables, attributes, evenly spread offsets for HDF5's
                own metadata);
* ``truncate``  truncations at many offsets;
* ``crafted``   crafted rows and tables (written through h5py, with and without recomputed
                checksums);
* ``files``     foreign, missing and misnamed shard files;
* ``outside``   objects leading outside the shard (external links, soft links, external
                storage, virtual datasets, unknown filters, FIFOs): must be refused;
* ``bounded``   sizes and counts a crafted trace claims: never allocated for;
* ``changing``  a shard truncated or overwritten while the trace is open and half read.

Each fault runs in a forked child (a crash or hang counts as a failure) on a copy of the trace;
the child's peak RSS growth is measured. The outcome is one of

* ``detected``  - damage reported (``Trace.damage``/``health``, or open refused with a
                  one-line ``UserError``), every value returned is right;
* ``no effect`` - nothing reported, every record reads back exactly;
* a failure     - ``traceback`` (an exception that is not ours, or an error of more than one
                  line), ``wrong`` (a number, name, shape or statistic differs silently),
                  ``silent loss``, ``crash`` (a signal: SIGBUS, SIGSEGV), ``hang``, ``read outside``
                  (an ``outside`` fault read through without a word), ``memory`` (a child grew by
                  more than ``RSS_BOUND_MB``).

Prints the counts per family: faults tried, detected, no effect, failures, peak RSS growth,
records salvaged and lost.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fault_hostile import HostileFault, changing_faults, hostile_faults
from fault_kinds import crafted_faults, file_faults, flip_faults, truncation_faults

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
FAILURES = ("traceback", "wrong", "silent loss", "crash", "hang", "read outside", "memory")
RSS_BOUND_MB = 256  # a child may grow by this much; the reference trace holds ~4 MB
ODD_NAMES = ("layers.3", "odd\x00name", "tab\tand\x01ctrl", "bad\udcffname")


@dataclass
class Outcome:
    kind: str  # detected | no effect | one of FAILURES
    salvaged: int
    lost: int
    note: str = ""
    rss_mb: float = 0.0  # the child's peak RSS growth while evaluating


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
def evaluate(path: Path, expected: dict[int, tuple[Any, ...]], during: Callable[[Path], None] | None = None,
             data_only: bool = False) -> Outcome:
    """Open, list, read everything, check; compare with ``expected``. ``during``: done to the
    files once the trace is open and half its records read; a one-line error after it is the
    change detected."""
    try:
        tr = open_trace(path)
    except UserError as exc:
        if "\n" in str(exc):
            return Outcome("traceback", 0, len(expected), f"multi-line error: {exc!r}")
        return Outcome("detected", 0, len(expected), f"refused: {exc}")
    try:
        with tr:
            return _read_all(tr, expected, during, path, data_only)
    except UserError as exc:
        if during is None:
            raise
        if "\n" in str(exc):
            return Outcome("traceback", 0, len(expected), f"multi-line error: {exc!r}")
        return Outcome("detected", 0, len(expected), f"{type(exc).__name__}: {exc}"[:300])


def _read_all(tr: Any, expected: dict[int, tuple[Any, ...]], during: Callable[[Path], None] | None, path: Path,
              data_only: bool) -> Outcome:
    wrong: list[str] = []
    salvaged = lost = 0
    tr.counts(), tr.steps(), str(tr.health), repr(tr)
    seen = set()
    for k, r in enumerate(tr.records()):
        if during is not None and k == len(expected) // 2:
            during(path)
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
        if data_only:  # metadata crafted on purpose: only the tensor bytes must be the recorded ones
            got, want = got[-1:], want[-1:]
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


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_one(trace: Path, expected: dict[int, tuple[Any, ...]], fault: HostileFault, scratch: Path,
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
            try:
                fault.apply(work)
            except Exception as exc:  # HDF5 cannot make this one (say, external storage of variable-length strings)
                os.write(wfd, json.dumps(Outcome("not made", 0, 0, f"{type(exc).__name__}: {exc}"[:200]).__dict__).encode())
                raise SystemExit from None
            before = _rss_mb()
            try:
                out = evaluate(work, expected, fault.during, fault.crafted_meta)
            except Exception as exc:
                out = Outcome("traceback", 0, len(expected), f"{type(exc).__name__}: {str(exc)[:200]}")
            out.rss_mb = max(0.0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before)
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
        why = f"killed by {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
        return Outcome("crash", 0, len(expected), why)
    out = Outcome(**json.loads(data))
    if fault.must_detect and out.kind == "no effect":
        return Outcome("read outside", out.salvaged, out.lost, "read through without a word", out.rss_mb)
    if out.kind in ("detected", "no effect") and out.rss_mb > RSS_BOUND_MB:
        return Outcome("memory", out.salvaged, out.lost, f"grew by {out.rss_mb:.0f} MiB", out.rss_mb)
    return out


def faults(root: Path, quick: bool, per_region: int, spread: int, seed: int) -> tuple[Path, list[HostileFault]]:
    trace, other = root / "ref.trace", root / "other.trace"
    build_reference(trace, seed)
    build_reference(other, seed + 1)
    rng = np.random.default_rng(seed)
    cuts = list(truncation_faults(trace, 24))
    flips = list(flip_faults(trace, per_region, spread, rng))
    if quick:  # a sample: every kind of fault, fewer offsets
        cuts = [cuts[i] for i in sorted(rng.choice(len(cuts), min(9, len(cuts)), replace=False))]
        flips = [flips[i] for i in sorted(rng.choice(len(flips), min(45, len(flips)), replace=False))]
    todo = [HostileFault("crafted", text, apply) for text, apply in crafted_faults(trace)]
    todo += [HostileFault("files", text, apply) for text, apply in file_faults(trace, other)]
    todo += [HostileFault("truncate", text, apply) for text, apply in cuts]
    todo += [HostileFault("flip", text, apply) for text, apply in flips]
    todo += list(hostile_faults(trace, quick))
    todo += list(changing_faults(trace, other, quick))
    return trace, todo


@dataclass
class Campaign:
    counts: Counter[str] = field(default_factory=Counter)  # by outcome
    by_family: dict[str, Counter[str]] = field(default_factory=dict)  # family -> outcome -> count
    peak_rss_mb: dict[str, float] = field(default_factory=dict)  # family -> largest growth of a child
    salvaged: int = 0
    lost: int = 0
    bad: list[tuple[str, Outcome]] = field(default_factory=list)  # (family: description, outcome)


def run(root: Path, quick: bool = False, per_region: int = 3, spread: int = 120, seed: int = 0,
        progress: bool = False, only: tuple[str, ...] = ()) -> Campaign:
    trace, todo = faults(root, quick, per_region, spread, seed)
    todo = [f for f in todo if not only or f.family in only]
    expected = snapshot(trace)
    c = Campaign()
    for k, fault in enumerate(todo):
        out = run_one(trace, expected, fault, root)
        if out.kind == "hang" and "FIFO" not in fault.text:  # a loaded machine, or a real hang: once more decides
            out = run_one(trace, expected, fault, root, timeout=300.0)
        c.counts[out.kind] += 1
        c.by_family.setdefault(fault.family, Counter())[out.kind] += 1
        c.peak_rss_mb[fault.family] = max(c.peak_rss_mb.get(fault.family, 0.0), out.rss_mb)
        c.salvaged += out.salvaged
        c.lost += out.lost
        if out.kind in FAILURES:
            c.bad.append((f"{fault.family}: {fault.text}", out))
        if progress and (k % 50 == 49 or out.rss_mb > RSS_BOUND_MB / 4):
            print(f"  {fault.family}: {fault.text}: {out.kind}, RSS +{out.rss_mb:.0f} MiB", file=sys.stderr, flush=True)
        if progress and k % 50 == 49:
            print(f"  {k + 1}/{len(todo)} {dict(c.counts)}", file=sys.stderr, flush=True)
    return c


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the subset the test suite runs")
    ap.add_argument("--per-region", type=int, default=4, help="flip offsets per object region")
    ap.add_argument("--spread", type=int, default=200, help="evenly spread flip offsets per shard")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", action="append", default=[], help="only this family (repeatable)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="padiff-faults-") as tmp:
        c = run(Path(tmp), args.quick, args.per_region, args.spread, args.seed, progress=True, only=tuple(args.only))
    total = sum(c.counts.values()) - c.counts["not made"]
    print(f"faults tried     {total}" + (f"  ({c.counts['not made']} HDF5 could not make)" if c.counts["not made"] else ""))
    print(f"detected         {c.counts['detected']}  (reported, the rest intact)")
    print(f"no effect        {c.counts['no effect']}")
    print(f"failures         {sum(c.counts[k] for k in FAILURES)}")
    for family, fc in c.by_family.items():
        fails = ", ".join(f"{k} {fc[k]}" for k in FAILURES if fc[k]) or "none"
        print(f"  {family:<9} tried {sum(fc.values()) - fc['not made']:>4}  detected {fc['detected']:>4}  no effect {fc['no effect']:>4}  "
              f"peak RSS growth {c.peak_rss_mb[family]:6.1f} MiB  failures: {fails}")
    print(f"records salvaged {c.salvaged}  (read back exactly, summed over faults)")
    print(f"records lost     {c.lost}  (not in the index or unreadable, summed over faults)")
    print(f"time             {time.perf_counter() - t0:.1f} s")
    for name, out in c.bad[:40]:
        print(f"FAIL {out.kind}: {name}: {out.note}")
    return 1 if c.bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
