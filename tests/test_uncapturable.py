"""A tensor the recorder cannot copy (a sparse layout) or the analyzer cannot decode
(float8) is recorded and reported as such: never an exception in the user's model, never
an aborted comparison (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest

from padiff_trace import analyzer, open_trace, recorder

torch = pytest.importorskip("torch")


class _Odd(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        y = self.lin(x)
        return y.to_sparse(), y.to(torch.float8_e4m3fn), y * 2


def test_sparse_and_float8_outputs_record_and_compare(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model, x = _Odd(), torch.randn(2, 4)
    bare = model(x)
    with recorder.record(model, tmp_path / "t") as rec:
        out = model(x)  # the recorder's hook must not raise into the model
        rec.step()
    assert torch.equal(out[0].to_dense(), bare[0].to_dense()) and torch.equal(out[2], bare[2])
    with open_trace(tmp_path / "t") as tr:
        assert tr.complete and tr.health.ok
        (sparse,) = [r for r in tr.records() if r.position == "out[0]" and r.module == ""]
        assert sparse.dtype.startswith("uncaptured:torch.sparse_coo") and not sparse.has_data
        assert sparse.shape == (2, 4)
    report = analyzer.compare(tmp_path / "t", tmp_path / "t", quiet=True)
    assert report.exit_code == 0
    skipped = [p for p in report.pairs if p.reason.startswith("not compared")]
    assert {p.a.position for p in skipped} == {"out[0]", "out[1]"}
    assert any(f.code == "uncomparable" for f in report.diagnosis)
    doubled = [p for p in report.pairs if p.a.position == "out[2]" and p.a.module == ""]
    assert doubled and doubled[0].metrics is not None and doubled[0].metrics.max_abs == 0
