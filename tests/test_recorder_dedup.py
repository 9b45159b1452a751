"""A tensor recorded twice unchanged (module output = next module input) is copied and
summarised once; an in-place change in between makes it a new record."""

from __future__ import annotations

import numpy as np
import pytest

from padiff_trace import open_trace, recorder

torch = pytest.importorskip("torch")


class InPlace(torch.nn.Module):
    def forward(self, x):
        return x.mul_(2.0)


def test_same_tensor_shares_data_and_stats(tmp_path):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Identity(), torch.nn.Linear(64, 8))
    x = torch.randn(32, 64)
    with recorder.record(m, tmp_path / "t", weights="none"):
        y = m(x)
    with open_trace(tmp_path / "t") as tr:
        out0 = tr.select(module="0", kind="module_output")[0]
        in1 = tr.select(module="1", kind="module_input")[0]
        row = {int(s): i for i, s in enumerate(tr.table["seq"])}
        r0, r1 = tr.table[row[out0.seq]], tr.table[row[in1.seq]]
        assert (r0["offset"], r0["nbytes"]) == (r1["offset"], r1["nbytes"]) and r0["nbytes"] > 0
        np.testing.assert_array_equal(in1.read(), out0.read())
        assert in1.stats == out0.stats
        np.testing.assert_array_equal(tr.select(module="", kind="module_output")[0].read(), y.detach().numpy())


def test_in_place_change_is_not_deduplicated(tmp_path):
    m = torch.nn.Sequential(torch.nn.Identity(), InPlace())
    x = torch.ones(4, 4)
    with recorder.record(m, tmp_path / "t", weights="none"):
        m(x)
    with open_trace(tmp_path / "t") as tr:
        before = tr.select(module="1", kind="module_input")[0].read()
        after = tr.select(module="1", kind="module_output")[0].read()
    assert before.max() == 1.0 and after.max() == 2.0


def test_large_tensor_shared_dataset_reads_back(tmp_path):
    """Tensors of 1 MiB and more live in their own dataset; a repeated one points at it."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.Identity())
    x = torch.randn(512, 1024)
    with recorder.record(m, tmp_path / "t", weights="none"):
        y = m(x)
    with open_trace(tmp_path / "t") as tr:
        out0 = tr.select(module="0", kind="module_output")[0]
        in1 = tr.select(module="1", kind="module_input")[0]
        out1 = tr.select(module="1", kind="module_output")[0]
        for r in (out0, in1, out1):
            np.testing.assert_array_equal(r.read(), y.detach().numpy())
        chunks = np.concatenate(list(in1.iter_chunks(100_000)))
        np.testing.assert_array_equal(chunks, y.detach().numpy().reshape(-1).astype(np.float64))


def test_analyzer_measures_shared_bytes_once(tmp_path):
    """The output of module k and the input of module k+1 share bytes on both sides: the
    analyzer measures that pair once and reports the same metrics for both."""
    from padiff_trace.analyzer.judging._judge import data_key as _data_key

    from padiff_trace import analyzer

    for name, seed in (("a", 0), ("b", 0)):
        torch.manual_seed(seed)
        m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Tanh(), torch.nn.Linear(64, 8))
        x = torch.randn(16, 64)
        with recorder.record(m, tmp_path / name, weights="none"):
            m(x * (1.0 if name == "a" else 1.001))
    report = analyzer.compare(tmp_path / "a", tmp_path / "b", quiet=True)
    out0 = next(p for p in report.pairs if p.role == "output" and p.a.module == "0")
    in1 = next(p for p in report.pairs if p.role == "input" and p.a.module == "1")
    assert _data_key(out0.a, out0.b, out0.perm, out0.tol) == _data_key(in1.a, in1.b, in1.perm, in1.tol)
    assert out0.metrics is not in1.metrics and out0.metrics.as_dict() == in1.metrics.as_dict()
    assert out0.metrics.max_abs > 0


def test_paddle_grad_wrappers_of_one_tensor_share_data(tmp_path):
    """paddle hands every grad hook its own wrapper of one gradient: the gradient of a block's
    output, recorded for the block, its last sublayer and the root, is stored once and equals
    the real gradient."""
    paddle = pytest.importorskip("paddle")

    class Block(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.lin = paddle.nn.Linear(16, 16)
            self.act = paddle.nn.GELU()

        def forward(self, x):
            return self.act(self.lin(x))

    paddle.seed(0)
    m = paddle.nn.Sequential(Block(), Block())
    x = paddle.randn([8, 16])
    x.stop_gradient = False
    with recorder.record(m, tmp_path / "t", weights="none") as rec:
        out = m(x)
        out.retain_grads()
        rec.loss((out**2).mean()).backward()
    with open_trace(tmp_path / "t") as tr:
        grads = {r.module: r for r in tr.select(kind="grad_output") if r.module in ("", "1", "1.act")}
        assert set(grads) == {"", "1", "1.act"}
        row = {int(s): i for i, s in enumerate(tr.table["seq"])}
        places = {(int(tr.table[row[r.seq]]["offset"]), int(tr.table[row[r.seq]]["nbytes"])) for r in grads.values()}
        assert len(places) == 1  # one stored copy for the three records
        for r in grads.values():
            np.testing.assert_array_equal(r.read(), out.grad.numpy())


def test_paddle_in_place_change_is_not_deduplicated(tmp_path):
    paddle = pytest.importorskip("paddle")

    class InPlaceP(paddle.nn.Layer):
        def forward(self, x):
            return x.scale_(2.0)

    m = paddle.nn.Sequential(paddle.nn.Identity(), InPlaceP())
    with recorder.record(m, tmp_path / "t", weights="none"):
        m(paddle.ones([4, 4]))
    with open_trace(tmp_path / "t") as tr:
        before = tr.select(module="1", kind="module_input")[0].read()
        after = tr.select(module="1", kind="module_output")[0].read()
    assert before.max() == 1.0 and after.max() == 2.0
