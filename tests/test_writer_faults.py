"""The writer under faults (issue 15): a full disk while writing or closing ends in one
``TraceWriteError`` line and a process that exits normally - h5py/HDF5 crashed at exit
(SIGSEGV in ``H5D_close``) when a dataset whose close had failed was closed again by the
garbage collector. Also the checksums the writer computes: the C kernel's CRC-32 is zlib's,
so a numpy + h5py reader verifies every trace, and the analyzer's deferred verification."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import h5py
import numpy as np
import pytest

from padiff_trace import DamagedRecordError, Kind, Phase, RecordHeader, TraceWriter, open_trace
from padiff_trace.arrays._native import DISABLE_ENV, kernel
from padiff_trace.trace._integrity import crc32, crc_chunks

H = RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "m", "Linear", 0, -1, 0, "out")

# A recording that fills a 2 MB tmpfs: ``FLUSHED`` small records (each a shard when
# ``flush_records`` is 3), then tensors of ``n`` float32 until the disk is full.
CHILD = textwrap.dedent("""
    import gc, sys
    import numpy as np
    from padiff_trace import Kind, Phase, RecordHeader, TraceWriteError, TraceWriter, WriterOptions
    trace, n, flush, compression, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    H = RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "m", "Linear", 0, -1, 0, "out")
    w = TraceWriter(trace, options=WriterOptions(flush_records=flush, compression=None if compression == "none" else compression))
    try:
        for i in range({flushed}):
            w.append(H, np.full(100, i, dtype=np.float32))
        rng = np.random.default_rng(0)
        for i in range(10_000):
            w.append(H, rng.standard_normal(n).astype(np.float32))
        w.close()
    except TraceWriteError as exc:
        print("ERROR", exc)
    if end == "del":  # the writer and everything it held collected before exit
        del w
        gc.collect()
    print("EXITING")
