"""A trace is a closed world (issue 26): a crafted shard may not make the reader read outside it,
hang, allocate what the file does not hold, crash on deep or out-of-range text, or die by
SIGBUS when a shard shrinks under it. Each attack is crafted with h5py into a real trace and
checked through the library and the command line (subprocesses with a timeout, so a hang
fails, and an address-space limit, so an unbounded allocation fails)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np
import pytest
from fault_hostile import craft_rows, craft_string, outside_h5, replace_object, set_root_attr

from padiff_trace import CorruptTraceError, DamagedRecordError, Frame, Kind, Phase, RecordHeader, TraceWriter, open_trace
from padiff_trace._errors import HostileTraceError, ShardChangedError

STACK = (Frame("model.py", 7, "forward", "return self.fc(x)"),)
ROOT = RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]", stack=STACK)
H = RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "layers.3", "Linear", 1, 0, 0, "out", stack=STACK)
H2 = RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "layers.4", "Linear", 2, 0, 0, "out", stack=STACK)
OUT = RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out", stack=STACK)
BIG = np.arange(600_000, dtype=np.float32) / 7  # 2.4 MB: a dataset of its own (/tensors/1)
SHARD = "shard-000000.h5"
SECRET = "SECRET42"  # as long as the module name it replaces in a leaked string table
LIMIT_AS = 1536 << 20  # address space of each CLI run: an allocation the file does not back fails
TIMEOUT = 60  # seconds: a reader blocked on a FIFO fails the test instead of hanging it


def make(path: Path) -> Path:
    """One shard of a model call: its input (small, in /blob), a large module output
    (/tensors/1), a small one, the model output with statistics only."""
    with TraceWriter(path) as w:
        w.append(ROOT, np.full(100, 1.5, dtype=np.float32))
        w.append(H, BIG)
        w.append(H2, np.full((2, 3), 2.0))
        w.append(OUT, np.full(4, 3.0, dtype=np.float32), keep_data=False)
    return path


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m padiff_trace ARGS`` under ``LIMIT_AS``; a run past ``TIMEOUT`` fails the test."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))

    try:
        return subprocess.run([sys.executable, "-m", "padiff_trace", *map(str, args)], capture_output=True,
                              text=True, timeout=TIMEOUT, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"padiff-trace {' '.join(map(str, args))} hung for {TIMEOUT} s")


def assert_one_line_error(r: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 2, no traceback, one ``padiff-trace: error:`` line holding every needle."""
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("padiff-trace: error:")]
    assert len(lines) == 1, r.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# ---------------------------------------------------------------------- crafting
def external_link(out: Path, relative: bool = False) -> Callable[[Path], None]:
    def apply(t: Path) -> None:
        def link(f: h5py.File, data: np.ndarray) -> None:
            target = outside_h5(out / "secret.h5", data)
            f["blob"] = h5py.ExternalLink(f"../{out.name}/secret.h5" if relative else str(target), "/d")
        replace_object(t / SHARD, "blob", link)
    return apply


def soft_link_out(out: Path) -> Callable[[Path], None]:
    def apply(t: Path) -> None:
        def link(f: h5py.File, data: np.ndarray) -> None:
            f["elsewhere"] = h5py.ExternalLink(str(outside_h5(out / "secret.h5", data)), "/d")
            f["blob"] = h5py.SoftLink("/elsewhere")
        replace_object(t / SHARD, "blob", link)
    return apply


def external_storage(out: Path, fifo: bool = False) -> Callable[[Path], None]:
    def apply(t: Path) -> None:
        def store(f: h5py.File, data: np.ndarray) -> None:
            raw = out / ("fifo" if fifo else "secret.bin")
            if fifo:
                os.mkfifo(raw)
            else:
                raw.write_bytes(data.tobytes())
            f.create_dataset("blob", shape=data.shape, dtype=data.dtype, external=[(str(raw), 0, data.nbytes)])
        replace_object(t / SHARD, "blob", store)
    return apply


def external_link_to_fifo(out: Path) -> Callable[[Path], None]:
    def apply(t: Path) -> None:
        os.mkfifo(out / "fifo.h5")
        replace_object(t / SHARD, "blob", lambda f, _: f.__setitem__("blob", h5py.ExternalLink(str(out / "fifo.h5"), "/d")))
    return apply


def virtual_dataset(out: Path) -> Callable[[Path], None]:
    def apply(t: Path) -> None:
        def virtual(f: h5py.File, data: np.ndarray) -> None:
            src = outside_h5(out / "secret.h5", data)
            layout = h5py.VirtualLayout(shape=data.shape, dtype=data.dtype)
            layout[:] = h5py.VirtualSource(str(src), "d", shape=data.shape)
            f.create_virtual_dataset("blob", layout)
        replace_object(t / SHARD, "blob", virtual)
    return apply


