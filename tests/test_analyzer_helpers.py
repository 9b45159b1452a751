"""Synthetic traces for the analyzer tests, written with TraceWriter following the
recorder's conventions (call ids in entry order, parent ids, call_index, positions,
GRAD_OUTPUT sharing the forward call's id, PARAM with call -1...).

``toy_model`` plays a small network in numpy the way a recorder would see it.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from padiff_trace import Frame, Kind, Phase, RecordHeader, TraceWriter, open_trace

__all__ = ["Synth", "toy_model"]


class _CallHandle:
    def __init__(self, synth: Synth, cid: int, module: str, mtype: str, parent: int, idx: int, stack: tuple[Frame, ...]):
        self.s, self.id, self.module, self.type, self.parent, self.idx, self.stack = synth, cid, module, mtype, parent, idx, stack
        self.outs: dict[str, Any] = {}

    def out(self, outputs: dict[str, Any]) -> None:
        self.outs = outputs


class Synth:
    """A fake recorder: ``with s.call(...) as c: ...; c.out({...})``."""

    def __init__(self, path: Path, framework: str, *, stats_only: bool = False, model_type: str = "Net") -> None:
        from padiff_trace import WriterOptions

        meta = {"framework": framework, "framework_version": "9.9", "model_type": model_type, "seed": 0, "tags": {}}
        self.w = TraceWriter(path, meta=meta, options=WriterOptions(stats_only=stats_only))
        self.framework = framework
        self.step = 0
        self.next_id = 0
        self.active: list[_CallHandle] = []
        self.counts: Counter[str] = Counter()
        self.done: list[_CallHandle] = []

    def _hdr(self, kind: Kind, h: _CallHandle | None, position: str, phase: Phase | None = None, **kw: Any) -> RecordHeader:
        ph = phase if phase is not None else Phase.FORWARD
        if h is None:
            return RecordHeader(self.step, ph, kind, position=position, **kw)
        return RecordHeader(self.step, ph, kind, h.module, h.type, h.id, h.parent, h.idx, position, stack=h.stack)

    def _put(self, hdr: RecordHeader, value: Any) -> None:
        if isinstance(value, np.ndarray):
            self.w.append(hdr, value)
        else:
            self.w.append(hdr, None, dtype=f"py:{type(value).__name__}")

    @contextlib.contextmanager
    def call(self, module: str, mtype: str, inputs: dict[str, Any], where: tuple[str, int, str]) -> Iterator[_CallHandle]:
        parent = self.active[-1].id if self.active else -1
        idx = self.counts[module]
        self.counts[module] += 1
        stack = (Frame("train.py", 5, "main", "loss = model(x)"), Frame(where[0], where[1], "forward", where[2]))
        h = _CallHandle(self, self.next_id, module, mtype, parent, idx, stack)
        self.next_id += 1
        kind = Kind.MODEL_INPUT if parent == -1 else Kind.MODULE_INPUT
        for pos, v in inputs.items():
            self._put(self._hdr(kind, h, pos), v)
        self.active.append(h)
        yield h
        self.active.pop()
        for pos, v in h.outs.items():
            self._put(self._hdr(Kind.MODULE_OUTPUT, h, pos), v)
        self.done.append(h)

    def grad(self, h: _CallHandle, position: str, g: np.ndarray) -> None:
        self.w.append(self._hdr(Kind.GRAD_OUTPUT, h, position, Phase.BACKWARD), g)

    def param(self, module: str, mtype: str, name: str, value: np.ndarray, kind: Kind = Kind.PARAM) -> None:
        self.w.append(RecordHeader(self.step, Phase.OTHER, kind, module, mtype, -1, -1, 0, name), value)

    def param_grad(self, module: str, mtype: str, name: str, value: np.ndarray) -> None:
        self.w.append(RecordHeader(self.step, Phase.BACKWARD, Kind.PARAM_GRAD, module, mtype, -1, -1, 0, name), value)

    def loss(self, value: np.ndarray) -> None:
        self.w.append(RecordHeader(self.step, Phase.FORWARD, Kind.LOSS, "", "Net", -1, -1, 0, "loss"), value)

    def close(self) -> None:
        self.w.close()


def _ln(x: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return ((x - mu) / np.sqrt(var + eps)).astype(np.float32)


def toy_model(
    path: Path,
    framework: str,
    *,
    noise: float = 0.0,
    ln_eps: float = 1e-5,
    extra_dropout: bool = False,
    functional_relu: bool = False,
    names: dict[str, str] | None = None,
    nan_in_fc2: bool = False,
    stats_only: bool = False,
    grad_bug: bool = False,
    seed: int = 0,
) -> Path:
    """x -> fc1(Linear 8->16) -> norm(LayerNorm) -> act(ReLU) [-> drop(Dropout)] -> block.fc2(Linear 16->4).

    ``block`` is a user-defined ``Head``. Weights come from one seed so both sides
    share them; ``noise`` perturbs every output relatively (framework rounding).
    Paddle stores Linear weights [in, out], torch [out, in].
    """
    nm = {"fc1": "fc1", "norm": "norm", "act": "act", "block": "block", "fc2": "fc2", **(names or {})}
    rng = np.random.default_rng(seed)
    w1 = rng.normal(size=(8, 16)).astype(np.float32)
    b1 = rng.normal(size=16).astype(np.float32)
    w2 = rng.normal(size=(16, 4)).astype(np.float32)
    x = rng.normal(size=(3, 8)).astype(np.float32)
    nrng = np.random.default_rng(seed + (1 if framework == "torch" else 2))

    def jitter(a: np.ndarray) -> np.ndarray:
        if noise == 0:
            return a
        return (a * (1 + noise * nrng.standard_normal(a.shape))).astype(np.float32)

    src = "model_p.py" if framework == "paddle" else "model_t.py"
    lin = "Linear"
    s = Synth(path, framework, stats_only=stats_only)
    pad = framework == "paddle"
    s.param(nm["fc1"], lin, "weight", w1 if pad else np.ascontiguousarray(w1.T))
    s.param(nm["fc1"], lin, "bias", b1)
    s.param(f"{nm['block']}.{nm['fc2']}", lin, "weight", w2 if pad else np.ascontiguousarray(w2.T))
    handles = {}
    with s.call("", "Net", {"args[0]": x}, (src, 10, "def forward(self, x):")) as root:
        with s.call(nm["fc1"], lin, {"args[0]": x}, (src, 11, "h = self.fc1(x)")) as c:
            h = jitter(x @ w1 + b1)
            c.out({"out": h})
        handles["fc1"] = c
        with s.call(nm["norm"], "LayerNorm", {"args[0]": h}, (src, 12, "h = self.norm(h)")) as c:
            h = jitter(_ln(h, ln_eps))
            c.out({"out": h})
        handles["norm"] = c
        if functional_relu:
            h = np.maximum(h, 0)
        else:
            with s.call(nm["act"], "ReLU", {"args[0]": h}, (src, 13, "h = self.act(h)")) as c:
                h = np.maximum(h, 0)
                c.out({"out": h})
            handles["act"] = c
        if extra_dropout:
            with s.call("drop", "Dropout", {"args[0]": h}, (src, 14, "h = self.drop(h)")) as c:
                c.out({"out": h})
        with s.call(nm["block"], "Head", {"args[0]": h, "kwargs[\"scale\"]": None}, (src, 15, "y = self.block(h)")) as blk:
            with s.call(f"{nm['block']}.{nm['fc2']}", lin, {"args[0]": h}, (src, 30, "return self.fc2(h)")) as c:
                y = jitter(h @ w2)
                if nan_in_fc2:
                    y[0, 0] = np.nan
                c.out({"out": y})
            handles["fc2"] = c
            blk.out({"out": y})
        root.out({"out": y})
    loss = np.array(float(np.mean(y**2)), dtype=np.float32)
    s.loss(loss)
    gy = (2 * y / y.size).astype(np.float32)
    s.grad(root, "out", gy)
    s.grad(handles["fc2"], "out", gy)
    gw2 = (h.T @ gy).astype(np.float32)
    if grad_bug:
        gw2 = gw2 * 1.5
    s.param_grad(f"{nm['block']}.{nm['fc2']}", lin, "weight", gw2 if pad else np.ascontiguousarray(gw2.T))
    s.close()
    return path


def test_toy_trace_follows_conventions(tmp_path: Path) -> None:
    p = toy_model(tmp_path / "t", "torch")
    with open_trace(p) as tr:
        outs = tr.select(kind="module_output")
        assert [r.module for r in outs] == ["fc1", "norm", "act", "block.fc2", "block", ""]
        fc2 = [r for r in outs if r.module == "block.fc2"][0]
        block = [r for r in outs if r.module == "block"][0]
        assert fc2.parent == block.call and block.parent == 0
        assert tr.select(kind="param")[0].shape == (16, 8)
        assert tr.select(kind="grad_output")[0].call == 0


def test_heads_split_and_moved_are_compared_in_the_one_order_the_shapes_allow() -> None:
    """[b, heads, s, d] against [b, s, heads * d]: the fewest axes moved (heads stay before
    head_dim even when both are 4, where [b, s, d, heads] would fit the shapes too)."""
    from analyzer.judging._reconcile import _split_order

    x = np.arange(2 * 8 * 16, dtype=np.float32).reshape(2, 8, 16)  # [b, s, heads * d]
    split = x.reshape(2, 8, 4, 4).transpose(0, 2, 1, 3)  # [b, heads, s, d]
    q = _split_order((2, 8, 16), split.shape)
    assert q == (0, 2, 1, 3) and np.array_equal(split.transpose(q).reshape(-1), x.reshape(-1))
    other = x.reshape(2, 8, 4, 4).transpose(0, 3, 1, 2)  # [b, d, s, heads]: also fits, moves more
    assert not np.array_equal(other.transpose(q).reshape(-1), x.reshape(-1))
    assert _split_order((2, 8, 16), (2, 3, 8, 4)) is None  # other sizes: no order fits


def test_columns_of_a_small_batch_are_found_in_the_other_order() -> None:
    """PatchTST's head input: two series of three channels, 128 features flattened [patch, d] on
    one side and [d, patch] on the other. Six values per column are enough to tell each column
    apart; a column found at two places or constant takes no place of its own."""
    from padiff_trace.analyzer.reporting._columns import column_order

    rng = np.random.default_rng(0)
    b = rng.standard_normal((2, 3, 16, 8)).astype(np.float32)  # [batch, channel, patch, d]
    a = b.transpose(0, 1, 3, 2).reshape(2, 3, 128)  # [d, patch] flattened
    order = column_order(a, b.reshape(2, 3, 128))
    assert order is not None
    np.testing.assert_array_equal(a[..., order], b.reshape(2, 3, 128))
    assert column_order(a[:1, :1], b.reshape(2, 3, 128)[:1, :1]) is None  # one row: nothing tells columns apart


def test_an_update_is_told_apart_no_finer_than_the_stored_weights() -> None:
    """Updates a few float32 spacings of their weight wide (a small gradient under Adagrad):
    two that differ only by how each side rounded ``w - u`` agree; one twice as large (a doubled
    learning rate) does not."""
    from padiff_trace.analyzer.judging._updates import _rel, _rel_stored

    rng = np.random.default_rng(0)
    w0 = rng.uniform(0.5, 1.5, 96).astype(np.float32).astype(np.float64)
    u = rng.standard_normal(96) * 3e-7
    wa = (w0 - u).astype(np.float32).astype(np.float64)
    wb = wa.copy()  # the same update, rounded the other way on every tenth element
    wb[::10] = np.nextafter(wa[::10].astype(np.float32), np.float32(np.inf)).astype(np.float64)
    ua, ub = wa - w0, wb - w0
    assert _rel(ua, ub) > 1e-2  # plain rel-L2: the storage rounding looks like a different update
    assert _rel_stored(ua, ub, wa, wb, np.dtype(np.float32)) == 0.0
    wc = (w0 - u * 2).astype(np.float32).astype(np.float64)
    assert _rel_stored(wc - w0, ub, wc, wb, np.dtype(np.float32)) > 0.3


def test_a_pair_only_an_order_made_is_swapped_only_where_the_names_numbers_say_so() -> None:
    """Two same-shape pairs an order alone made are tried the other way round only where the
    names' own numbers pair them so (``ls1`` with ``gamma1``, block indices aside). Names without
    numbers on one side (CaiT's ``gamma_1`` against ``ls_attn.gamma``) give no such evidence: a
    swap the values would take there equals a bug that uses the two the other way round."""
    from analyzer.reporting._orderswaps import _numbered_crosswise, _numbers

    assert _numbers("stage1.0.ls2.gamma") == (1, 2) and _numbers("blocks.3.gamma1") == (1,)
    assert _numbered_crosswise("block.ls1.gamma", "block.gamma2", "block.ls2.gamma", "block.gamma1")
    assert _numbered_crosswise("stage1.0.ls1.gamma", "stages.0.0.gamma2", "stage1.0.ls2.gamma", "stages.0.0.gamma1")
    assert not _numbered_crosswise("block.ls1.gamma", "block.gamma1", "block.ls2.gamma", "block.gamma2")
    assert not _numbered_crosswise("blocks.0.gamma_1", "sa_blocks.0.ls_ff.gamma", "blocks.0.gamma_2", "sa_blocks.0.ls_attn.gamma")
