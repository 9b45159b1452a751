"""The join rules on small synthetic multi-rank traces written with ``TraceWriter`` (no framework,
no launcher): replicated, concatenated (equal and uneven slices, split information), summed
(partial sums), differing replicas, and records left out with the reason; the joined trace's meta
and ``join.json``; the first NaN/Inf across ranks. Real tensor-parallel runs:
tests/test_distributed_tp.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from padiff_trace import Kind, Phase, RecordHeader, TraceWriter, UserError, open_trace, pipeline, recorder
from padiff_trace.cli import main

pytestmark = pytest.mark.xdist_group("launchers")  # real launchers and gloo: one at a time under pytest -n

F32 = np.float32
Entry = tuple[RecordHeader, Any, dict[str, Any]]


def out(module: str, *, kind: Kind = Kind.MODULE_OUTPUT, position: str = "out", step: int = 0) -> RecordHeader:
    phase = Phase.OTHER if kind == Kind.PARAM else Phase.FORWARD
    return RecordHeader(step, phase, kind, module, "Layer", call=-1, parent=-1, position=position)


def bf16(values: np.ndarray) -> np.ndarray:
    """float32 values exactly representable in bfloat16, as the raw bits the writer stores."""
    return (values.astype(F32).view(np.uint32) >> 16).astype(np.uint16)


def write_multi(root: Path, ranks: list[list[Entry]], splits: dict[str, Any] | None = None, abort: int | None = None) -> Path:
    """A multi-rank trace as a launcher's recorders leave it: ranks.json, rank-NNNNN/ with meta ``distributed``."""
    n = len(ranks)
    root.mkdir(parents=True)
    (root / "ranks.json").write_text(json.dumps({"format": recorder.RANKS_FORMAT, "version": 1, "world_size": n, "launcher": "torchrun",
                                                 "launch_id": "L", "framework": "none"}))
    for k, entries in enumerate(ranks):
        dist = {"rank": k, "world_size": n, "local_rank": k, "backend": "gloo", "launcher": "torchrun", "launch_id": "L",
                "detected_from": "environment"} | ({"splits": splits} if splits else {})
        w = TraceWriter(root / f"rank-{k:05d}", {"distributed": dist})
        for h, data, kw in entries:
            w.append(h, data, **kw)
        if k == abort:
            w.abort("killed")
        else:
            w.close()
    return root


def write_single(path: Path, entries: list[Entry]) -> Path:
    with TraceWriter(path) as w:
        for h, data, kw in entries:
            w.append(h, data, **kw)
    return path


@pytest.fixture
def traces(tmp_path: Path) -> tuple[Path, Path, dict[str, Any]]:
    rng = np.random.default_rng(0)
    v: dict[str, Any] = {
        "rep": rng.standard_normal((2, 3)).astype(F32),
        "col": [rng.standard_normal((2, 2)).astype(F32) for _ in range(2)],
        "uneven": [rng.standard_normal(3).astype(F32), rng.standard_normal(2).astype(F32)],
        "part": [rng.standard_normal(4).astype(F32) for _ in range(2)],
        "diff": [rng.standard_normal(4).astype(F32) for _ in range(2)],
        "w": [rng.standard_normal((2, 3)).astype(F32) for _ in range(2)],
        "bf": [np.array([1.5, -2.0], F32), np.array([0.25, 8.0], F32)],
    }
    ranks: list[list[Entry]] = []
    for k in range(2):
        ranks.append([
            (out("lin", kind=Kind.PARAM, position="weight"), v["w"][k], {}),
            (out("rep"), v["rep"], {}),
            (out("col"), v["col"][k], {}),
            (out("uneven"), v["uneven"][k], {}),
            (out("part"), v["part"][k], {}),
            (out("diff"), v["diff"][k], {}),
            (out("odd"), np.full((2, 2), k, F32), {}),
            (out("bf"), bf16(v["bf"][k]), {"dtype": "bfloat16"}),
            (out("none"), None, {"dtype": "py:NoneType"}),
            (out("stats"), np.ones(2, F32), {"keep_data": False}),
            *([(out("only0"), np.ones(3, F32), {})] if k == 0 else []),
        ])
    multi = write_multi(tmp_path / "multi", ranks, splits={"lin.weight": {"axis": 0, "from": "is_distributed, split_axis"}})
    exact = (v["part"][0].astype(np.float64) + v["part"][1]).astype(F32)
    single = write_single(tmp_path / "single", [
        (out("rep"), v["rep"], {}),
        (out("col"), np.zeros((2, 4), F32), {}),
        (out("uneven"), np.zeros(5, F32), {}),
        (out("part"), exact, {}),
        (out("diff"), 10 * v["diff"][0], {}),
        (out("odd"), np.zeros((4, 4), F32), {}),
        (out("bf"), bf16(np.zeros(4, F32)), {"dtype": "bfloat16"}),
        (out("none"), None, {"dtype": "py:NoneType"}),
        (out("stats"), np.ones(4, F32), {}),
    ])
    return multi, single, v


