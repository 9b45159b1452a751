"""Gradient accumulation (issue 25): a step whose model ran more than once before the optimizer
step records how many times (``passes/forward``, an optimizer record); compare names a
different number of micro-batches as an optimizer difference, and says nothing when they agree.
Real torch models trained through ``recorder.record`` as users write their loops."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from padiff_trace import Kind, analyzer, open_trace, recorder

torch = pytest.importorskip("torch")


def train(path: Path, micro: int, steps: int = 2) -> None:
    """``steps`` optimizer steps, each over ``micro`` micro-batches whose gradients are summed."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.randn(4, 2, 4, generator=torch.Generator().manual_seed(1))  # 4 micro-batches of 2
    with recorder.record(model, path, overwrite=True) as rec:
        for _ in range(steps):
            for k in range(micro):
                loss = model(data[k * (4 // micro):(k + 1) * (4 // micro)].reshape(-1, 4)).pow(2).mean() / micro
                loss.backward()
            opt.step()
            rec.step()
            opt.zero_grad()


def passes(path: Path) -> dict[int, float]:
    with open_trace(path) as t:
        return {r.step: float(np.asarray(r.read()).reshape(-1)[0]) for r in t.select(kind=Kind.OPTIMIZER)
                if r.position == "passes/forward"}


def test_accumulation_is_recorded_and_named(tmp_path: Path) -> None:
    train(tmp_path / "one", micro=1)
    train(tmp_path / "two", micro=2)
    train(tmp_path / "two_again", micro=2)
    assert passes(tmp_path / "one") == {}  # one pass per step: nothing added to the trace
    assert passes(tmp_path / "two") == {0: 2.0, 1: 2.0}

    with analyzer.compare(tmp_path / "two", tmp_path / "one") as report:
        per_step = report.optimizer.per_step if report.optimizer is not None else []
        texts = [f.text for f in report.diagnosis]
    assert [(d["step"], d["what"], d["a"], d["b"]) for d in per_step] == [(0, "passes", 2.0, 1.0), (1, "passes", 2.0, 1.0)]
    assert any("forward passes before the optimizer step 0: A 2 vs B 1" in t for t in texts), texts

    with analyzer.compare(tmp_path / "two", tmp_path / "two_again") as same:
        assert same.verdict == "ALIGNED"
        assert same.optimizer is None or not [d for d in same.optimizer.per_step if d["what"] == "passes"]
