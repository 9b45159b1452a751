"""Op-level recording (issue 8): ops inside forward become records, frameworks restored."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from padiff_trace import open_trace, recorder

paddle = pytest.importorskip("paddle")
torch = pytest.importorskip("torch")


class TorchAttn(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = torch.nn.Linear(8, 8)

    def forward(self, x):
        q = self.q(x)
        dots = q @ x.transpose(-1, -2) / 2.0  # LINE-DOTS
        w = torch.softmax(dots, dim=-1)  # LINE-SOFTMAX
        return torch.matmul(w, x)  # LINE-OUT


class PaddleAttn(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.q = paddle.nn.Linear(8, 8)

    def forward(self, x):
        q = self.q(x)
        dots = q @ x.transpose([0, 2, 1]) / 2.0  # LINE-DOTS
        w = paddle.nn.functional.softmax(dots, axis=-1)  # LINE-SOFTMAX
        return paddle.matmul(w, x)  # LINE-OUT


def _line(cls: type, marker: str) -> int:
    src, start = inspect.getsourcelines(cls.forward)
    return start + next(i for i, text in enumerate(src) if marker in text)


def _make(fw: str, seed: int = 0):
    x = np.random.default_rng(seed).standard_normal((2, 3, 8)).astype(np.float32)
    if fw == "torch":
        torch.manual_seed(seed)
        m = TorchAttn()
        xt = torch.from_numpy(x).requires_grad_(True)
        return m, xt
    paddle.seed(seed)
    m = PaddleAttn()
    xt = paddle.to_tensor(x)
    xt.stop_gradient = False
    return m, xt


def _run(m, x):
    y = m(x)
    y.sum().backward()
    return np.array(y.detach().numpy()), np.array(x.grad.detach().numpy())


FWS = ["torch", "paddle"]


@pytest.mark.parametrize("fw", FWS)
def test_ops_recorded_with_lines_and_grads(fw, tmp_path):
    m, x = _make(fw)
    cls = type(m)
    with recorder.record(m, tmp_path / "t", ops=True) as rec:
        y = m(x)
        y.sum().backward()
        rec.step()
    with open_trace(tmp_path / "t") as tr:
        outs = tr.select(kind="op_output")
        names = [r.module_type for r in outs]
        assert names[:2] == ["transpose", "matmul"]
        assert names[3] == "softmax" and names[4] == "matmul"
        assert all(r.module == "" for r in outs)  # inside the root module's forward
        assert [r.call_index for r in outs if r.module_type == "matmul"] == [0, 1]
        lines = {r.module_type: r.stack[-1].line for r in outs}
        assert lines["softmax"] == _line(cls, "LINE-SOFTMAX")
        assert lines["transpose"] == _line(cls, "LINE-DOTS")
        assert outs[-1].stack[-1].line == _line(cls, "LINE-OUT")
        # the Linear's own internal op is hidden by default; the sum outside forward is not an op record
        assert "linear" not in names and "sum" not in names
        # values: the last op output is the model output
        np.testing.assert_array_equal(outs[-1].read(), y.detach().numpy() if fw == "torch" else y.numpy())
        grads = tr.select(kind="op_grad_output")
        assert {r.module_type for r in grads} >= {"softmax", "matmul"}
        ins = tr.select(kind="op_input")
        assert any(r.module_type == "softmax" and r.position == "args[0]" for r in ins)


@pytest.mark.parametrize("fw", FWS)
def test_internal_ops_can_be_shown(fw, tmp_path):
    m, x = _make(fw)
    with recorder.record(m, tmp_path / "t", ops=True, ops_internal=True):
        m(x)
    with open_trace(tmp_path / "t") as tr:
        names = [r.module_type for r in tr.select(kind="op_output")]
    assert "linear" in names  # nn.Linear's functional call, made inside the framework


@pytest.mark.parametrize("fw", FWS)
def test_ops_include_limits_modules(fw, tmp_path):
    m, x = _make(fw)
    with recorder.record(m, tmp_path / "t", ops=True, ops_include=["q"], ops_internal=True):
        m(x)
    with open_trace(tmp_path / "t") as tr:
        outs = tr.select(kind="op_output")
    assert outs and {r.module for r in outs} == {"q"}


@pytest.mark.parametrize("fw", FWS)
def test_op_mode_is_bit_identical(fw, tmp_path):
    m, x = _make(fw, seed=3)
    bare_y, bare_g = _run(m, x)
    m2, x2 = _make(fw, seed=3)
    with recorder.record(m2, tmp_path / "t", ops=True):
        rec_y, rec_g = _run(m2, x2)
    assert np.array_equal(bare_y, rec_y)
    assert np.array_equal(bare_g, rec_g)


def _paddle_targets():
    from padiff_trace.recorder.paddle_ops import PADDLE_OPS, _resolve

    out = {}
    for path, names in PADDLE_OPS:
        owner = _resolve(path)
        for name in names:
            if name in vars(owner):
                out[(path, name)] = vars(owner)[name]
    return out


def test_paddle_functions_restored_exactly_also_on_error(tmp_path):
    before = _paddle_targets()
    assert len(before) > 60
    m, x = _make("paddle")
    with recorder.record(m, tmp_path / "ok", ops=True):
        assert paddle.matmul is not before[("paddle", "matmul")]  # wrapped while recording
        m(x)
    assert _paddle_targets() == before
    assert all(_paddle_targets()[k] is v for k, v in before.items())

    class Boom(paddle.nn.Layer):
        def forward(self, x):
            paddle.matmul(x, x.transpose([0, 2, 1]))
            raise RuntimeError("planted")

    with pytest.raises(RuntimeError, match="planted"), recorder.record(Boom(), tmp_path / "boom", ops=True):
        Boom()(x)
    assert all(_paddle_targets()[k] is v for k, v in before.items())


def test_torch_mode_removed_after_recording(tmp_path):
    m, x = _make("torch")
    with recorder.record(m, tmp_path / "t", ops=True):
        assert torch._C._len_torch_function_stack() == 1
        m(x)
    assert torch._C._len_torch_function_stack() == 0
    with pytest.raises(ValueError), recorder.record(m, tmp_path / "t2", ops=True):
        raise ValueError("x")
    assert torch._C._len_torch_function_stack() == 0


@pytest.mark.parametrize("fw", FWS)
def test_ops_on_a_model_of_framework_layers_only_says_how_to_see_their_ops(fw, tmp_path, caplog):
    """A forward that is all framework layers calls no op from the user's code: ``ops=True``
    alone records nothing new, and says so, naming ``ops_internal`` (``--ops-internal``)."""
    if fw == "torch":
        torch.manual_seed(0)
        plain, x = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()), torch.ones(2, 8)
    else:
        plain, x = paddle.nn.Sequential(paddle.nn.Linear(8, 8), paddle.nn.ReLU()), paddle.ones([2, 8])
    with caplog.at_level("WARNING", logger="padiff_trace"), recorder.record(plain, tmp_path / "plain", ops=True):
        plain(x)
    assert any("ops_internal (--ops-internal)" in r.getMessage() for r in caplog.records)
    caplog.clear()
    m, x = _make(fw)
    with caplog.at_level("WARNING", logger="padiff_trace"), recorder.record(m, tmp_path / "own", ops=True):
        m(x)
    assert not any("ops_internal" in r.getMessage() for r in caplog.records)