""")
FLUSHED = 9


@pytest.fixture
def small_tmpfs(tmp_path: Path):  # type: ignore[no-untyped-def]
    where = tmp_path / "small"
    where.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip() or res.returncode}")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.parametrize(
    ("n", "flush", "compression", "end"),
    [
        (20_000, 3, "none", "exit"),  # small records: the disk fills while a shard is flushed and closed
        (20_000, 3, "none", "del"),
        (100, 100_000, "none", "exit"),  # one shard: the disk fills when close() writes it
        (300_000, 3, "gzip", "exit"),  # compressed large tensors: their chunks fill it
        (300_000, 3, "none", "del"),  # large tensors written with pwrite
    ],
)
def test_disk_full_exits_cleanly_and_keeps_flushed_records(small_tmpfs: Path, n: int, flush: int, compression: str,
                                                             end: str) -> None:
    trace = small_tmpfs / "t"
    out = subprocess.run([sys.executable, "-c", CHILD.format(flushed=FLUSHED), str(trace), str(n), str(flush), compression, end],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"exit {out.returncode} (negative: killed by a signal)\n{out.stdout}\n{out.stderr[-3000:]}"
    assert "EXITING" in out.stdout
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr, out.stderr[-3000:]
    errors = [line for line in out.stdout.splitlines() if line.startswith("ERROR ")]
    assert len(errors) == 1, out.stdout
    msg = errors[0]
    assert str(trace) in msg and "no space left" in msg.lower() and "free space" in msg  # what, where, what to do
    assert not list(trace.glob("*.part"))  # the unfinished shard was removed (its space given back)
    if flush < FLUSHED:  # the shards flushed before the disk filled are whole and verified
        with open_trace(trace) as tr:
            assert not tr.complete and tr.health.ok
            for i in range(FLUSHED // flush * flush):
                np.testing.assert_array_equal(tr.read(i), np.full(100, i, dtype=np.float32))


# ---------------------------------------------------------------- checksums the writer computes


def test_c_crc32_is_zlibs_at_every_level() -> None:
    k = kernel()
    if k is None:
        pytest.skip("C kernel not built")
    rng = np.random.default_rng(3)
    levels = range(k.crc32_level() + 1)
    for n in [*range(300), 511, 512, 513, 4095, 65_536, 65_537, (1 << 20) + 3]:
        data = rng.integers(0, 256, n + 7, dtype=np.uint8)
        for off in (0, 1, 7):  # unaligned starts
            buf = data[off : off + n]
            value = int(rng.integers(0, 1 << 32))
            want = zlib.crc32(buf, value)
            assert [k.crc32(buf, value, lv) for lv in levels] == [want] * len(levels), (n, off)
    buf = rng.integers(0, 256, 3 * (1 << 20) + 5, dtype=np.uint8)
    assert crc_chunks(buf) == [zlib.crc32(buf[i : i + (1 << 20)]) for i in range(0, buf.size, 1 << 20)]
    assert crc32(buf, 7) == zlib.crc32(buf, 7)


def test_traces_verify_without_the_c_kernel(tmp_path: Path) -> None:
    """Written with the C kernel's CRC-32, checked by zlib's (numpy + h5py only), and a flipped
    bit in a large tensor is still found."""
    big = np.arange(3_000_000, dtype=np.float32)
    with TraceWriter(tmp_path / "t") as w:
        w.append(H, big)
        w.append(H, np.ones(1000, dtype=np.float32))
    code = ("import sys; from padiff_trace import open_trace; from padiff_trace.arrays._native import kernel\n"
            "assert kernel() is None\n"
            "tr = open_trace(sys.argv[1]); print(len(tr.check()), int(tr.read(0)[-1]), int(tr.read(1).sum()))")
    env = {**os.environ, DISABLE_ENV: "1"}
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "t")], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "2999999", "1000"]
    shard = tmp_path / "t" / "shard-000000.h5"
    with h5py.File(shard, "r") as f:
        offset = int(f["tensors"]["0"].id.get_offset())
    with open(shard, "r+b") as fh:
        fh.seek(offset + 4 * 2_500_000)
        b = fh.read(1)
        fh.seek(offset + 4 * 2_500_000)
        fh.write(bytes([b[0] ^ 0x10]))
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "t")], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "DamagedRecordError" in out.stderr and "CRC-32" in out.stderr


def test_deferred_verification_fails_like_a_read(tmp_path: Path) -> None:
    """``read_stored(checks=...)`` hands the CRC-32 test to the caller (the analyzer runs it right
    after its kernel used the bytes): a damaged piece raises ``DamagedRecordError`` when the check
    runs and is recorded as damage, exactly as a verified read would."""
    big = np.arange(3_000_000, dtype=np.float32) / 3
    with TraceWriter(tmp_path / "t") as w:
        w.append(H, big)
    with open_trace(tmp_path / "t") as tr:  # intact: the checks pass, the data is the data
        checks: list = []
        got = tr.read_stored(tr[0], 0, 1_000_000, view=True, checks=checks)
        assert checks
        for check in checks:
            check()
        np.testing.assert_array_equal(got, big[:1_000_000])
    shard = tmp_path / "t" / "shard-000000.h5"
    with h5py.File(shard, "r") as f:
        offset = int(f["tensors"]["0"].id.get_offset())
    with open(shard, "r+b") as fh:  # one mantissa bit of element 10
        fh.seek(offset + 40)
        b = fh.read(1)
        fh.seek(offset + 40)
        fh.write(bytes([b[0] ^ 1]))
    with open_trace(tmp_path / "t") as tr:
        checks = []
        tr.read_stored(tr[0], 0, 1_000_000, view=True, checks=checks)  # returns: not verified yet
        with pytest.raises(DamagedRecordError, match="CRC-32"):
            for check in checks:
                check()
        assert tr.damage_of(0) is not None and not tr.health.ok
        with pytest.raises(DamagedRecordError):  # and stays damaged
            tr.read(0)
