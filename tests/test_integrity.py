"""Integrity of traces (issue 15): checksums on every byte that can change a number or a name,
salvage of the intact part, one recording per directory, exact names, fault injection."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest

from padiff_trace import (
    DamagedRecordError,
    Frame,
    Kind,
    Phase,
    RecordHeader,
    TraceChangedError,
    TraceExistsError,
    TraceLockedError,
    TraceWriter,
    WriterOptions,
    open_trace,
)
from padiff_trace.cli import main
from padiff_trace.trace._integrity import crc_chunks

H = RecordHeader(step=0, phase=Phase.FORWARD, kind=Kind.MODULE_OUTPUT, module="layers.3", position="out")
BIG = np.arange(600_000, dtype=np.float32) / 7  # 2.4 MB: a dataset of its own, three CRC chunks
CLI = Path(sys.executable).with_name("padiff-trace")


def make(path: Path, shards: int = 3) -> Path:
    """``shards`` shards of: a small tensor, a big tensor, a small one (seqs 3k, 3k+1, 3k+2)."""
    with TraceWriter(path) as w:
        for k in range(shards):
            w.append(H, np.full(100, k, dtype=np.float32))
            w.append(H, BIG + k)
            w.append(H, np.full((2, 3), k, dtype=np.float64))
            if k < shards - 1:
                w.flush()
    return path


def flip(path: Path, offset: int, mask: int = 0x01) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        b = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([b[0] ^ mask]))


def data_offset(shard: Path, name: str) -> int:
    with h5py.File(shard, "r") as f:
        return int(f[name].id.get_offset())


# ---------------------------------------------------------------------- large tensors
@pytest.mark.parametrize("bit", [0, 30], ids=["mantissa", "exponent"])
def test_flipped_bit_in_a_large_tensor_is_detected(tmp_path: Path, bit: int) -> None:
    t = make(tmp_path / "t")
    s1 = t / "shard-000001.h5"
    flip(s1, data_offset(s1, "tensors/4") + 4 * 300_000 + bit // 8, 1 << (bit % 8))  # element 300000
    with open_trace(t) as tr:
        assert tr.health.ok  # nothing read yet
        with pytest.raises(DamagedRecordError) as err:
            tr.read(4)
        msg = str(err.value)
        assert str(s1) in msg and "record 4" in msg and "CRC-32" in msg and "\n" not in msg
        assert err.value.seq == 4 and err.value.path == str(s1)
        assert tr[4].damage is not None and not tr.health.ok and tr.health.records_damaged == 1
        np.testing.assert_array_equal(tr.read(1), BIG)  # the same tensor in another shard
        np.testing.assert_array_equal(tr.read(3), np.full(100, 1, dtype=np.float32))
        # a slice that avoids the damaged CRC chunk still reads (the analyzer reads in pieces)
        np.testing.assert_array_equal(tr.read_stored(tr[7], 0, 1000), BIG[:1000] + 2)


def test_shifted_tensor_offset_is_detected(tmp_path: Path) -> None:
    t = make(tmp_path / "t", shards=1)
    s0 = t / "shard-000000.h5"
    with h5py.File(s0, "r+") as f:  # HDF5 recomputes the table's own checksum: only the data's can tell
        table = f["tensor_offsets"][...]
        table[:, 1] += 4
        f["tensor_offsets"][...] = table
    with open_trace(t) as tr, pytest.raises(DamagedRecordError, match="record 1"):
        tr.read(1)


def test_string_table_change_is_detected_and_other_shards_read(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    s1 = t / "shard-000001.h5"
    s1.write_bytes(s1.read_bytes().replace(b"layers.3", b"layers.2"))  # wherever HDF5 keeps it
    with open_trace(t) as tr:
        assert list(tr) == [0, 1, 2, 6, 7, 8]  # shard 1's names cannot be trusted: its records are not read
        assert {r.module for r in tr.records()} == {"layers.3"}
        (d,) = tr.damage
        assert d.shard == s1 and d.what == "shard" and "string table" in d.reason
        assert tr.health.records_lost == 3 and not tr.complete


# ---------------------------------------------------------------------- crafted rows
def craft(shard: Path, col: str, value: int, row: int = 0) -> None:
    """Change one row and recompute every checksum, as a buggy writer would."""
    with h5py.File(shard, "r+") as f:
        ds = f["records"]
        rows = ds[...]
        rows[col][row] = value
        ds[...] = rows
        ds.attrs["crc32"] = np.array(crc_chunks(rows.tobytes(), ds.chunks[0] * rows.dtype.itemsize), dtype=np.uint32)


@pytest.mark.parametrize(
    "col,value,reason",
    [
        ("offset", -8, "blob range outside"),
        ("numel", 400, "element count disagrees"),
        ("nbytes", 10_000_000, "byte count disagrees"),
        ("data_loc", 7, "unknown data location"),
    ],
)
def test_inconsistent_row_is_marked_and_raises(tmp_path: Path, col: str, value: int, reason: str) -> None:
    t = make(tmp_path / "t", shards=1)
    craft(t / "shard-000000.h5", col, value)
    with open_trace(t) as tr:
        assert reason in tr[0].damage.reason  # type: ignore[union-attr]
        with pytest.raises(DamagedRecordError, match=reason):
            tr.read(0)
        np.testing.assert_array_equal(tr.read(2), np.zeros((2, 3)))


def test_unknown_kind_is_skipped_unknown_phase_dropped(tmp_path: Path) -> None:
    t = make(tmp_path / "t", shards=1)
    craft(t / "shard-000000.h5", "kind", 200, row=0)  # a newer writer's kind: ignored, as the format says
    craft(t / "shard-000000.h5", "phase", 9, row=2)
    with open_trace(t) as tr:
        assert list(tr) == [1]
        h = tr.health
        assert h.records_skipped == 1 and h.records_lost == 1
        assert [d.what for d in tr.damage] == ["record 2"] and "phase" in tr.damage[0].reason


def test_malformed_meta_attribute_is_reported(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    with h5py.File(t / "shard-000000.h5", "r+") as f:
        f.attrs["meta"] = np.bytes_(b"{not json")  # fixed-length, as the writer stores text
    with open_trace(t) as tr:
        assert tr.meta["producer"] == "padiff-trace"  # from another shard
        assert {d.what for d in tr.damage} == {"root attributes", "attribute meta"}
        assert len(tr) == 9


# ---------------------------------------------------------------------- one recording
def test_only_exact_shard_names_of_one_recording_are_merged(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    other = make(tmp_path / "other", shards=4)
    (t / "backup-shard-000001.h5").write_bytes((t / "shard-000001.h5").read_bytes())
    (t / "shard-1.h5").write_bytes((t / "shard-000001.h5").read_bytes())
    (t / "shard-000003.h5").write_bytes((other / "shard-000003.h5").read_bytes())
    with open_trace(t) as tr:
        assert list(tr) == list(range(9))
        (d,) = tr.damage
        assert d.shard == t / "shard-000003.h5" and "another recording" in d.reason
        assert tr.recording is not None and len(tr.recording) == 32


def test_reader_notices_replaced_files(tmp_path: Path) -> None:
    t = tmp_path / "t"
    with TraceWriter(t, options=WriterOptions(flush_records=1)) as w:
        for i in range(40):  # 40 shards: more than a reader keeps open
            w.append(H, np.full(3, i, dtype=np.float32))
    with open_trace(t) as tr:
        for i in range(40):
            tr.read(i)
        with TraceWriter(t, overwrite=True, options=WriterOptions(flush_records=1)) as w:
            for i in range(40):
                w.append(H, np.full(3, -i, dtype=np.float32))
        with pytest.raises(TraceChangedError, match=r"shard-000000\.h5: the file was replaced"):
            tr.read(0)


def test_second_writer_is_refused_in_process(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path / "t")
    with pytest.raises(TraceLockedError, match="another TraceWriter of this process"):
        TraceWriter(tmp_path / "t", overwrite=True)
    w.close()
    assert not (tmp_path / "t" / ".padiff-trace.lock").exists()
    TraceWriter(tmp_path / "t", overwrite=True).close()


_CHILD = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    from padiff_trace import Kind, Phase, RecordHeader, TraceWriter
    w = TraceWriter(sys.argv[1])
    w.append(RecordHeader(step=0, phase=Phase.FORWARD, kind=Kind.MODULE_OUTPUT), np.ones(3))
    print("ready", flush=True)
    if sys.argv[2] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    sys.stdin.read()
    w.close()
""")


