"""Damaged, foreign and unwritable traces: the right exception, one line naming the file."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from padiff_trace import (
    CorruptTraceError,
    Kind,
    NotATraceError,
    Phase,
    RecordHeader,
    TraceExistsError,
    TraceNotFoundError,
    TraceWriteError,
    TraceWriter,
    UnsupportedVersionError,
    UserError,
    WriterOptions,
    open_trace,
)

H = RecordHeader(step=0, phase=Phase.FORWARD, kind=Kind.MODULE_OUTPUT, module="m", position="out")
CLI = Path(sys.executable).with_name("padiff-trace")


def make_trace(path: Path, shards: int = 2) -> Path:
    """Two shards: shard 0 holds small records, shard 1 a big tensor and the final marker
    (``shards=1``: all in shard 0)."""
    with TraceWriter(path, options=WriterOptions(flush_records=10 if shards == 2 else 1000)) as w:
        for i in range(10):
            w.append(H, np.arange(100, dtype=np.float32) + i)
        w.append(H, np.ones(400_000, dtype=np.float32))
    return path


def shard0(trace: Path) -> Path:
    return trace / "shard-000000.h5"


def flip(path: Path, offset: int, n: int = 8) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        data = bytearray(fh.read(n))
        fh.seek(offset)
        fh.write(bytes(b ^ 0xFF for b in data))


def chunk_offset(path: Path, name: str) -> int:
    with h5py.File(path, "r") as f:
        return int(f[name].id.get_chunk_info(0).byte_offset)


def damage(kind: str, trace: Path) -> type[UserError]:
    """Apply one kind of damage to shard 0; return the exception it must cause."""
    s = shard0(trace)
    if kind == "truncated":
        s.write_bytes(s.read_bytes()[: s.stat().st_size // 2])
        return CorruptTraceError
    if kind == "empty":
        s.write_bytes(b"")
        return CorruptTraceError
    if kind == "not-hdf5":
        s.write_text("hello, I am a text file\n" * 100)
        return NotATraceError
    if kind == "foreign-hdf5":
        s.unlink()
        with h5py.File(s, "w") as f:
            f["x"] = np.arange(3)
        return NotATraceError
    if kind == "newer-version":
        with h5py.File(s, "r+") as f:
            f.attrs["format_version"] = 99
        return UnsupportedVersionError
    if kind == "flipped-records":
        flip(s, chunk_offset(s, "records") + 40)
        return CorruptTraceError
    raise AssertionError(kind)


KINDS = ["truncated", "empty", "not-hdf5", "foreign-hdf5", "newer-version", "flipped-records"]
UNUSABLE = [k for k in KINDS if k != "flipped-records"]  # a shard that cannot be opened at all


@pytest.mark.parametrize("kind", UNUSABLE)
def test_only_shard_damaged_raises_one_line_naming_the_file(tmp_path: Path, kind: str) -> None:
    trace = make_trace(tmp_path / "t", shards=1)
    exc_type = damage(kind, trace)
    with pytest.raises(exc_type) as err:
        open_trace(trace)
    msg = str(err.value)
    assert "\n" not in msg
    assert str(shard0(trace)) in msg
    if kind == "newer-version":
        assert "99" in msg and "1" in msg and "upgrade" in msg  # both sides of the mismatch


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_shard_is_reported_and_the_others_read(tmp_path: Path, kind: str) -> None:
    trace = make_trace(tmp_path / "t")
    exc_type = damage(kind, trace)
    with open_trace(trace) as tr:
        assert list(tr) == [10] and not tr.complete
        np.testing.assert_array_equal(tr.read(10), np.ones(400_000, dtype=np.float32))
        assert len(tr.damage) == 1 and tr.damage[0].shard == shard0(trace)
        assert "\n" not in str(tr.damage[0])
        h = tr.health
        assert not h.ok and h.records == 1 and h.records_lost == 10 and str(h).startswith("DAMAGED")
        if kind == "newer-version":
            assert "99" in tr.damage[0].reason and "upgrade" in tr.damage[0].reason
    with pytest.raises(exc_type if kind != "flipped-records" else CorruptTraceError) as err:
        open_trace(trace, strict=True)
    assert str(shard0(trace)) in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("kind", UNUSABLE)
def test_cli_info_on_unusable_trace_exits_2_with_one_line(tmp_path: Path, kind: str) -> None:
    trace = make_trace(tmp_path / "t", shards=1)
    damage(kind, trace)
    out = subprocess.run([str(CLI), "info", str(trace)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.strip() and "ccache" not in ln]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("padiff-trace: error: ") and "shard-000000.h5" in lines[0]
    assert "Traceback" not in out.stderr and out.stdout == ""


@pytest.mark.parametrize("kind", ["truncated", "flipped-records"])
def test_cli_info_and_check_on_damaged_trace(tmp_path: Path, kind: str) -> None:
    trace = make_trace(tmp_path / "t")
    damage(kind, trace)
    out = subprocess.run([str(CLI), "info", str(trace)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    health = [ln for ln in out.stdout.splitlines() if ln.startswith("health")]
    assert health and "DAMAGED" in health[0] and "10 record(s) lost" in health[0]
    assert "shard-000000.h5" in out.stdout
    out = subprocess.run([str(CLI), "check", str(trace)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "shard-000000.h5" in out.stdout and "Traceback" not in out.stderr


def test_flipped_byte_in_small_tensor_data_is_detected(tmp_path: Path) -> None:
    trace = make_trace(tmp_path / "t")
    s = shard0(trace)
    flip(s, chunk_offset(s, "blob") + 123, 1)
    with open_trace(trace) as tr:  # the index is intact ...
        assert len(tr) == 11
        with pytest.raises(CorruptTraceError) as err:  # ... but the data checksum fails
            tr.read(0)
        assert str(s) in str(err.value) and "record 0" in str(err.value) and "\n" not in str(err.value)
        np.testing.assert_array_equal(tr.read(10), np.ones(400_000, dtype=np.float32))  # other shard fine


def test_flipped_byte_in_a_later_blob_chunk_is_detected(tmp_path: Path) -> None:
    """/blob chunks written whole (with their checksum computed by the writer) are verified too."""
    with TraceWriter(tmp_path / "t") as w:
        for i in range(40):  # 40 x 200 KB: four whole 1 MiB chunks and a tail
            w.append(H, np.full(50_000, i, dtype=np.float32))
    s = shard0(tmp_path / "t")
    with h5py.File(s, "r") as f:
        offset = int(f["blob"].id.get_chunk_info(2).byte_offset)  # bytes 2 MiB .. 3 MiB
    flip(s, offset + 1000, 1)
    with open_trace(tmp_path / "t") as tr:
        assert len(tr) == 40 and tr[11].stats["max"] == 11.0  # the index is intact
        with pytest.raises(CorruptTraceError, match="record 11"):  # 11 x 200 KB = 2.2 MB
            tr.read(11)


def test_missing_middle_shard_makes_trace_incomplete(tmp_path: Path) -> None:
    with TraceWriter(tmp_path / "t", options=WriterOptions(flush_records=3)) as w:
        for i in range(9):
            w.append(H, np.full(2, i))
    (tmp_path / "t" / "shard-000001.h5").unlink()
    with open_trace(tmp_path / "t") as tr:
        assert tr.final and not tr.complete and tr.missing_shards == [1]
        assert list(tr) == [0, 1, 2, 6, 7, 8]


def test_missing_path_and_directory_without_shards(tmp_path: Path) -> None:
    with pytest.raises(TraceNotFoundError, match="no such trace") as err:
        open_trace(tmp_path / "nope")
    assert isinstance(err.value, FileNotFoundError) and str(tmp_path / "nope") in str(err.value)
    (tmp_path / "emptydir").mkdir()
    with pytest.raises(NotATraceError, match=r"emptydir: not a padiff-trace trace \(no shards\)"):
        open_trace(tmp_path / "emptydir")


def test_file_in_the_way(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(TraceExistsError, match="exists and is not a trace directory") as err:
        TraceWriter(blocker)
    assert str(blocker) in str(err.value)
    with pytest.raises(TraceWriteError, match="cannot write the trace here") as err2:
        TraceWriter(blocker / "sub" / "t")
    assert str(blocker / "sub" / "t") in str(err2.value) and "\n" not in str(err2.value)


def _mount_tmpfs(where: Path, opts: str) -> None:
    where.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip() or res.returncode}")


@pytest.fixture
def tmpfs(tmp_path: Path):  # type: ignore[no-untyped-def]
    mounted: list[Path] = []

    def mount(name: str, opts: str) -> Path:
        where = tmp_path / name
        _mount_tmpfs(where, opts)
        mounted.append(where)
        return where

    yield mount
    for m in mounted:
        subprocess.run(["umount", "-l", str(m)], check=False)


def test_read_only_filesystem(tmpfs) -> None:  # type: ignore[no-untyped-def]
    ro = tmpfs("ro", "ro,size=1m")  # root ignores permission bits, so use a read-only mount
    with pytest.raises(TraceWriteError, match="cannot write the trace here") as err:
        TraceWriter(ro / "t")
    msg = str(err.value)
    assert str(ro / "t") in msg and "Read-only file system" in msg and "\n" not in msg


def test_disk_full_raises_and_keeps_flushed_shards(tmpfs) -> None:  # type: ignore[no-untyped-def]
    small = tmpfs("small", "size=2m")
    trace = small / "t"
    w = TraceWriter(trace, options=WriterOptions(flush_records=5))
    with pytest.raises(TraceWriteError) as err:
        for i in range(10):
            w.append(H, np.full(1000, i, dtype=np.float32))
        for _ in range(20):  # 20 x 1.2 MB cannot fit in 2 MB
            w.append(H, np.ones(300_000, dtype=np.float32))
        w.close()
    msg = str(err.value)
    assert str(trace) in msg and "\n" not in msg
    with pytest.raises(TraceWriteError):  # the writer stays failed
        w.close()
    with open_trace(trace) as tr:
        assert not tr.complete
        assert len(tr) >= 10
        for i in range(10):
            np.testing.assert_array_equal(tr.read(i), np.full(1000, i, dtype=np.float32))
    assert not list(trace.glob("*.part"))  # the unfinished shard was removed to free space


def test_copy_of_damaged_trace_still_names_the_copy(tmp_path: Path) -> None:
    trace = make_trace(tmp_path / "t", shards=1)
    damage("not-hdf5", trace)
    copy = tmp_path / "copy"
    shutil.copytree(trace, copy)
    with pytest.raises(NotATraceError) as err:
        open_trace(copy)
    assert str(copy / "shard-000000.h5") in str(err.value)


def test_mapped_reads_of_a_shard_truncated_after_opening_fail_cleanly(tmp_path: Path) -> None:
    """The analyzer maps large tensor reads from the file; a shard cut short after the trace was
    opened gives the one-line error (a mapping past the end of a file would crash the process)."""
    from padiff_trace.analyzer.judging._metrics import _read

    big = np.arange(3_000_000, dtype=np.float32)  # 12 MB: a dataset of its own
    with TraceWriter(tmp_path / "t") as w:
        w.append(H, big)
    s = shard0(tmp_path / "t")
    with open_trace(tmp_path / "t") as tr:
        rec = tr[0]
        piece = _read(rec, 1_000_001, 2_000_001)  # not page aligned: mapped from the middle
        assert not piece.flags.writeable and piece.base is not None
        np.testing.assert_array_equal(piece, big[1_000_001:2_000_001])
        assert tr.read(0).flags.writeable  # what users get is their own array
    with open_trace(tmp_path / "t") as tr:
        rec = tr[0]
        with open(s, "r+b") as fh:
            fh.truncate(s.stat().st_size - 4_000_000)
        with pytest.raises(CorruptTraceError) as err:
            _read(rec, 0, rec.numel)
        assert str(s) in str(err.value) and "record 0" in str(err.value) and "\n" not in str(err.value)
