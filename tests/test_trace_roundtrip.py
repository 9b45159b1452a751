"""Write a trace with real h5py files and read every value back."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from padiff_trace import (
    STAT_FIELDS,
    Frame,
    Kind,
    Phase,
    RecordHeader,
    TraceWriter,
    WriterOptions,
    open_trace,
)
from padiff_trace.trace._schema import DataLoc
from padiff_trace.trace._shardwriter import BIG_TENSOR_BYTES

RNG = np.random.default_rng(1234)


def header(i: int = 0, **kw: object) -> RecordHeader:
    base: dict[str, object] = dict(step=0, phase=Phase.FORWARD, kind=Kind.MODULE_OUTPUT, module=f"m{i}", position="out")
    base.update(kw)
    return RecordHeader(**base)  # type: ignore[arg-type]


def reference_stats(values: np.ndarray) -> dict[str, float]:
    """The documented statistics, computed the slow obvious way in float64."""
    v = values.astype(np.complex128) if values.dtype.kind == "c" else values.astype(np.float64)
    if v.dtype.kind == "c":
        v = np.abs(v)
    v = v.reshape(-1)
    fin = v[np.isfinite(v)]
    out = {"nan": float(np.isnan(v).sum()), "inf": float(np.isinf(v).sum()), "l2": float(np.sqrt(np.sum(fin * fin)))}
    if fin.size:
        out.update(min=fin.min(), max=fin.max(), mean=fin.mean(), std=fin.std(), mean_abs=np.abs(fin).mean())
    else:
        out.update(min=np.nan, max=np.nan, mean=np.nan, std=np.nan, mean_abs=np.nan)
    return {k: float(out[k]) for k in STAT_FIELDS}


def assert_stats(got: dict[str, float], want: dict[str, float], what: str) -> None:
    assert list(got) == list(STAT_FIELDS)
    for k in STAT_FIELDS:
        g, w = got[k], want[k]
        if np.isnan(w):
            assert np.isnan(g), f"{what}: {k} = {g}, expected nan"
        else:
            assert g == pytest.approx(w, rel=1e-10, abs=1e-300), f"{what}: {k} = {g!r}, expected {w!r}"


def sample(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype == "bool":
        return RNG.random(n).reshape(shape) > 0.5
    if dtype.startswith("complex"):
        return (RNG.standard_normal(n) + 1j * RNG.standard_normal(n)).astype(dtype).reshape(shape)
    if dtype.startswith("float"):
        return (RNG.standard_normal(n) * 5 + 2).astype(dtype).reshape(shape)
    info = np.iinfo(dtype)
    return RNG.integers(max(info.min, -1000), min(info.max, 1000), size=n, endpoint=True).astype(dtype).reshape(shape)


DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (1,), (7, 5), (2, 3, 4)])
def test_every_dtype_and_shape_round_trips(tmp_path: Path, dtype: str, shape: tuple[int, ...]) -> None:
    arr = sample(dtype, shape)
    with TraceWriter(tmp_path / "t") as w:
        seq = w.append(header(), arr)
    with open_trace(tmp_path / "t") as tr:
        rec = tr[seq]
        assert rec.dtype == dtype
        assert rec.shape == shape
        assert rec.numel == arr.size
        assert rec.has_data
        back = rec.read()
        assert back.dtype == arr.dtype and back.shape == arr.shape
        np.testing.assert_array_equal(back, arr)
        assert_stats(rec.stats, reference_stats(arr), f"{dtype}{shape}")


def test_bfloat16_bits_round_trip_and_decode_to_float32(tmp_path: Path) -> None:
    f32 = np.array([1.0, -2.5, 0.0, np.inf, np.nan, 3.140625, -1e-3], dtype=np.float32)
    bits = (f32.view(np.uint32) >> 16).astype(np.uint16)  # truncation = exact bfloat16 values
    expected = (bits.astype(np.uint32) << 16).view(np.float32)
    with TraceWriter(tmp_path / "t") as w:
        w.append(header(), bits.reshape(7, 1), dtype="bfloat16")
    with open_trace(tmp_path / "t") as tr:
        rec = tr[0]
        assert rec.dtype == "bfloat16" and rec.shape == (7, 1)
        back = rec.read()
        assert back.dtype == np.float32
        np.testing.assert_array_equal(back.reshape(-1).view(np.uint32), expected.view(np.uint32))
        assert_stats(rec.stats, reference_stats(expected), "bfloat16")
        assert rec.stats["nan"] == 1 and rec.stats["inf"] == 1
        chunks = np.concatenate(list(rec.iter_chunks(chunk_elems=3)))
        np.testing.assert_array_equal(chunks, expected.astype(np.float64))


def test_non_contiguous_and_big_endian_arrays(tmp_path: Path) -> None:
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    views = {
        "transposed": base.T,
        "strided": base[::2, ::3],
        "reversed": base[::-1],
        "fortran": np.asfortranarray(base),
        "bigendian": base.astype(">f4"),
    }
    with TraceWriter(tmp_path / "t") as w:
        seqs = {name: w.append(header(position=name), v) for name, v in views.items()}
    with open_trace(tmp_path / "t") as tr:
        for name, v in views.items():
            rec = tr[seqs[name]]
            assert rec.shape == v.shape, name
            assert rec.dtype == "float32", name
            np.testing.assert_array_equal(rec.read(), v, err_msg=name)
            assert_stats(rec.stats, reference_stats(v), name)


def test_nan_inf_statistics_over_finite_values(tmp_path: Path) -> None:
    arr = np.array([1.0, np.nan, -3.0, np.inf, -np.inf, 2.0, np.nan], dtype=np.float32)
    all_bad = np.array([np.nan, np.inf], dtype=np.float64)
    with TraceWriter(tmp_path / "t") as w:
        w.append(header(), arr)
        w.append(header(), all_bad)
    with open_trace(tmp_path / "t") as tr:
        st = tr[0].stats
        assert (st["nan"], st["inf"]) == (2, 2)
        assert (st["min"], st["max"]) == (-3.0, 2.0)
        assert st["mean"] == pytest.approx(0.0)
        assert st["mean_abs"] == pytest.approx(2.0)
        assert st["l2"] == pytest.approx(np.sqrt(14.0))
        st2 = tr[1].stats
        assert (st2["nan"], st2["inf"], st2["l2"]) == (1, 1, 0.0)
        assert np.isnan(st2["mean"]) and np.isnan(st2["min"])


@pytest.mark.parametrize("n", [70_001, 1_300_000])  # several stats blocks; > 1 MiB -> own dataset
def test_large_tensor_stats_match_float64(tmp_path: Path, n: int) -> None:
    # a large offset makes the one-pass variance cancel: the writer must notice and recompute
    arr = (RNG.standard_normal(n) * 1e-3 + 1e4).astype(np.float32)
    arr[17] = np.nan
    ints = RNG.integers(-(2**40), 2**40, size=n)
    with TraceWriter(tmp_path / "t") as w:
        w.append(header(), arr)
        w.append(header(), ints)
    with open_trace(tmp_path / "t") as tr:
        assert_stats(tr[0].stats, reference_stats(arr), "offset float32")
        assert_stats(tr[1].stats, reference_stats(ints), "int64")


def test_blob_threshold_and_dataset_storage(tmp_path: Path) -> None:
    elems = BIG_TENSOR_BYTES // 4
    below = RNG.standard_normal(elems - 1).astype(np.float32)
    exact = RNG.standard_normal(elems).astype(np.float32)
    above = RNG.standard_normal((3, elems)).astype(np.float32)[:, ::2]  # non-contiguous, 1.5 MiB
    small = [RNG.standard_normal(i + 1).astype(np.float32) for i in range(20)]
    with TraceWriter(tmp_path / "t") as w:
        w.append(header(), below)
        w.append(header(), exact)
        w.append(header(), above)
        for s in small:
            w.append(header(), s)
    with open_trace(tmp_path / "t") as tr:
        locs = tr.table["data_loc"].tolist()
        assert locs[:3] == [DataLoc.BLOB, DataLoc.DATASET, DataLoc.DATASET]
        assert set(locs[3:]) == {DataLoc.BLOB}
        for seq, want in enumerate([below, exact, above, *small]):
            np.testing.assert_array_equal(tr.read(seq), want)


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_small_tensors_filling_many_blob_chunks(tmp_path: Path, compression: str | None) -> None:
    """Small tensors are packed into 1 MiB /blob chunks as they arrive; pieces straddle chunk
    boundaries (one is just under the big-tensor threshold), some records repeat an array."""
    sizes = [1, 1000, BIG_TENSOR_BYTES // 4 - 1, 3, 250_000, 77, 200_000, 0, 5, 262_143, 10]
    arrays = [RNG.standard_normal(n).astype(np.float32) for n in sizes]
    arrays += [np.arange(i, dtype=np.float64) for i in range(1, 300)]
    arrays.insert(4, arrays[3])  # the same host array twice in a row
    with TraceWriter(tmp_path / "t", options=WriterOptions(compression=compression)) as w:
        for a in arrays:
            w.append(header(), a)
    with h5py.File(tmp_path / "t" / "shard-000000.h5", "r") as f:
        blob = f["blob"]
        assert blob.chunks == (1 << 20,) and blob.fletcher32
        assert blob.id.get_num_chunks() >= 3  # several whole chunks plus the tail
    with open_trace(tmp_path / "t") as tr:
        assert set(tr.table["data_loc"].tolist()) == {DataLoc.BLOB}
        for seq, want in enumerate(arrays):
            np.testing.assert_array_equal(tr.read(seq), want)
            assert_stats(tr[seq].stats, reference_stats(want), f"record {seq}")


@pytest.mark.parametrize("compression", ["gzip", "lzf"])
def test_compression_round_trip(tmp_path: Path, compression: str) -> None:
    big = np.repeat(RNG.standard_normal(1000), 600).astype(np.float32)  # compressible 2.4 MB
    smalls = [np.full(100, float(i)) for i in range(50)]
    with TraceWriter(tmp_path / "t", options=WriterOptions(compression=compression)) as w:
        w.append(header(), big)
        for s in smalls:
            w.append(header(), s)
    with open_trace(tmp_path / "t") as tr:
        np.testing.assert_array_equal(tr.read(0), big)
        for i, s in enumerate(smalls):
            np.testing.assert_array_equal(tr.read(i + 1), s)
        assert tr.size_bytes() < big.nbytes / 4
        np.testing.assert_array_equal(np.concatenate(list(tr.iter_chunks(0, 100_003))), big.astype(np.float64))


def test_stats_only_and_max_data_bytes(tmp_path: Path) -> None:
    small = np.arange(10, dtype=np.float32)
    large = np.arange(5000, dtype=np.float64)
    with TraceWriter(tmp_path / "a", options=WriterOptions(stats_only=True)) as w:
        w.append(header(), small)
    with TraceWriter(tmp_path / "b", options=WriterOptions(max_data_bytes=1000)) as w:
        w.append(header(), small)
        w.append(header(), large)
        w.append(header(), small, keep_data=False)
    with open_trace(tmp_path / "a") as tr:
        assert not tr[0].has_data
        assert_stats(tr[0].stats, reference_stats(small), "stats_only")
        with pytest.raises(KeyError, match="statistics only"):
            tr.read(0)
    with open_trace(tmp_path / "b") as tr:
        assert [r.has_data for r in tr.records()] == [True, False, False]
        np.testing.assert_array_equal(tr.read(0), small)
        assert_stats(tr[1].stats, reference_stats(large), "max_data_bytes")
        assert tr[1].shape == (5000,) and tr[1].numel == 5000


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex64", "bool", "float16"])
def test_iter_chunks_equals_read(tmp_path: Path, dtype: str) -> None:
    arr = sample(dtype, (37, 29))
    big = sample(dtype, (600_000,))
    with TraceWriter(tmp_path / "t") as w:
        w.append(header(), arr)
        w.append(header(), big)
    with open_trace(tmp_path / "t") as tr:
        for seq, want in ((0, arr), (1, big)):
            full = tr.read(seq)
            for chunk in (1, 7, 1000, 1 << 20) if seq == 0 else (1000, 250_000):
                parts = list(tr.iter_chunks(seq, chunk))
                assert all(p.size <= chunk for p in parts)
                joined = np.concatenate(parts)
                kind = np.complex128 if want.dtype.kind == "c" else np.float64
                assert joined.dtype == kind
                np.testing.assert_array_equal(joined, full.reshape(-1).astype(kind))


def test_header_fields_stack_and_none_records(tmp_path: Path) -> None:
    stack = (Frame("models/net.py", 12, "forward", "y = self.fc(x)"), Frame("train.py", 40, "main", "loss = net(x)"))
    h = RecordHeader(
        step=3, phase=Phase.BACKWARD, kind=Kind.GRAD_OUTPUT, module="enc.layers.0.fc", module_type="Linear",
        call=11, parent=10, call_index=2, position='out[1]["logits"]', device="gpu:0", stack=stack,
    )
    with TraceWriter(tmp_path / "t", meta={"framework": "torch", "tags": {"run": "a"}}) as w:
        w.append(h, np.ones((2, 2), dtype=np.float32))
        w.append(header(kind=Kind.MODULE_INPUT, position="kwargs[\"mask\"]"), None, dtype="py:NoneType")
        w.append(header(kind=Kind.PROBE, position="out.attr"), None, dtype="py:int", shape=())
    with open_trace(tmp_path / "t") as tr:
        r = tr[0]
        assert (r.step, r.phase, r.kind, r.module, r.module_type) == (3, Phase.BACKWARD, Kind.GRAD_OUTPUT, "enc.layers.0.fc", "Linear")
        assert (r.call, r.parent, r.call_index, r.position, r.device) == (11, 10, 2, 'out[1]["logits"]', "gpu:0")
        assert r.stack == stack and r.name == 'enc.layers.0.fc#2:out[1]["logits"]'
        n = tr[1]
        assert n.dtype == "py:NoneType" and not n.is_tensor and not n.has_data and n.stack == ()
        assert tr[2].dtype == "py:int" and tr[2].position == "out.attr"
        assert tr.meta["framework"] == "torch" and tr.meta["tags"] == {"run": "a"} and tr.meta["format_version"] == 1
        assert tr.complete
        assert tr.counts()["kind"] == {"grad_output": 1, "module_input": 1, "probe": 1}
        assert tr.steps() == [0, 3]
        assert [x.seq for x in tr.select(kind="probe")] == [2]
        assert [x.seq for x in tr.select(module="enc.*")] == [0]
        assert [x.seq for x in tr.select(phase="forward", step=0)] == [1, 2]


def test_many_shards_keep_sequence_order(tmp_path: Path) -> None:
    opts = WriterOptions(flush_records=7)
    arrays = [np.full(i % 5 + 1, i, dtype=np.int32) for i in range(100)]
    with TraceWriter(tmp_path / "t", options=opts) as w:
        for i, a in enumerate(arrays):
            w.append(header(i, step=i // 10), a)
    with open_trace(tmp_path / "t") as tr:
        assert len(list((tmp_path / "t").glob("shard-*.h5"))) == 15
        assert list(tr) == list(range(100)) and len(tr) == 100
        assert tr.complete and tr.summary["records"] == 100
        for i, a in enumerate(arrays):
            assert tr[i].module == f"m{i}"
            np.testing.assert_array_equal(tr.read(i), a)
        assert tr.steps() == list(range(10))
        assert 5 in tr and 100 not in tr and "5" not in tr
        with pytest.raises(KeyError, match="no record with sequence number 100"):
            tr[100]


def test_existing_trace_needs_overwrite(tmp_path: Path) -> None:
    from padiff_trace import TraceExistsError

    with TraceWriter(tmp_path / "t") as w:
        w.append(header(), np.zeros(1))
    (tmp_path / "t" / "notes.txt").write_text("mine")
    with pytest.raises(TraceExistsError, match="already exists"):
        TraceWriter(tmp_path / "t")
    with TraceWriter(tmp_path / "t", overwrite=True) as w:
        w.append(header(), np.ones(2))
        w.append(header(), np.ones(3))
    with open_trace(tmp_path / "t") as tr:
        assert len(tr) == 2
    assert (tmp_path / "t" / "notes.txt").read_text() == "mine"  # never deletes what it did not write


def test_copied_trace_reads_identically_and_holds_no_absolute_path(tmp_path: Path) -> None:
    import shutil

    src = tmp_path / "deep" / "original-location" / "run.trace"
    stack = (Frame("pkg/model.py", 3, "forward", "return x"),)
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in (5, 300_000, 40)]
    with TraceWriter(src, meta={"tags": {"k": "v"}}, options=WriterOptions(flush_records=2)) as w:
        for i, a in enumerate(arrays):
            w.append(header(i, stack=stack), a)
    dst = tmp_path / "elsewhere" / "copy.trace"
    shutil.copytree(src, dst)
    with open_trace(src) as a, open_trace(dst) as b:
        assert a.meta == b.meta
        assert a.table.tobytes() == b.table.tobytes()
        assert a.strings == b.strings
        for seq in a:
            np.testing.assert_array_equal(a.read(seq), b.read(seq))
            assert a[seq].stack == b[seq].stack == stack
    needles = [str(src).encode(), str(src.parent).encode(), str(tmp_path).encode(), b"original-location"]
    for f in dst.iterdir():
        data = f.read_bytes()
        for needle in needles:
            assert needle not in data, f"{f.name} contains {needle!r}"