def unknown_filter(out: Path) -> Callable[[Path], None]:
    def apply(t: Path) -> None:
        def filtered(f: h5py.File, data: np.ndarray) -> None:
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_chunk((len(data),))
            dcpl.set_filter(40000, h5py.h5z.FLAG_OPTIONAL, ())  # optional: written unfiltered, read with a plugin lookup
            dsid = h5py.h5d.create(f.id, b"blob", h5py.h5t.NATIVE_UINT8, h5py.h5s.create_simple(data.shape), dcpl=dcpl)
            h5py.Dataset(dsid)[...] = data
        replace_object(t / SHARD, "blob", filtered)
    return apply


ATTACKS: dict[str, tuple[Callable[[Path], Callable[[Path], None]], str]] = {
    "external-link": (external_link, "external link"),
    "external-link-dotdot": (lambda out: external_link(out, relative=True), "external link"),
    "soft-link-out": (soft_link_out, "soft link"),
    "external-storage": (external_storage, "another file"),
    "virtual-dataset": (virtual_dataset, "virtual dataset"),
    "external-storage-fifo": (lambda out: external_storage(out, fifo=True), "another file"),
    "external-link-fifo": (external_link_to_fifo, "external link"),
    "unknown-filter": (unknown_filter, "filter 40000"),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_objects_leading_outside_the_shard_are_refused(tmp_path: Path, attack: str) -> None:
    t, out = make(tmp_path / "t"), tmp_path / "outside"
    out.mkdir()
    craft, words = ATTACKS[attack]
    craft(out)(t)
    shard = str(t / SHARD)
    if "fifo" not in attack:  # in this process a reader that follows the link would block for good
        with pytest.raises(HostileTraceError) as err:
            open_trace(t)
        assert shard in str(err.value) and "/blob" in str(err.value) and words in str(err.value)
        assert "\n" not in str(err.value)
    intact = make(tmp_path / "intact")
    for args in (("info", t), ("check", t), ("compare", t, intact), ("compare", intact, t)):
        assert_one_line_error(cli(*args), shard, "/blob", words)


def test_outside_text_never_reaches_output(tmp_path: Path) -> None:
    """The string table stored in another file (checksum recomputed over that file): its text
    (module names) would be listed as the trace's own."""
    t, out = make(tmp_path / "t"), tmp_path / "outside"
    out.mkdir()
    secret = out / "secret.bin"
    with h5py.File(t / SHARD, "r+") as f:
        joined = f["string_bytes"][...].tobytes().replace(b"layers.3", SECRET.encode())
        secret.write_bytes(joined)
        count = int(f["string_bytes"].attrs["count"])
        del f["string_bytes"]
        ds = f.create_dataset("string_bytes", shape=(len(joined),), dtype=np.uint8, external=[(str(secret), 0, len(joined))])
        ds.attrs["count"], ds.attrs["crc32"] = count, np.uint32(zlib.crc32(joined))
    for args in (("ls", t), ("info", t), ("check", t)):
        r = cli(*args)
        assert SECRET not in r.stdout + r.stderr
        assert_one_line_error(r, str(t / SHARD), "/string_bytes", "another file")


def test_a_tensor_dataset_linked_outside_is_a_damaged_record(tmp_path: Path) -> None:
    """/tensors/<seq> is checked when first read (not at open: a shard holds thousands); with
    the same bytes outside, ``check`` used to say every byte verified."""
    t, out = make(tmp_path / "t"), tmp_path / "outside"
    out.mkdir()
    with h5py.File(t / SHARD, "r+") as f:
        del f["tensor_offsets"]  # read through HDF5, as a format 1.0 or compressed tensor is
        outside_h5(out / "secret.h5", f["tensors/1"][...])
        del f["tensors/1"]
        f["tensors/1"] = h5py.ExternalLink(str(out / "secret.h5"), "/d")
    with open_trace(t) as tr:
        np.testing.assert_array_equal(tr.read(0), np.full(100, 1.5, dtype=np.float32))
        with pytest.raises(DamagedRecordError, match="external link") as err:
            tr.read(1)
        assert str(t / SHARD) in str(err.value) and "/tensors/1" in str(err.value)
    r = cli("check", t)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "every byte verified" not in r.stdout
    assert "/tensors/1" in r.stdout and "external link" in r.stdout
    r = cli("compare", t, make(tmp_path / "intact"))
    assert r.returncode != 0 and "Traceback" not in r.stderr and "ALIGNED" not in r.stdout


def test_fifo_named_as_a_shard_is_refused_unopened(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    os.mkfifo(t / "shard-000001.h5")  # opened to read, it would wait for a writer forever
    with open_trace(t) as tr:
        (d,) = tr.damage
        assert d.shard == t / "shard-000001.h5" and "FIFO" in d.reason
        assert len(tr) == 4
    r = cli("check", t)
    assert r.returncode == 1 and "FIFO" in r.stdout and "Traceback" not in r.stderr
    lone = tmp_path / "lone.h5"
    os.mkfifo(lone)
    assert_one_line_error(cli("info", lone), str(lone), "FIFO")


@pytest.mark.parametrize("where", ["/crc32", "attribute last_seq"])
def test_text_where_numbers_are_expected_is_refused(tmp_path: Path, where: str) -> None:
    t = make(tmp_path / "t")
    if where == "/crc32":
        replace_object(t / SHARD, "crc32", lambda f, data: f.create_dataset("crc32", data=[str(v) for v in data.tolist()],
                                                                        dtype=h5py.string_dtype()))
    else:
        set_root_attr(t / SHARD, "last_seq", "1e400")
    with pytest.raises(HostileTraceError, match=where) as err:
        open_trace(t)
    assert "a number is expected" in str(err.value) or "not what the format stores" in str(err.value)
    assert_one_line_error(cli("check", t), str(t / SHARD), where)


# ---------------------------------------------------------------------- crafted values (helpers: fault_hostile.py)
def test_negative_element_count_is_dropped_not_computed_with(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    craft_rows(t / SHARD, numel=(3, -1))  # the stats-only record: nothing checks it against data
    with open_trace(t) as tr:
        assert 3 not in tr and len(tr) == 3
        assert any("negative element" in d.reason for d in tr.damage)
    r = cli("compare", t, make(tmp_path / "intact"))
    assert r.returncode in (1, 3) and "Traceback" not in r.stderr and "math domain" not in r.stderr


def test_shape_past_int64_is_not_a_shape(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    craft_string(t / SHARD, "[100]", f"[{1 << 62}, 4]")
    with open_trace(t) as tr:
        assert "shape is not a list of sizes" in tr[0].damage.reason  # type: ignore[union-attr]
        with pytest.raises(DamagedRecordError):
            tr.read(0)
    r = cli("check", t)
    assert r.returncode == 1 and "Traceback" not in r.stderr


@pytest.mark.parametrize("stack", ["[" * 200_000 + "]" * 200_000, '[["model.py", 1e400, "forward", "x"]]'],
                         ids=["nested-200k", "line-1e400"])
def test_malformed_stack_text_reads_as_no_stack(tmp_path: Path, stack: str) -> None:
    t = make(tmp_path / "t")
    with h5py.File(t / SHARD, "r") as f:
        old = next(s for s in f["string_bytes"][...].tobytes().decode().split("\x00") if s.startswith("[["))
    craft_string(t / SHARD, old, stack)
    with open_trace(t) as tr:
        assert tr[0].stack == ()
        assert any("stack" in d.reason for d in tr.damage)
    r = cli("compare", t, make(tmp_path / "intact"))
    assert "Traceback" not in r.stderr and r.returncode in (0, 1, 3)


def test_deeply_nested_meta_is_damage_not_a_crash(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    set_root_attr(t / SHARD, "meta", '{"a": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with open_trace(t) as tr:
        assert tr.meta == {} and any(d.what == "attribute meta" for d in tr.damage)
    r = cli("info", t, "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr and json.loads(r.stdout)["meta"] == {}
    set_root_attr(t / SHARD, "meta", '{"a": ' + "[" * 500 + "]" * 500 + "}")  # parses; too deep to print back
    r = cli("info", t, "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr and json.loads(r.stdout)["meta"] == {}


def test_attribute_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    with h5py.File(t / SHARD, "r+") as f:
        f.attrs["meta"] = np.bytes_(b"{" + b" " * (20 << 20) + b"}")  # 20 MiB, fixed length: its size is in its type
    with pytest.raises(HostileTraceError, match="attribute meta") as err:
        open_trace(t)
    assert "16 MiB" in str(err.value)
    assert_one_line_error(cli("info", t), str(t / SHARD), "attribute meta", "16 MiB")


def test_dataset_claiming_what_the_file_does_not_hold_is_refused(tmp_path: Path) -> None:
    """A /blob of 4 GB of unwritten chunks (HDF5 would return fill values for all of it) and a
    record of a billion elements in it: reading the record used to allocate 4 GB."""
    t = make(tmp_path / "t")
    n = 1_000_000_000
    craft_string(t / SHARD, "[100]", f"[{n}]")
    craft_rows(t / SHARD, numel=(0, n), nbytes=(0, 4 * n))
    with h5py.File(t / SHARD, "r+") as f:
        del f["blob"]
        f.create_dataset("blob", shape=(4 * n + 64,), dtype=np.uint8, chunks=(1 << 20,))
        rows = f["crc32_index"][...]
        rows[rows[:, 0] == -1, 1] = 4 * n + 64
        f["crc32_index"][...] = rows
    with pytest.raises(HostileTraceError, match="claims"):
        open_trace(t)
    assert_one_line_error(cli("check", t), str(t / SHARD), "/blob", "claims")


def test_far_apart_steps_do_not_allocate_their_range(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    craft_rows(t / SHARD, step=(0, -(2**31)))
    craft_rows(t / SHARD, step=(3, 2**31 - 1))
    r = cli("info", t)
    assert r.returncode == 0 and "Traceback" not in r.stderr


# ---------------------------------------------------------------------- shrinking files
SHRINK = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    from padiff_trace import open_trace

    trace, shard = sys.argv[1], sys.argv[2]
    with open_trace(trace) as tr:
        rec = tr[1]
        piece = tr.read_stored(rec, 0, rec.numel, view=True)  # what the analyzer holds while measuring
        os.truncate(shard, 4096)  # cp or rsync --inplace rewriting the shard
        total = float(piece.sum())  # a mapping of the file would raise SIGBUS here
        try:
            tr.read_stored(tr[1], 10, 1_000_000)
        except Exception as exc:
            print("ERROR", type(exc).__name__, exc)
        print("SUM", total)
    """
)


def test_a_shard_truncated_while_read_is_one_error_not_a_signal(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    r = subprocess.run([sys.executable, "-c", SHRINK, str(t), str(t / SHARD)], capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])  # -7: killed by SIGBUS
    assert f"SUM {float(BIG.sum())}" in r.stdout
    (line,) = [ln for ln in r.stdout.splitlines() if ln.startswith("ERROR")]
    assert "ShardChangedError" in line and str(t / SHARD) in line and "record 1" in line and "changed size" in line


def test_shard_changed_error_is_both_changed_and_corrupt(tmp_path: Path) -> None:
    t = make(tmp_path / "t")
    with open_trace(t) as tr:
        tr.read(0)
        os.truncate(t / SHARD, 4096)
        with pytest.raises(ShardChangedError) as err:
            tr.read(1)
        assert isinstance(err.value, CorruptTraceError) and "\n" not in str(err.value)


def test_a_shard_overwritten_in_place_by_another_recording_is_not_read_as_this_one(tmp_path: Path) -> None:
    """``rsync --inplace`` of another recording over a shard, after the trace was opened and
    before its tensors were read: the other recording's numbers used to come back as this
    trace's (its checksum tables were read lazily, from the new bytes)."""
    t = make(tmp_path / "t")
    other = tmp_path / "o"
    with TraceWriter(other) as w:  # the same layout, other numbers
        w.append(ROOT, np.full(100, -1.5, dtype=np.float32))
        w.append(H, -BIG)
        w.append(H2, np.full((2, 3), -2.0))
        w.append(OUT, np.full(4, -3.0, dtype=np.float32), keep_data=False)
    assert (other / SHARD).stat().st_size == (t / SHARD).stat().st_size
    with open_trace(t) as tr:
        with open(other / SHARD, "rb") as src, open(t / SHARD, "r+b") as dst:
            dst.write(src.read())
        os.utime(t / SHARD, ns=(tr._shards.identities[0][3],) * 2)  # even with its old mtime
        for seq in (0, 1, 2):
            with pytest.raises(CorruptTraceError) as err:
                tr.read(seq)
            assert "\n" not in str(err.value) and str(t / SHARD) in str(err.value)


def test_text_attributes_are_fixed_length_and_a_variable_length_one_is_refused_unread(tmp_path: Path) -> None:
    """Format 1.2 writes no text attribute as a variable-length string: HDF5 reads those from a
    global heap collection, and one flipped size there made HDF5 (1.14.6 and 2.0.0) loop forever
    in ``info``. A variable-length text attribute in a 1.2 shard is refused before it is read."""
    t = make(tmp_path / "t")
    with h5py.File(t / SHARD, "r") as f:
        assert int(f.attrs["format_minor"]) == 2
        texts = {k: f.attrs.get_id(k).get_type() for k in ("format", "recording", "meta", "summary")}
        algorithm = f["crc32"].attrs.get_id("algorithm").get_type()
    assert all(tid.get_class() == h5py.h5t.STRING and not tid.is_variable_str() for tid in [*texts.values(), algorithm])
    with h5py.File(t / SHARD, "r+") as f:
        f.attrs["recording"] = f.attrs["recording"].decode()  # the same text, variable-length
    with pytest.raises(HostileTraceError, match="attribute recording: is a variable-length string"):
        open_trace(t)
    assert_one_line_error(cli("info", t), str(t / SHARD), "variable-length")
