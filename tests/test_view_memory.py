"""Views of a trace keep row numbers, not records (issue 15: compare memory at a million
records): what a view and a comparison hold per record, measured with tracemalloc."""

from __future__ import annotations

import gc
import os
import tracemalloc
from pathlib import Path

import h5py
import numpy as np
import pytest
from padiff_trace.analyzer.alignment._calls import build_view
from padiff_trace.analyzer.judging._noise import noise_floor
from test_report_stream import _chain

from padiff_trace import Kind, Phase, Record, RecordHeader, TraceWriter, analyzer, open_trace


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("views")
    return _chain(d / "a", "paddle", 10_000, None), _chain(d / "b", "torch", 10_000, 9_000)


def _traced(fn):  # type: ignore[no-untyped-def]
    gc.collect()
    tracemalloc.start()
    try:
        out = fn()
        gc.collect()
        return out, tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()


def test_a_view_holds_under_200_bytes_a_record(traces: tuple[Path, Path]) -> None:
    t = open_trace(traces[0])
    view, (current, _) = _traced(lambda: build_view(t))
    per_record = current / len(t)
    assert per_record < 130, f"{per_record:.0f} bytes a record (~90 with int32 columns; a Record object per record: ~450)"
    call = view.by_id[5]
    assert [r.position for r in call.inputs] == ["args[0]"] and [r.position for r in call.outputs] == ["out"]
    assert call.outputs[0] == t.record_at(call.outputs[0].row)  # built twice, one record
    assert call.outputs[0] != call.inputs[0]
    assert len({call.outputs[0], call.outputs[0]}) == 1


def test_records_of_two_opened_traces_differ(traces: tuple[Path, Path]) -> None:
    a, b = open_trace(traces[0]), open_trace(traces[0])
    assert a.record_at(3) == a[a.record_at(3).seq]
    assert a.record_at(3) != b.record_at(3)  # another opened trace: reads may differ
    assert isinstance(a.record_at(3), Record) and a.row_of(a.record_at(3).seq) == 3 and a.row_of(-5) is None


def test_noise_floor_is_two_columns(traces: tuple[Path, Path]) -> None:
    view = build_view(open_trace(traces[0]))
    floor, (current, _) = _traced(lambda: noise_floor(view))
    assert current < 20 * len(view.trace) + 100_000
    outs = [c.outputs[0] for c in view.calls[0][1:]]
    assert floor.relative(outs[-1].seq) > floor.relative(outs[0].seq) > 0  # error grows with depth
    assert floor.relative(10**9) is None


def test_compare_transients_stay_small(traces: tuple[Path, Path]) -> None:
    """Peak traced memory of a whole compare, per record of both traces: ~620 bytes (~780 with
    int64 index columns and per-pair lists in the report's analyses); the session 6 code
    (Record objects in views, the plan as a list, an object per pair in the amplifiers and
    the locator) peaked at ~1,200 on this pair."""
    rep, (_, peak) = _traced(lambda: analyzer.compare(*traces, atol=1e-4, rtol=0, quiet=True))
    assert rep.verdict == "DIVERGED" and rep.first_divergence.located.a.call.module == "layers.9000"
    assert peak / 40_000 < 800, f"{peak / 40_000:.0f} bytes a record at the peak"


def test_statistics_are_read_on_demand_and_verified_again(tmp_path: Path) -> None:
    """The opened index holds no statistics (72 of a stored row's 148 bytes); ``Record.stats``
    reads them from /records, verified again: bytes changed after opening are never a number."""
    from padiff_trace import DamagedRecordError
    from padiff_trace.trace._schema import RECORD_DTYPE, STAT_FIELDS

    path = _chain(tmp_path / "a", "paddle", 200, None)
    tr = open_trace(path)
    assert "stats" not in (tr.table.dtype.names or ()) and tr.table.dtype.itemsize < 100
    rec = tr.record_at(7)
    data = rec.read().astype(np.float64)
    assert rec.stats["max"] == data.max() and rec.stats["min"] == data.min()
    assert tr.stat_column("max")[7] == data.max() and tr.stat_columns("min", "max")[7].tolist() == [data.min(), data.max()]
    shard = tr.shard_paths[0]
    with h5py.File(shard, "r") as f:
        ds = f["records"]
        where = ds.id.get_chunk_info(0).byte_offset + int(tr.table["frow"][7]) * RECORD_DTYPE.itemsize
    where += RECORD_DTYPE.fields["stats"][1] + 8 * STAT_FIELDS.index("max")  # type: ignore[index]
    tr.close()  # files are opened again on the next read: only if they are the same file
    st = shard.stat()
    with open(shard, "r+b") as fh:  # the byte changes; inode, size and modification time do not
        fh.seek(where)
        b = fh.read(1)
        fh.seek(where)
        fh.write(bytes([b[0] ^ 0x40]))
    os.utime(shard, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(DamagedRecordError, match="record 7"):
        _ = rec.stats
    assert np.isnan(tr.stat_column("max")[7]) and any("statistics" in str(d) for d in tr.damage)


def _ids_chain(path: Path, framework: str, first_id: int, calls: int, bad: int | None) -> Path:
    """``_chain`` with call ids starting at ``first_id`` (large ids: the index keeps int64)."""
    base = np.linspace(-1, 1, 8, dtype=np.float32)
    with TraceWriter(path, {"framework": framework}) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", first_id, -1, 0, "args[0]"), base)
        for i in range(calls):
            y = base * np.float32(i + 2) + (np.float32(0.5) if i == bad else np.float32(0))
            cid = first_id + 1 + i
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, f"layers.{i}", "Linear", cid, first_id, 0, "args[0]"), base)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, f"layers.{i}", "Linear", cid, first_id, 0, "out"), y)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", first_id, -1, 0, "out"), base)
    return path