def test_each_rule_on_synthetic_ranks(traces: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    multi, single, v = traces
    res = pipeline.join_ranks(multi, tmp_path / "joined", like=single)
    by = {r.name.split("#")[0]: r for r in res.records}
    assert {k: (r.rule, r.axis) for k, r in by.items()} == {
        "lin": ("concat", 0), "rep": ("replicated", None), "col": ("concat", 1), "uneven": ("concat", 0), "part": ("sum", None),
        "diff": ("differing", None), "odd": ("left out", None), "bf": ("concat", 0), "none": ("replicated", None),
        "stats": ("left out", None), "only0": ("left out", None),
    }
    assert by["lin"].source == "split info: is_distributed, split_axis" and by["col"].source == "shapes"
    assert "within rounding" in by["part"].why and "not replicas" in by["diff"].why
    assert "(2, 2), (2, 2), single process (4, 4)" in by["odd"].why
    assert "statistics only" in by["stats"].why and "recorded on rank 0 only" in by["only0"].why
    assert res.counts == {"replicated": 2, "concat": 4, "sum": 1, "differing": 1, "left out": 3} and res.complete

    with open_trace(res.path) as tr:
        assert tr.complete and len(tr) == 8
        joined = tr.meta["joined"]
        assert joined["rules"] == res.counts and joined["from"] == str(multi) and joined["like"] == str(single)
        assert joined["ranks"] == ["rank-00000", "rank-00001"] and joined["world_size"] == 2
        assert {d["record"] for d in joined["left_out"]} == {"odd#0:out", "stats#0:out", "only0#0:out"}
        assert "distributed" not in tr.meta
        got = {r.module: r for r in tr.records()}
        np.testing.assert_array_equal(got["lin"].read(), np.concatenate(v["w"], axis=0))
        np.testing.assert_array_equal(got["col"].read(), np.concatenate(v["col"], axis=1))
        np.testing.assert_array_equal(got["uneven"].read(), np.concatenate(v["uneven"]))
        np.testing.assert_array_equal(got["rep"].read(), v["rep"])
        np.testing.assert_allclose(got["part"].read(), v["part"][0] + v["part"][1], rtol=1e-6)
        np.testing.assert_array_equal(got["diff"].read(), v["diff"][0])  # rank 0's, listed as differing
        assert got["bf"].dtype == "bfloat16"
        np.testing.assert_array_equal(got["bf"].read(), np.concatenate(v["bf"]))
        assert got["none"].dtype == "py:NoneType" and not got["none"].has_data
        seq = by["col"].seq
        assert seq is not None and tr[seq].module == "col"
    doc = json.loads((res.path / pipeline.JOIN_FILE).read_text())
    assert doc["format"] == "padiff-trace-join" and len(doc["records"]) == 11
    assert {r["name"]: r["rule"] for r in doc["records"]}["part#0:out"] == "sum"


def test_join_command_lists_records_by_rule(traces: tuple[Path, Path, dict[str, Any]], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    multi, single, _ = traces
    assert main(["join", str(multi), "--like", str(single), "--out", str(tmp_path / "j")]) == 0
    text = capsys.readouterr().out
    assert "8 records (2 replicated, 4 concat, 1 sum, 1 differing), 3 left out" in text
    assert "concat axis 1 (shapes): col#0:out module_output (step 0)" in text
    assert "concat axis 0 (split info: is_distributed, split_axis): lin#0:weight param" in text
    assert "left out: odd#0:out step 0 module_output: rank shapes (2, 2), (2, 2), single process (4, 4)" in text
    assert main(["join", str(multi), "--like", str(single), "--out", str(tmp_path / "j")]) == 2  # exists: --force
    assert "a trace already exists here (pass --force to replace it)" in capsys.readouterr().err
    assert main(["join", str(multi), "--like", str(single), "--out", str(tmp_path / "j"), "--force", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rules"]["left out"] == 3


def test_without_a_reference_only_split_info_and_replicas_join(traces: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    multi, _, _ = traces
    res = pipeline.join_ranks(multi, tmp_path / "j")
    rules = {r.name.split("#")[0]: r.rule for r in res.records}
    assert rules["lin"] == "concat" and rules["rep"] == "replicated" and rules["col"] == "left out"
    assert rules["part"] == "left out"  # no single process to tell a slice, a partial sum or a differing replica


def test_a_missing_rank_is_refused_an_incomplete_one_makes_an_incomplete_trace(tmp_path: Path) -> None:
    x = np.ones(2, F32)
    multi = write_multi(tmp_path / "m", [[(out("a"), x, {})], [(out("a"), x, {})]], abort=1)
    res = pipeline.join_ranks(multi, tmp_path / "j")
    assert not res.complete and res.counts["replicated"] == 1
    with open_trace(res.path) as tr:
        assert not tr.complete and len(tr) == 1
    shutil.rmtree(multi / "rank-00001")
    with pytest.raises(UserError, match=r"rank 1 of 2: missing .*every rank's slice is needed"):
        pipeline.join_ranks(multi, tmp_path / "j2")


def test_split_info_reads_paddle_attributes_and_dtensor_placements() -> None:
    class Place:
        def __init__(self, kind: str, dim: int = 0) -> None:
            self.kind, self.dim = kind, dim

        def is_shard(self) -> bool:
            return self.kind == "shard"

        def is_partial(self) -> bool:
            return self.kind == "partial"

        def is_replicate(self) -> bool:
            return self.kind == "replicate"

        def __repr__(self) -> str:
            return f"{self.kind}({self.dim})"

    class DTensorLike:
        def __init__(self, place: Place, mesh_size: int = 2) -> None:
            self.placements = (place,)
            self.device_mesh = SimpleNamespace(size=lambda: mesh_size, shape=(mesh_size,))

        def to_local(self) -> None:
            return None

    state = {"col.weight": SimpleNamespace(is_distributed=True, split_axis=1), "col.bias": SimpleNamespace(is_distributed=False),
             "d.weight": DTensorLike(Place("shard", 1)), "d.bias": DTensorLike(Place("replicate")),
             "p.x": DTensorLike(Place("partial")), "tp_dp.w": DTensorLike(Place("shard"), mesh_size=4), "plain": object()}
    adapter = SimpleNamespace(named_state=lambda model: ((n, t, True) for n, t in state.items()))
    got = recorder.split_info(adapter, None, 2)  # type: ignore[arg-type]
    assert got["col.weight"] == {"axis": 1, "from": "is_distributed, split_axis"}
    assert got["d.weight"] == {"axis": 1, "from": "DTensor shard(1)"} and got["d.bias"]["replicated"] is True
    assert got["p.x"]["partial"] is True and "not read" in got["tp_dp.w"]["from"] and "axis" not in got["tp_dp.w"]
    assert "col.bias" not in got and "plain" not in got


def test_first_nonfinite_names_the_rank_that_produced_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = np.ones(3, F32), np.array([1.0, np.nan, np.inf], F32)
    ranks = [[(out("a"), good, {}), (out("b"), good, {}), (out("c"), bad, {})],
             [(out("a"), good, {}), (out("b"), bad, {}), (out("c"), bad, {})]]
    multi = write_multi(tmp_path / "m", ranks)
    found = pipeline.first_nonfinite(pipeline.open_ranks(multi))
    assert [(n.rank, n.name, n.count) for n in found] == [(1, "b#0:out", 2), (0, "c#0:out", 2)]
    cmp = pipeline.compare_ranks(multi, multi, report_dir=tmp_path / "r")
    text = cmp.summary_text()
    assert "first NaN/Inf in A: rank 1, step 0, b#0:out (module_output, Layer; 2 values, record 1); later: rank 0 (step 0, c#0:out)" in text
    doc = json.loads((tmp_path / "r" / "ranks.json").read_text())
    assert doc["first_nonfinite"]["a"][0]["rank"] == 1 and doc["first_nonfinite"]["b"][0]["name"] == "b#0:out"