def _child(trace: Path, mode: str) -> subprocess.Popen[str]:
    env = dict(os.environ, HDF5_USE_FILE_LOCKING="FALSE")
    p = subprocess.Popen([sys.executable, "-c", _CHILD, str(trace), mode], env=env, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    return p


def test_second_writer_is_refused_without_hdf5_file_locking(tmp_path: Path) -> None:
    p = _child(tmp_path / "t", "hold")
    try:
        with pytest.raises(TraceLockedError, match=f"pid {p.pid}"):
            TraceWriter(tmp_path / "t", overwrite=True)
    finally:
        p.communicate("", timeout=60)
    with open_trace(tmp_path / "t") as tr:
        assert tr.complete and len(tr) == 1


def test_lock_of_a_killed_writer_is_taken_over(tmp_path: Path) -> None:
    p = _child(tmp_path / "t", "kill")
    assert p.wait(timeout=60) == -signal.SIGKILL
    assert (tmp_path / "t" / ".padiff-trace.lock").exists()
    with TraceWriter(tmp_path / "t", overwrite=True) as w:
        w.append(H, np.ones(2))
    # a lock file whose (dead) writer is recorded but nobody holds: taken over too
    lock = tmp_path / "u" / ".padiff-trace.lock"
    lock.parent.mkdir()
    lock.write_text(json.dumps({"pid": 2**22 + 12345, "host": os.uname().nodename}))
    TraceWriter(tmp_path / "u").close()


def test_overwrite_removes_only_verified_shards(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    keep = {"shard-backup.h5": "text", "notes.txt": "mine", ".padiff-write-test": "user file", "shard-1.h5": "x"}
    for name, text in keep.items():
        (t / name).write_text(text)
    with TraceWriter(t, overwrite=True) as w:
        w.append(H, np.ones(2))
    assert sorted(p.name for p in t.iterdir()) == sorted([*keep, "shard-000000.h5"])
    assert all((t / n).read_text() == v for n, v in keep.items())


@pytest.mark.parametrize("foreign", ["hdf5", "text"])
def test_overwrite_refuses_a_foreign_file_with_a_shard_name(tmp_path: Path, foreign: str) -> None:
    t = make(tmp_path / "t", shards=1)
    f1 = t / "shard-000001.h5"
    if foreign == "hdf5":
        with h5py.File(f1, "w") as f:
            f["x"] = np.arange(3)
    else:
        f1.write_text("not a shard")
    before = f1.read_bytes()
    with pytest.raises(TraceExistsError, match=r"shard-000001\.h5 is named like a shard but not a padiff-trace shard"):
        TraceWriter(t, overwrite=True)
    assert f1.read_bytes() == before and (t / "shard-000000.h5").exists()
    assert not (t / ".padiff-trace.lock").exists()


# ---------------------------------------------------------------------- names
def test_any_name_is_stored_exactly(tmp_path: Path) -> None:
    names = ["nul\x00inside", "tab\tnew\nline\x01\x7f", "lone\udcffsurrogate", "\ufdd0marker-like", "plain"]
    with TraceWriter(tmp_path / "t", meta={"tags": {"who": "x\udcff\x00"}}) as w:
        for n in names:
            h = RecordHeader(step=0, phase=Phase.FORWARD, kind=Kind.MODULE_OUTPUT, module=n, module_type=n, position=n,
                             stack=(Frame(n, 1, n, n),))
            w.append(h, np.ones(2), dtype=None)
    with open_trace(tmp_path / "t") as tr:
        assert tr.health.ok and tr.meta["tags"] == {"who": "x\udcff\x00"}
        for r, n in zip(tr.records(), names):
            assert (r.module, r.module_type, r.position, r.stack) == (n, n, n, (Frame(n, 1, n, n),))


# ---------------------------------------------------------------------- old traces
def test_format_1_0_shards_still_read_and_say_what_is_unverified(tmp_path: Path) -> None:
    t = make(tmp_path / "t", shards=2)
    for s in t.glob("shard-*.h5"):  # what a 1.0 writer left: none of the 1.1 additions
        with h5py.File(s, "r+") as f:
            for a in ("format_minor", "recording", "attrs_crc32"):
                del f.attrs[a]
            del f["crc32"], f["crc32_index"], f["string_bytes"]
            del f["records"].attrs["crc32"]
    with open_trace(t) as tr:
        assert tr.complete and tr.recording is None
        np.testing.assert_array_equal(tr.read(4), BIG + 1)
        assert tr.check() == [] and tr.health.unverified == 2
        assert "2 record(s) without checksums (format 1.0)" in str(tr.health)


def test_committed_v1_trace_checks_clean() -> None:
    with open_trace(Path(__file__).parent / "data" / "v1_small.trace") as tr:
        assert tr.check() == [] and tr.health.ok and tr.health.checked


# ---------------------------------------------------------------------- CLI
def test_check_exit_codes_and_ls_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean = make(tmp_path / "arch" / "clean", shards=1)
    hurt = make(tmp_path / "arch" / "hurt")
    s1 = hurt / "shard-000001.h5"
    flip(s1, data_offset(s1, "tensors/4") + 10)
    gone = make(tmp_path / "arch" / "gone", shards=1)
    s0 = gone / "shard-000000.h5"
    with h5py.File(s0, "r") as f:
        chunk = int(f["records"].id.get_chunk_info(0).byte_offset)
    flip(s0, chunk + 3)
    assert main(["check", str(clean)]) == 0
    assert main(["check", str(hurt)]) == 1
    out = capsys.readouterr().out
    assert "shard-000001.h5: record 4" in out and "CRC-32" in out
    assert main(["check", str(gone)]) == 2
    capsys.readouterr()
    assert main(["ls", str(tmp_path / "arch")]) == 0
    rows = {ln.split()[0]: ln for ln in capsys.readouterr().out.splitlines()[1:]}
    assert set(rows) == {"clean", "hurt", "gone"}
    assert "DAMAGED" in rows["gone"] and "DAMAGED" not in rows["clean"]  # hurt: its data is only read by check
    assert main(["info", str(gone)]) == 0
    assert "health     DAMAGED" in capsys.readouterr().out


# ---------------------------------------------------------------------- fault injection
def test_fault_injection_subset(tmp_path: Path) -> None:
    """A sample of every kind of fault (tests/fault_inject.py --quick): each is detected and
    reported with the rest intact, or has no effect; never a traceback or a wrong value."""
    sys.path.insert(0, str(Path(__file__).parent))
    import fault_inject

    c = fault_inject.run(tmp_path, quick=True, per_region=2, spread=60)
    assert not c.bad, "\n".join(f"{o.kind}: {name}: {o.note}" for name, o in c.bad)
    assert c.counts["detected"] > 60 and c.salvaged > 0
    assert set(c.by_family) == {"flip", "truncate", "crafted", "files", "outside", "bounded", "changing"}
    assert all(fc["detected"] == sum(fc.values()) for fam, fc in c.by_family.items() if fam == "outside")
    assert max(c.peak_rss_mb.values()) <= fault_inject.RSS_BOUND_MB