@pytest.mark.parametrize(("first_id", "wide"), [(1, False), (2**40, True)])
def test_index_columns_are_int32_only_where_every_value_fits(tmp_path: Path, first_id: int, wide: bool) -> None:
    """Small traces keep 4-byte sequence numbers, ids and offsets; a column holding one large
    value stays int64, and both compare the same (the planted call is found)."""
    a = _ids_chain(tmp_path / "a", "paddle", first_id, 40, None)
    b = _ids_chain(tmp_path / "b", "torch", first_id, 40, 31)
    tr = open_trace(a)
    t = tr.table
    assert t["seq"].dtype == np.int32 and t["offset"].dtype == np.int32
    assert t["call"].dtype == (np.int64 if wide else np.int32) and t["parent"].dtype == t["call"].dtype
    assert t.dtype.itemsize == (75 if wide else 67)
    assert [r.call for r in tr.select(module="layers.3")] == [first_id + 4] * 2
    assert tr[5].seq == 5 and 5 in tr and 10**6 not in tr and -1 not in tr
    rep = analyzer.compare(a, b, atol=1e-4, rtol=0, quiet=True)
    assert rep.verdict == "DIVERGED" and rep.first_divergence.located.a.call.module == "layers.31"
    assert rep.first_divergence.located.a.call.id == first_id + 32


def test_compact_narrows_column_by_column() -> None:
    from padiff_trace.trace._shardindex import INDEX_DTYPE, compact

    rows = np.zeros(3, INDEX_DTYPE)
    rows["seq"] = [0, 1, 2]
    rows["offset"] = [0, 2**30 - 1, 2**30]  # the last one does not fit: a sum of two would overflow int32
    rows["call"] = [-1, -(2**30) + 1, 7]
    out = compact(rows)
    assert out.dtype["seq"] == np.int32 and out.dtype["call"] == np.int32 and out.dtype["offset"] == np.int64
    for name in INDEX_DTYPE.names or ():
        assert out[name].tolist() == rows[name].tolist()
    assert compact(out) is out


@pytest.mark.parametrize("seqs", [[3, 4, 5, 6], [0, 2, 5, 9], [9, 2, 5, 0], [], [7]])
def test_seq_index_finds_every_row_and_nothing_else(seqs: list[int]) -> None:
    from padiff_trace.trace._index import SeqIndex

    ix = SeqIndex(np.array(seqs, dtype=np.int32))
    assert [ix[s] for s in seqs] == list(range(len(seqs)))
    for missing in (-1, 1, 8, 10, 2**40):
        if missing not in seqs:
            assert missing not in ix
            with pytest.raises(KeyError):
                ix[missing]


def test_pair_table_widens_to_int64_when_a_value_needs_it(traces: tuple[Path, Path]) -> None:
    import dataclasses

    from padiff_trace.analyzer.judging._pairtable import PairDraft, PairTable
    from padiff_trace.analyzer.judging._tolerance import Tolerance

    va, vb = build_view(open_trace(traces[0])), build_view(open_trace(traces[1]))
    table = PairTable(va, vb)
    tol = Tolerance(1e-4, 0.0, "abs")
    ra, rb = va.trace[3], vb.trace[3]
    for a in (ra, dataclasses.replace(ra, seq=2**40), ra):
        table.append(PairDraft("output", 0, a, rb, None, None, tol, None, True, "", (0, 1, int(a.seq))))
    table.finish()
    assert table.col("seq_a").dtype == np.int64 and table.col("seq_a").tolist() == [3, 3, 2**40]
    assert table.col("seq_b").tolist() == [3, 3, 3] and table.record(1, 0) == ra


def test_a_statistics_column_of_a_replaced_shard_is_damage_not_a_traceback(tmp_path: Path) -> None:
    """The shard is replaced after the trace was opened: the column reads NaN for its records
    and the damage list says why; nothing raises."""
    path = _chain(tmp_path / "a", "paddle", 50, None)
    tr = open_trace(path)
    assert np.isfinite(tr.stat_column("max")).all()
    tr.close()
    shard = tr.shard_paths[0]
    _chain(tmp_path / "b", "paddle", 50, None)
    os.replace(next((tmp_path / "b").glob("shard-*.h5")), shard)  # another file under the same name
    col = tr.stat_column("max")
    assert np.isnan(col).all() and any("statistics of" in str(d) and shard.name in str(d) for d in tr.damage)


def test_statistics_of_a_shard_that_is_no_longer_hdf5_are_a_damaged_record(tmp_path: Path) -> None:
    from padiff_trace import DamagedRecordError

    tr = open_trace(_chain(tmp_path / "a", "paddle", 20, None))
    rec = tr.record_at(3)
    tr.close()
    tr.shard_paths[0].write_bytes(b"not a trace any more" * 100)
    with pytest.raises(DamagedRecordError, match="record 3"):
        _ = rec.stats
    assert np.isnan(tr.stat_column("max")).all()
