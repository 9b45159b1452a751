"""SIGKILL a real writing process: whatever was flushed must read back intact."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from padiff_trace import Kind, NotATraceError, open_trace

N_RECORDS = 3000

# Record i is a pure function of i, so the parent can recompute what was written.
CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from padiff_trace import Kind, Phase, RecordHeader, TraceWriter, WriterOptions

    def record(i):
        rng = np.random.default_rng(i)
        n = 300_000 if i % 97 == 0 else 1 + i % 50   # some tensors > 1 MiB (own dataset)
        return rng.standard_normal(n).astype(np.float32)

    path, flush_records, flush_seconds, n = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    opts = WriterOptions(flush_records=flush_records, flush_seconds=flush_seconds)
    w = TraceWriter(path, options=opts)
    for i in range(n):
        h = RecordHeader(step=i // 100, phase=Phase.FORWARD, kind=Kind.MODULE_OUTPUT, module=f"m{i}", position="out")
        w.append(h, record(i))
        print(i, flush=True)
    print("appended", flush=True)
    time.sleep(600)   # never closes: the parent kills us
    """
)


def expected(i: int) -> np.ndarray:
    rng = np.random.default_rng(i)
    n = 300_000 if i % 97 == 0 else 1 + i % 50
    return rng.standard_normal(n).astype(np.float32)


def run_and_kill(
    tmp_path: Path,
    kill_after: str,
    flush_records: int,
    flush_seconds: float,
    settle: float = 0.0,
    min_shards: int = 0,
    until: Callable[[Path], bool] | None = None,
) -> Path:
    """Start the child; SIGKILL it once it printed ``kill_after`` and ``min_shards`` shards exist."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    trace = tmp_path / "killed.trace"
    proc = subprocess.Popen(
        [sys.executable, str(script), str(trace), str(flush_records), str(flush_seconds), str(N_RECORDS)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == kill_after:
                break
        else:
            pytest.fail(f"child ended before printing {kill_after!r}: rc={proc.wait()}")
        deadline = time.monotonic() + 60
        while len(list(trace.glob("shard-*.h5"))) < min_shards and time.monotonic() < deadline:
            time.sleep(0.002)
        while until is not None and not until(trace) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(settle)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return trace


def check_prefix(trace: Path) -> int:
    """The trace opens, is incomplete, and holds records 0..M-1 exactly as written; returns M."""
    with open_trace(trace) as tr:
        assert not tr.complete
        seqs = list(tr)
        assert seqs == list(range(len(seqs))), "flushed shards must hold a gap-free prefix"
        for rec in tr.records():
            assert rec.module == f"m{rec.seq}" and rec.kind is Kind.MODULE_OUTPUT and rec.step == rec.seq // 100
            want = expected(rec.seq)
            np.testing.assert_array_equal(rec.read(), want)
            assert rec.stats["max"] == float(want.max())
        assert tr.counts()["kind"]["module_output"] == len(seqs) if seqs else True
        return len(seqs)


def test_killed_before_first_flush_is_not_a_trace(tmp_path: Path) -> None:
    # kill once the writer has opened its first shard (a .part): that is the case under test
    trace = run_and_kill(tmp_path, "5", flush_records=100_000, flush_seconds=600,
                         until=lambda p: bool(list(p.glob("*.part"))))
    assert not list(trace.glob("shard-*.h5"))
    with pytest.raises(NotATraceError) as err:
        open_trace(trace)
    msg = str(err.value)
    assert "\n" not in msg and str(trace) in msg and "before its first flush" in msg


def test_a_live_recording_before_its_first_flush_is_called_live(tmp_path: Path) -> None:
    from padiff_trace import Phase, RecordHeader, TraceWriter, WriterOptions

    trace = tmp_path / "live"
    with TraceWriter(trace, {"framework": "torch"}, options=WriterOptions(flush_records=100_000, flush_seconds=600)) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "fc", "Linear", 1, 0, 0, "out"), np.ones(4, "f4"))
        with pytest.raises(NotATraceError) as err:
            open_trace(trace)
        msg = str(err.value)
        assert "being recorded now" in msg and f"pid {os.getpid()}" in msg and "killed" not in msg, msg
    with open_trace(trace) as tr:  # closed: a trace
        assert tr.complete


@pytest.mark.parametrize("min_shards", [1, 8, 40])
def test_killed_mid_run_keeps_flushed_shards(tmp_path: Path, min_shards: int) -> None:
    trace = run_and_kill(tmp_path, "1", flush_records=50, flush_seconds=600, min_shards=min_shards)
    m = check_prefix(trace)
    assert 50 * min_shards <= m <= N_RECORDS
    assert m % 50 == 0  # only whole shards of 50 records
    # the shard that was being written is left as .part and ignored
    assert all(p.name.endswith(".h5") for p in trace.glob("shard-*.h5"))


def test_killed_late_after_time_flush(tmp_path: Path) -> None:
    def all_flushed(path: Path) -> bool:
        if not list(path.glob("shard-*.h5")):
            return False
        with open_trace(path) as tr:
            return len(tr) == N_RECORDS

    trace = run_and_kill(tmp_path, "appended", flush_records=700, flush_seconds=0.2, settle=0.3, until=all_flushed)
    m = check_prefix(trace)
    assert m == N_RECORDS  # everything appended was flushed by age, but no final shard
    assert not list(trace.glob("*.part"))
    with open_trace(trace) as tr:
        assert not tr.final and tr.summary == {}


def test_cli_reports_killed_trace_as_incomplete(tmp_path: Path) -> None:
    trace = run_and_kill(tmp_path, "300", flush_records=100, flush_seconds=600, min_shards=1)
    exe = Path(sys.executable).with_name("padiff-trace")
    out = subprocess.run([str(exe), "info", str(trace)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "INCOMPLETE" in out.stdout and "killed or still running" in out.stdout
