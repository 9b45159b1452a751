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
from padiff_trace.analyzer._calls import build_view
from padiff_trace.analyzer._noise import noise_floor
from test_report_stream import _chain

from padiff_trace import Record, analyzer, open_trace


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
    assert per_record < 200, f"{per_record:.0f} bytes a record (with a Record object per record: ~450)"
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
    """Peak traced memory of a whole compare, per record of both traces: ~780 bytes; the
    session 6 code (Record objects in views, the plan as a list, an object per pair in the
    amplifiers and the locator) peaked at ~1,200 on this pair."""
    rep, (_, peak) = _traced(lambda: analyzer.compare(*traces, atol=1e-4, rtol=0, quiet=True))
    assert rep.verdict == "DIVERGED" and rep.first_divergence.located.a.call.module == "layers.9000"
    assert peak / 40_000 < 1000, f"{peak / 40_000:.0f} bytes a record at the peak"


def test_statistics_are_read_on_demand_and_verified_again(tmp_path: Path) -> None:
    """The opened index holds no statistics (72 of a stored row's 148 bytes); ``Record.stats``
    reads them from /records, verified again: bytes changed after opening are never a number."""
    from padiff_trace import DamagedRecordError
    from padiff_trace._schema import RECORD_DTYPE, STAT_FIELDS

    path = _chain(tmp_path / "a", "paddle", 200, None)
    tr = open_trace(path)
    assert "stats" not in (tr.table.dtype.names or ()) and tr.table.dtype.itemsize < 100
    rec = tr.record_at(7)
    data = rec.read().astype(np.float64)
    assert rec.stats["max"] == data.max() and rec.stats["min"] == data.min()
    assert tr.stat_column("max")[7] == data.max()
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
