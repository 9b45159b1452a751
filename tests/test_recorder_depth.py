"""The recorder never raises into a model: a deep recursive model recurses exactly as deep
under ``record`` as bare (the frames the frameworks add per hooked call are compensated, and
hooks get their own headroom), and an output the recorder cannot copy (a nested tensor) is
recorded without values instead of breaking the forward pass."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from padiff_trace import Kind, open_trace, recorder


def _max_depth(run: Callable[[int], Any]) -> int:
    lo, hi = 1, 3000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            run(mid)
            lo = mid
        except RecursionError:
            hi = mid - 1
    return lo


def _torch_model() -> tuple[Any, Callable[[int], Any]]:
    torch = pytest.importorskip("torch")

    class Deep(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x: Any, depth: int) -> Any:
            return self.fc(x) if depth == 0 else self(x, depth - 1)

    m = Deep()
    return m, lambda d: m(torch.ones(2, 4), d)


def _paddle_model() -> tuple[Any, Callable[[int], Any]]:
    paddle = pytest.importorskip("paddle")

    class Deep(paddle.nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.fc = paddle.nn.Linear(4, 4)

        def forward(self, x: Any, depth: int) -> Any:
            return self.fc(x) if depth == 0 else self(x, depth - 1)

    m = Deep()
    return m, lambda d: m(paddle.ones([2, 4]), d)


@pytest.mark.parametrize("build", [_torch_model, _paddle_model], ids=["torch", "paddle"])
def test_recursion_depth_is_the_bare_models(tmp_path: Path, build: Callable[[], Any]) -> None:
    model, call = build()
    limit = sys.getrecursionlimit()
    bare = _max_depth(call)

    def recorded(depth: int) -> None:
        with recorder.record(model, tmp_path / "t", overwrite=True, stats_only=True) as rec:
            call(depth)
            rec.step()

    under = _max_depth(recorded)
    assert abs(under - bare) <= 2, (bare, under)
    assert sys.getrecursionlimit() == limit  # restored, also after a RecursionError
    with open_trace(tmp_path / "t") as tr:  # the deepest successful run was recorded whole
        assert len(tr.select(kind=Kind.MODULE_OUTPUT)) == under + 2  # every level, the Linear, the root


def test_nested_tensor_output_is_recorded_without_values(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")

    class Ragged(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x: Any) -> Any:
            y = self.fc(x)
            return torch.nested.nested_tensor([y[0], y[1, :2]])

    m = Ragged()
    x = torch.ones(2, 4)
    bare = m(x).to_padded_tensor(0.0)
    with recorder.record(m, tmp_path / "t") as rec:
        out = m(x).to_padded_tensor(0.0)
        rec.step()
    assert torch.equal(out, bare)
    with open_trace(tmp_path / "t") as tr:
        (root,) = tr.select(kind=Kind.MODULE_OUTPUT, module="")
        assert not root.has_data and "nested" in root.dtype
