"""Incomplete is not aligned (issue 15): an unfinished or damaged trace never compares as
ALIGNED with exit 0, unless a partial comparison is asked for; damaged pairs fail with
reason ``damaged`` (INCOMPLETE, never DIVERGED) while the rest is compared; ``compare A A`` says it is one trace."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np

from padiff_trace import Kind, Phase, RecordHeader, TraceWriter, WriterOptions, analyzer

CLI = Path(sys.executable).with_name("padiff-trace")
X = np.linspace(-1, 1, 64, dtype=np.float32).reshape(4, 16)
BIG = np.arange(600_000, dtype=np.float32) / 7  # its own dataset, checksummed per 1 MiB


def _trace(path: Path, flush_records: int = 10_000) -> Path:
    with TraceWriter(path, {"framework": "torch"}, options=WriterOptions(flush_records=flush_records)) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]"), X)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, "fc", "Linear", 1, 0, 0, "args[0]"), X)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "fc", "Linear", 1, 0, 0, "out"), BIG)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, "fc2", "Linear", 2, 0, 0, "args[0]"), X)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "fc2", "Linear", 2, 0, 0, "out"), X * 2)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out"), X * 2)
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), "compare", *args], capture_output=True, text=True, timeout=300)


def test_missing_shard_is_incomplete_not_aligned(tmp_path: Path) -> None:
    a = _trace(tmp_path / "a", flush_records=2)
    b = _trace(tmp_path / "b")
    (a / "shard-000001.h5").unlink()  # the records of fc lost
    r = analyzer.compare(a, b, quiet=True)
    assert r.verdict == "INCOMPLETE" and r.exit_code == 3 and not r.passed and not r.failed
    assert any("did not finish" in m for m in r.missing)
    assert any(f.code == "incomplete" for f in r.diagnosis)
    r.write(tmp_path / "rep")
    doc = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert doc["verdict"] == "incomplete" and doc["exit_code"] == 3 and doc["missing"]
    assert "INCOMPLETE" in (tmp_path / "rep" / "report.txt").read_text()
    assert "incomplete" in (tmp_path / "rep" / "report.html").read_text()
    out = _cli(str(a), str(b))
    assert out.returncode == 3 and "INCOMPLETE" in out.stdout and "Traceback" not in out.stderr
    out = _cli(str(a), str(b), "--allow-partial")
    assert out.returncode == 0 and "ALIGNED" in out.stdout and "partial comparison allowed" in out.stdout


def test_damaged_tensor_is_incomplete_never_a_divergence_and_the_rest_is_compared(tmp_path: Path) -> None:
    a, b = _trace(tmp_path / "a"), _trace(tmp_path / "b")
    shard = a / "shard-000000.h5"
    with h5py.File(shard, "r") as f:
        name = next(k for k in f["tensors"])
        offset = int(f["tensors"][name].id.get_offset())
    with open(shard, "r+b") as fh:  # one mantissa bit of element 300000
        fh.seek(offset + 4 * 300_000)
        byte = fh.read(1)
        fh.seek(offset + 4 * 300_000)
        fh.write(bytes([byte[0] ^ 1]))
    r = analyzer.compare(a, b, quiet=True)
    damaged = [p for p in r.pairs if p.reason.startswith("damaged")]
    assert [p.a.module for p in damaged] == ["fc"] and r.verdict == "INCOMPLETE" and r.exit_code == 3
    assert r.first_divergence is None and not r.failed and len(r.damaged) == 1
    others = [p for p in r.pairs if p not in damaged and p.a.is_tensor]
    assert others and all(p.passed and p.metrics is not None for p in others)  # compared, exact
    assert any(f.code == "damaged" for f in r.diagnosis) and r.missing  # the damage is in `missing` too
    out = _cli(str(a), str(b))
    assert out.returncode == 3 and "damaged" in out.stdout and "Traceback" not in out.stderr
    assert "First divergence" not in out.stdout and "error starts inside" not in out.stdout
    partial = analyzer.compare(a, b, quiet=True, allow_partial=True)  # asked for: the rest decides
    assert partial.verdict == "ALIGNED" and len(partial.damaged) == 1


def test_compare_a_trace_with_itself_says_so(tmp_path: Path) -> None:
    a = _trace(tmp_path / "a")
    shutil.copytree(a, tmp_path / "copy")
    r = analyzer.compare(a, a, quiet=True)
    assert r.same_trace and r.verdict == "ALIGNED" and any(f.code == "same_trace" for f in r.diagnosis)
    assert "same trace" in r.summary_text()
    r = analyzer.compare(a, tmp_path / "copy", quiet=True)
    assert not r.same_trace and not any(f.code == "same_trace" for f in r.diagnosis)


def test_flipped_bytes_in_the_small_record_blob_are_incomplete_never_diverged(tmp_path: Path) -> None:
    """The small records live in one chunked ``/blob``: a flipped byte anywhere in its stored
    chunks is damage (exit 3 through the checksums), never a model difference."""
    a, b = _trace(tmp_path / "a"), _trace(tmp_path / "b")
    shard = a / "shard-000000.h5"
    with h5py.File(shard, "r") as f:
        ds = f["blob"]
        chunks = [ds.id.get_chunk_info(i) for i in range(ds.id.get_num_chunks())]
    spans = [(int(c.byte_offset), int(c.size)) for c in chunks]
    assert spans and sum(n for _, n in spans) > 0
    orig = shard.read_bytes()
    verdicts = set()
    for off, size in spans:
        for pos in np.linspace(off, off + size - 1, 6).astype(int).tolist():
            data = bytearray(orig)
            data[pos] ^= 0x10
            shard.write_bytes(bytes(data))
            r = analyzer.compare(a, b, quiet=True)
            verdicts.add(r.verdict)
            assert r.verdict == "INCOMPLETE" and r.first_divergence is None, (pos, r.verdict)
    shard.write_bytes(orig)
    assert verdicts == {"INCOMPLETE"}
