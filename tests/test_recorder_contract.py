"""The recorder contract, written once and run against both frameworks.

Every test takes the ``fw`` fixture (torch, paddle): the framework-specific part is only
model construction and a few tensor helpers (tests/recorder_models/{torch,paddle}_models.py).
The assertions read the trace back and compare it with the real tensors of the run.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import inspect
import os
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from padiff_trace.recorder._session import active_recorder

from padiff_trace import Kind, Phase, open_trace, recorder

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
THIS_FILE = os.path.relpath(__file__, ROOT)  # tests run from the repository root

rng = np.random.default_rng(1234)
SHAPES = {
    "mlp": (3, 8),
    "conv_bn": (2, 3, 5, 5),
    "lstm": (2, 5, 4),
    "gru": (2, 5, 4),
    "mha": (2, 3, 8),
    "encoder": (2, 5, 8),
    "shared": (3, 6),
    "held": (3, 6),
    "nested": (2, 4),
    "probing": (2, 4),
    "raising": (2, 4),
}
INPUTS = {k: rng.standard_normal(s).astype(np.float32) for k, s in SHAPES.items()}


@pytest.fixture(params=["torch", "paddle"], scope="module")
def fw(request: pytest.FixtureRequest) -> Any:
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    return importlib.import_module(f"recorder_models.{request.param}_models").FW


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # stack paths are relative to the working directory


# ---------------------------------------------------------------------- helpers
def leaves(fw: Any, obj: Any, prefix: str = "out") -> list[tuple[str, Any]]:
    """(position, leaf) in the documented position syntax, independent of recorder._nest."""
    if fw.is_tensor(obj):
        return [(prefix, obj)]
    if isinstance(obj, (tuple, list)):
        return [p for i, x in enumerate(obj) for p in leaves(fw, x, f"{prefix}[{i}]")]
    if isinstance(obj, dict):
        return [p for k, x in obj.items() for p in leaves(fw, x, f'{prefix}["{k}"]')]
    if dataclasses.is_dataclass(obj):
        return [p for f in dataclasses.fields(obj) for p in leaves(fw, getattr(obj, f.name), f"{prefix}.{f.name}")]
    return [(prefix, obj)]


def loss_of(fw: Any, out: Any) -> Any:
    """sum of mean(t*t) over the float tensor leaves: gradients differ per element."""
    total = None
    for _, t in leaves(fw, out):
        if fw.is_tensor(t) and "float" in str(t.dtype):
            term = (t * t).mean()
            total = term if total is None else total + term
    return total


def pname(r: Any) -> str:
    """A weight/grad record's full parameter name, as named_parameters() spells it."""
    return f"{r.module}.{r.position}" if r.module else r.position


def check_stats(rec: Any, arr: np.ndarray) -> None:
    a = np.asarray(arr, dtype=np.float64)
    s = rec.stats
    want = {
        "min": a.min(),
        "max": a.max(),
        "mean": a.mean(),
        "std": a.std(),
        "mean_abs": np.abs(a).mean(),
        "l2": np.sqrt((a * a).sum()),
    }
    for k, v in want.items():
        assert s[k] == pytest.approx(v, rel=1e-6, abs=1e-7), (rec.name, k)
    assert s["nan"] == 0 and s["inf"] == 0


def by_key(records: list[Any]) -> dict[tuple[str, int, str], Any]:
    out = {}
    for r in records:
        key = (r.module, r.call_index, r.position)
        assert key not in out, f"duplicate record {key}"
        out[key] = r
    return out


def run_once(fw: Any, what: str, path: Path | None = None, **options: Any) -> tuple[Any, Any, Any, Any]:
    """Build ``what``, run forward + backward (recorded when ``path``); (model, x, out, loss)."""
    model = fw.build(what)
    x = fw.tensor(INPUTS[what], requires_grad=True)
    if path is None:
        out = model(x)
        loss = loss_of(fw, out)
        loss.backward()
        return model, x, out, loss
    with recorder.record(model, path, **options) as rec:
        out = model(x)
        loss = rec.loss(loss_of(fw, out))
        loss.backward()
        rec.step()
    return model, x, out, loss


def capture_output_grads(fw: Any, model: Any) -> tuple[dict[tuple[str, int, str], np.ndarray], list[Any]]:
    """Real gradients of every module output, through our own tensor hooks."""
    grads: dict[tuple[str, int, str], np.ndarray] = {}
    counts: dict[str, int] = {}
    handles = []
    for path, module in fw.named_modules(model):

        def on_out(out: Any, path: str = path) -> None:
            idx = counts.get(path, 0)
            counts[path] = idx + 1
            for pos, t in leaves(fw, out):
                if fw.is_tensor(t) and not getattr(t, "stop_gradient", False) and getattr(t, "requires_grad", True):

                    def store(g: Any, key: tuple[str, int, str] = (path, idx, pos)) -> None:
                        grads[key] = fw.numpy(g)

                    t.register_hook(store)

        handles.append(fw.add_post_hook(module, on_out))
    return grads, handles


# ---------------------------------------------------------------------- content
def test_importing_recorder_imports_no_framework() -> None:
    code = "import sys, recorder; print(sorted(m for m in ('torch', 'paddle') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_mlp_records_inputs_outputs_calls_and_stats(fw: Any, tmp_path: Path) -> None:
    model = fw.build("mlp")
    x = fw.tensor(INPUTS["mlp"])
    acts: dict[str, np.ndarray] = {}
    for path, m in fw.named_modules(model):
        fw.add_post_hook(m, lambda out, path=path: acts.__setitem__(path, fw.numpy(out)))
    with recorder.record(model, tmp_path / "t") as rec:
        out = model(x)
        rec.loss(loss_of(fw, out))
    with open_trace(tmp_path / "t") as tr:
        assert tr.complete and tr.meta["framework"] == fw.name
        (mi,) = tr.select(kind=Kind.MODEL_INPUT)
        assert (mi.module, mi.position, mi.call, mi.parent, mi.shape) == ("", "args[0]", 0, -1, (3, 8))
        np.testing.assert_array_equal(mi.read(), INPUTS["mlp"])
        outs = by_key(tr.select(kind=Kind.MODULE_OUTPUT))
        assert set(outs) == {("", 0, "out"), ("0", 0, "out"), ("1", 0, "out"), ("2", 0, "out")}
        assert [outs[("", 0, "out")].module_type, outs[("0", 0, "out")].module_type] == ["Sequential", "Linear"]
        for (path, _, _), r in outs.items():
            assert r.shape == acts[path].shape and r.dtype == "float32" and r.has_data
            np.testing.assert_array_equal(r.read(), acts[path])
            check_stats(r, acts[path])
            assert r.phase == Phase.FORWARD and r.step == 0
        # calls: root is call 0, the children are called in order inside it
        children = [outs[(p, 0, "out")] for p in ("0", "1", "2")]
        assert [c.parent for c in children] == [0, 0, 0]
        assert [c.call for c in children] == sorted(c.call for c in children) and len({c.call for c in children}) == 3
        ins = by_key(tr.select(kind=Kind.MODULE_INPUT))
        np.testing.assert_array_equal(ins[("1", 0, "args[0]")].read(), acts["0"])  # relu sees linear 0's output
        assert ins[("1", 0, "args[0]")].call == outs[("1", 0, "out")].call
        (loss,) = tr.select(kind=Kind.LOSS)
        assert loss.shape == () and float(loss.read()) == pytest.approx(float((acts[""].astype(np.float64) ** 2).mean()), rel=1e-6)
        params = {pname(r): r for r in tr.select(kind=Kind.PARAM)}
        real = fw.params(model)
        assert set(params) == set(real)
        for name, t in real.items():
            np.testing.assert_array_equal(params[name].read(), fw.numpy(t))
            assert params[name].phase == Phase.OTHER and params[name].step == 0


def test_conv_bn_running_stats_are_buffers(fw: Any, tmp_path: Path) -> None:
    model, _, _, _ = run_once(fw, "conv_bn", tmp_path / "t")
    mean, var = fw.bn_stats()
    with open_trace(tmp_path / "t") as tr:
        bufs = {(r.step, r.module, r.position): r for r in tr.select(kind=Kind.BUFFER)}
        params = {(r.step, r.module, r.position) for r in tr.select(kind=Kind.PARAM)}
        for name in (mean, var):
            assert (0, "1", name) in bufs and (0, "1", name) not in params
            assert bufs[(0, "1", name)].module_type.startswith("BatchNorm")
        assert {(0, "1", "weight"), (0, "1", "bias"), (0, "0", "weight"), (0, "0", "bias")} <= params
        # step 0: initial statistics; after the step: the updated ones, equal to the model's
        np.testing.assert_array_equal(bufs[(0, "1", mean)].read(), np.zeros(4, np.float32))
        np.testing.assert_array_equal(bufs[(0, "1", var)].read(), np.ones(4, np.float32))
        real = fw.buffers(model)
        np.testing.assert_array_equal(bufs[(1, "1", mean)].read(), fw.numpy(real[f"1.{mean}"]))
        assert not np.array_equal(bufs[(1, "1", mean)].read(), bufs[(0, "1", mean)].read())


@pytest.mark.parametrize("what", ["lstm", "gru"])
def test_rnn_nested_outputs(fw: Any, what: str, tmp_path: Path) -> None:
    model = fw.build(what)
    x = fw.tensor(INPUTS[what])
    with recorder.record(model, tmp_path / "t") as rec:
        out = model(x)
        rec.loss(loss_of(fw, out))
    real = dict(leaves(fw, out))
    with open_trace(tmp_path / "t") as tr:
        outs = {r.position: r for r in tr.select(kind=Kind.MODULE_OUTPUT, module="")}
        assert set(outs) == set(real)  # lstm: out[0], out[1][0], out[1][1]; gru: out[0], out[1]
        assert len(real) == (3 if what == "lstm" else 2)
        for pos, t in real.items():
            assert outs[pos].shape == tuple(t.shape)
            np.testing.assert_array_equal(outs[pos].read(), fw.numpy(t))
            check_stats(outs[pos], fw.numpy(t))


def test_multihead_attention(fw: Any, tmp_path: Path) -> None:
    model = fw.build("mha")
    x = fw.tensor(INPUTS["mha"])
    with recorder.record(model, tmp_path / "t"):
        out = model(x)
    with open_trace(tmp_path / "t") as tr:
        attn = {r.position: r for r in tr.select(kind=Kind.MODULE_OUTPUT, module="attn")}
        # torch returns (out, None) with need_weights=False; paddle returns the tensor
        pos = "out[0]" if fw.name == "torch" else "out"
        np.testing.assert_array_equal(attn[pos].read(), fw.numpy(out))
        if fw.name == "torch":
            assert attn["out[1]"].dtype == "py:NoneType" and not attn["out[1]"].has_data
        ins = [r.position for r in tr.select(kind=Kind.MODULE_INPUT, module="attn")]
        assert ins[:3] == ["args[0]", "args[1]", "args[2]"]


def test_transformer_encoder_submodules(fw: Any, tmp_path: Path) -> None:
    model = fw.build("encoder")
    x = fw.tensor(INPUTS["encoder"])
    with recorder.record(model, tmp_path / "t"):
        out = model(x)
    with open_trace(tmp_path / "t") as tr:
        mods = {r.module for r in tr.select(kind=Kind.MODULE_OUTPUT)}
        for i in (0, 1):  # no fast path: every sublayer is called
            assert {f"layers.{i}", f"layers.{i}.self_attn", f"layers.{i}.linear1", f"layers.{i}.linear2", f"layers.{i}.norm2"} <= mods
        (root,) = tr.select(kind=Kind.MODULE_OUTPUT, module="")
        np.testing.assert_array_equal(root.read(), fw.numpy(out))
        l1 = tr.select(kind=Kind.MODULE_OUTPUT, module="layers.1")[0]
        np.testing.assert_array_equal(tr.select(kind=Kind.MODULE_INPUT, module="layers.1")[0].read(), tr.select(kind=Kind.MODULE_OUTPUT, module="layers.0")[0].read())
        assert l1.shape == (2, 5, 8)


def test_shared_module_called_twice_and_functional_call(fw: Any, tmp_path: Path) -> None:
    model = fw.build("shared")
    x = fw.tensor(INPUTS["shared"])
    with recorder.record(model, tmp_path / "t"):
        out = model(x)
    with open_trace(tmp_path / "t") as tr:
        lin_out = sorted(tr.select(kind=Kind.MODULE_OUTPUT, module="lin"), key=lambda r: r.call_index)
        lin_in = sorted(tr.select(kind=Kind.MODULE_INPUT, module="lin"), key=lambda r: r.call_index)
        assert [r.call_index for r in lin_out] == [0, 1] and [r.call_index for r in lin_in] == [0, 1]
        assert lin_out[0].call != lin_out[1].call and lin_out[0].parent == lin_out[1].parent == 0
        # the functional relu between the calls is not a module record, its effect is visible
        np.testing.assert_array_equal(lin_in[1].read(), np.maximum(lin_out[0].read(), 0))
        np.testing.assert_array_equal(lin_in[0].read(), INPUTS["shared"])
        np.testing.assert_array_equal(tr.select(kind=Kind.MODULE_OUTPUT, module="")[0].read(), fw.numpy(out))
        assert {r.module for r in tr.select(kind=Kind.MODULE_OUTPUT)} == {"", "lin", "head"}


def test_shared_instance_is_named_where_its_caller_holds_it(fw: Any, tmp_path: Path) -> None:
    model = fw.build("held")
    with recorder.record(model, tmp_path / "t"):
        model(fw.tensor(INPUTS["held"]))
    with open_trace(tmp_path / "t") as tr:
        outs = tr.select(kind=Kind.MODULE_OUTPUT)
        acts = sorted((r.module, r.call_index) for r in outs if r.module.endswith("act"))
        # each block's call under the block's own path; the root's call under the first registered path
        assert acts == [("blocks.0.act", 0), ("blocks.0.act", 1), ("blocks.1.act", 0)]
        by_call = {r.call: r for r in outs}
        for r in outs:
            if r.module.startswith("blocks.") and r.module.endswith(".act") and r.parent in by_call:
                assert by_call[r.parent].module in ("", r.module.removesuffix(".act"))
        inner = next(r for r in outs if r.module == "blocks.1.act")
        lin = next(r for r in outs if r.module == "blocks.1.lin")
        np.testing.assert_allclose(inner.read(), np.tanh(lin.read()), rtol=1e-6, atol=1e-6)


def test_nested_outputs_with_non_tensors(fw: Any, tmp_path: Path) -> None:
    model = fw.build("nested")
    x = fw.tensor(INPUTS["nested"], requires_grad=True)
    with recorder.record(model, tmp_path / "t") as rec:
        out = model(x)
        loss_of(fw, out).backward()
        rec.step()
    with open_trace(tmp_path / "t") as tr:
        root = {r.position: r for r in tr.select(kind=Kind.MODULE_OUTPUT, module="")}
        assert set(root) == {'out["a"]', 'out["pair"][0]', 'out["pair"][1]', 'out["n"]', 'out["dc"].x', 'out["dc"].k'}
        for pos, t in leaves(fw, out):
            if fw.is_tensor(t):
                np.testing.assert_array_equal(root[pos].read(), fw.numpy(t))
        assert root['out["pair"][1]'].dtype == "py:NoneType" and not root['out["pair"][1]'].has_data
        assert int(root['out["n"]'].read()) == 3 and int(root['out["dc"].k'].read()) == 5
        inner = {r.position for r in tr.select(kind=Kind.MODULE_OUTPUT, module="inner")}
        assert inner == {'out["a"]', 'out["none"]', 'out["k"]'}
        # backward: gradients of the tensor leaves, none for the python values
        g = {r.position for r in tr.select(kind=Kind.GRAD_OUTPUT, module="")}
        assert g == {'out["a"]', 'out["pair"][0]', 'out["dc"].x'}


@pytest.mark.parametrize("opt_kind", ["sgd", "adam"])
def test_two_training_steps(fw: Any, opt_kind: str, tmp_path: Path) -> None:
    model = fw.build("mlp")
    opt = fw.optimizer(opt_kind, model)
    x = fw.tensor(INPUTS["mlp"])
    snaps = [{n: fw.numpy(p) for n, p in fw.params(model).items()}]
    grads, losses = [], []
    with recorder.record(model, tmp_path / "t") as rec:
        for _ in range(2):
            loss = rec.loss(loss_of(fw, model(x)))
            loss.backward()
            losses.append(float(fw.numpy(loss)))
            grads.append({n: fw.grad(p) for n, p in fw.params(model).items()})
            opt.step()
            rec.step()
            fw.zero_grad(opt)
            snaps.append({n: fw.numpy(p) for n, p in fw.params(model).items()})
    with open_trace(tmp_path / "t") as tr:
        assert tr.steps() == [0, 1, 2]
        for step in (0, 1, 2):
            got = {pname(r): r.read() for r in tr.select(kind=Kind.PARAM, step=step)}
            assert set(got) == set(snaps[step])
            for n, v in snaps[step].items():
                np.testing.assert_array_equal(got[n], v)
        for n in snaps[0]:
            assert not np.array_equal(snaps[0][n], snaps[1][n]) and not np.array_equal(snaps[1][n], snaps[2][n])
        for step in (0, 1):
            pg = {pname(r): r for r in tr.select(kind=Kind.PARAM_GRAD, step=step)}
            assert set(pg) == set(grads[step])
            for n, g in grads[step].items():
                np.testing.assert_array_equal(pg[n].read(), g)
                assert pg[n].phase == Phase.BACKWARD
            (lr,) = tr.select(kind=Kind.LOSS, step=step)
            assert float(lr.read()) == losses[step]
        assert losses[1] < losses[0]
        assert not tr.select(kind=[Kind.PARAM_GRAD, Kind.LOSS], step=2)


@pytest.mark.parametrize("what", ["mlp", "shared", "lstm", "encoder", "conv_bn"])
def test_grad_outputs_equal_real_gradients(fw: Any, what: str, tmp_path: Path) -> None:
    model = fw.build(what)
    x = fw.tensor(INPUTS[what], requires_grad=True)
    real, _ = capture_output_grads(fw, model)
    with recorder.record(model, tmp_path / "t") as rec:
        out = model(x)
        loss = loss_of(fw, out)
        loss.backward()
        rec.step()
    assert real  # our hooks saw gradients
    with open_trace(tmp_path / "t") as tr:
        got = by_key(tr.select(kind=Kind.GRAD_OUTPUT))
        assert set(got) == set(real)
        for key, g in real.items():
            assert got[key].phase == Phase.BACKWARD and got[key].step == 0
            np.testing.assert_array_equal(got[key].read(), g, err_msg=str(key))
        outs = by_key(tr.select(kind=Kind.MODULE_OUTPUT))
        for key, r in got.items():  # a grad record belongs to its output record's call
            assert outs[key].call == r.call and outs[key].shape == r.shape
        pg = {pname(r): r.read() for r in tr.select(kind=Kind.PARAM_GRAD)}
        params = fw.params(model)
        assert set(pg) == {n for n, p in params.items() if fw.grad(p) is not None} and pg
        for n, arr in pg.items():
            np.testing.assert_array_equal(arr, fw.grad(params[n]))


# ---------------------------------------------------------------------- probe
def test_probe_records_under_enclosing_module(fw: Any, tmp_path: Path) -> None:
    model = fw.build("probing")
    x = fw.tensor(INPUTS["probing"])
    acts: dict[str, np.ndarray] = {}
    fw.add_post_hook(dict(fw.named_modules(model))["block.lin"], lambda out: acts.__setitem__("lin", fw.numpy(out)))
    with recorder.record(model, tmp_path / "t"):
        model(x)
        model(x)
    with open_trace(tmp_path / "t") as tr:
        probes = tr.select(kind=Kind.PROBE)
        assert [(r.module, r.position, r.call_index) for r in probes] == [("block", "scaled", 0), ("block", "scaled", 1)]
        blocks = sorted(tr.select(kind=Kind.MODULE_OUTPUT, module="block"), key=lambda r: r.call_index)
        assert [p.call for p in probes] == [b.call for b in blocks]
        assert probes[0].module_type == "_ProbeBlock"
        np.testing.assert_array_equal(probes[0].read(), acts["lin"] * np.float32(3.0))
        assert probes[0].stack[-1].file == os.path.join("tests", "recorder_models", f"{fw.name}_models.py")
        assert "recorder.probe" in probes[0].stack[-1].source
        n = len(tr)
    with recorder.record(model, tmp_path / "k", kinds=["module_output"]):  # kind filters apply to probes
        model(x)
    with open_trace(tmp_path / "k") as tr:
        assert not tr.select(kind=Kind.PROBE) and tr.select(kind=Kind.MODULE_OUTPUT)
    # no recorder active: returns its argument, writes nothing
    assert active_recorder() is None
    t = fw.tensor(INPUTS["probing"])
    assert recorder.probe("x", t) is t
    model(x)  # the model probes too
    with open_trace(tmp_path / "t") as tr:
        assert len(tr) == n


# ---------------------------------------------------------------------- lifecycle
def test_hooks_removed_and_no_strong_refs(fw: Any, tmp_path: Path) -> None:
    model = fw.build("mlp")
    before = fw.hook_count(model)
    x = fw.tensor(INPUTS["mlp"], requires_grad=True)
    with recorder.record(model, tmp_path / "t") as rec:
        assert fw.hook_count(model) > before
        out = model(x)
        rec.loss(loss_of(fw, out)).backward()
        rec.step()
    assert fw.hook_count(model) == before
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is None, "the recorder keeps the model alive"
    assert rec is not None and out is not None  # the recorder and the outputs are still around


def test_model_raising_inside_with(fw: Any, tmp_path: Path) -> None:
    model = fw.build("raising")
    x = fw.tensor(INPUTS["raising"])
    with pytest.raises(RuntimeError, match="boom in forward"), recorder.record(model, tmp_path / "t"):
        model(x)
    assert fw.hook_count(model) == 0
    assert active_recorder() is None
    with open_trace(tmp_path / "t") as tr:
        assert not tr.complete
        outs = {r.module for r in tr.select(kind=Kind.MODULE_OUTPUT)}
        assert "lin1" in outs and "lin2" not in outs
        assert {r.module for r in tr.select(kind=Kind.MODULE_INPUT)} >= {"lin1", "boom"}
        assert tr.select(kind=Kind.PARAM)
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is None


# ---------------------------------------------------------------------- bit-identical
@pytest.mark.parametrize("mode", ["full", "stats_only"])
@pytest.mark.parametrize("what", ["mlp", "conv_bn", "lstm", "encoder", "shared"])
def test_outputs_and_gradients_bit_identical(fw: Any, what: str, mode: str, tmp_path: Path) -> None:
    def run(path: Path | None) -> tuple[list[np.ndarray], dict[str, np.ndarray], np.ndarray]:
        opts = {"stats_only": True} if mode == "stats_only" else {}
        model, x, out, _ = run_once(fw, what, path, **opts)
        outs = [fw.numpy(t) for _, t in leaves(fw, out) if fw.is_tensor(t)]
        return outs, {n: fw.grad(p) for n, p in fw.params(model).items()}, fw.grad(x)

    bare = run(None)
    rec = run(tmp_path / "t")
    assert len(bare[0]) == len(rec[0]) and bare[0]
    for a, b in zip(bare[0], rec[0]):
        assert np.array_equal(a, b)
    assert set(bare[1]) == set(rec[1])
    for n in bare[1]:
        assert np.array_equal(bare[1][n], rec[1][n]), n
    assert bare[2] is not None and np.array_equal(bare[2], rec[2])


# ---------------------------------------------------------------------- stacks
def test_stacks_are_user_frames_with_relative_paths(fw: Any, tmp_path: Path) -> None:
    model = fw.build("shared")
    x = fw.tensor(INPUTS["shared"])
    line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
    with recorder.record(model, tmp_path / "t"):
        model(x)
    with recorder.record(model, tmp_path / "full", full_stack=True):
        model(x)
    models_file = os.path.join("tests", "recorder_models", f"{fw.name}_models.py")
    src = (ROOT / models_file).read_text().splitlines()
    call_lines = [i + 1 for i, s in enumerate(src) if "SHARED-CALL-" in s]
    with open_trace(tmp_path / "t") as tr:
        (root,) = tr.select(kind=Kind.MODULE_OUTPUT, module="")
        assert (root.stack[-1].file, root.stack[-1].line) == (THIS_FILE, line)
        assert root.stack[-1].source == "model(x)"
        lins = sorted(tr.select(kind=Kind.MODULE_INPUT, module="lin"), key=lambda r: r.call_index)
        assert [(r.stack[-1].file, r.stack[-1].line) for r in lins] == [(models_file, n) for n in call_lines]
        assert (lins[0].stack[-2].file, lins[0].stack[-2].line) == (THIS_FILE, line)
        for r in tr.records():
            for f in r.stack:
                assert not os.path.isabs(f.file), f
                top = f.file.split(os.sep)[0]
                assert top not in ("torch", "paddle", "padiff_trace", "recorder"), f
    with open_trace(tmp_path / "full") as tr:
        (root,) = tr.select(kind=Kind.MODULE_OUTPUT, module="")
        tops = {f.file.split(os.sep)[0] for f in root.stack}
        assert fw.name in tops  # the framework's own call machinery is kept
        assert root.stack[-1].file != THIS_FILE or len(root.stack) > 3


# ---------------------------------------------------------------------- filters
def _train(fw: Any, what: str, path: Path, n_steps: int = 3, **options: Any) -> None:
    model = fw.build(what)
    opt = fw.optimizer("sgd", model)
    x = fw.tensor(INPUTS[what])
    with recorder.record(model, path, **options) as rec:
        for _ in range(n_steps):
            loss = rec.loss(loss_of(fw, model(x)))
            loss.backward()
            opt.step()
            rec.step()
            fw.zero_grad(opt)


def test_filters_include_exclude(fw: Any, tmp_path: Path) -> None:
    _train(fw, "shared", tmp_path / "inc", n_steps=1, include=["lin"])
    _train(fw, "shared", tmp_path / "exc", n_steps=1, exclude=["head", ""])
    for name in ("inc", "exc"):
        with open_trace(tmp_path / name) as tr:
            mods = {r.module for r in tr.records() if r.kind not in (Kind.LOSS,)}
            assert mods == {"lin"}, (name, mods)
            assert len(tr.select(kind=Kind.MODULE_OUTPUT)) == 2 and len(tr.select(kind=Kind.GRAD_OUTPUT)) == 2


def test_filters_kinds_and_phases(fw: Any, tmp_path: Path) -> None:
    _train(fw, "mlp", tmp_path / "k", n_steps=1, kinds=["module_output", "param_grad"])
    _train(fw, "mlp", tmp_path / "p", n_steps=1, phases=["backward"])
    _train(fw, "mlp", tmp_path / "g", n_steps=1, kinds=["grad_output"])
    _train(fw, "mlp", tmp_path / "all", n_steps=1, input_grads=True)
    with open_trace(tmp_path / "k") as tr:
        assert {r.kind for r in tr.records()} == {Kind.MODULE_OUTPUT, Kind.PARAM_GRAD}
    with open_trace(tmp_path / "g") as tr, open_trace(tmp_path / "all") as full:
        assert {r.kind for r in tr.records()} == {Kind.GRAD_OUTPUT}  # without the outputs themselves
        ref = by_key(full.select(kind=Kind.GRAD_OUTPUT))
        got = by_key(tr.records())
        assert set(got) == set(ref) and len(got) == 4
        for k, r in got.items():
            np.testing.assert_array_equal(r.read(), ref[k].read())
        gi = full.select(kind=Kind.GRAD_INPUT)  # opt-in; the model input does not require grad
        assert {r.module for r in gi} == {"1", "2"}
    with open_trace(tmp_path / "p") as tr:
        assert {r.phase for r in tr.records()} == {Phase.BACKWARD}
        assert {r.kind for r in tr.records()} == {Kind.GRAD_OUTPUT, Kind.PARAM_GRAD}


def test_filters_steps_and_every(fw: Any, tmp_path: Path) -> None:
    _train(fw, "mlp", tmp_path / "s", n_steps=3, steps=[1])
    _train(fw, "mlp", tmp_path / "e", n_steps=4, every=2)
    with open_trace(tmp_path / "s") as tr:
        assert tr.steps() == [1]
        assert tr.select(kind=Kind.MODULE_OUTPUT) and tr.select(kind=Kind.PARAM) and tr.select(kind=Kind.LOSS)
    with open_trace(tmp_path / "e") as tr:
        assert tr.steps() == [0, 2, 4]
        assert {r.step for r in tr.select(kind=Kind.LOSS)} == {0, 2}
        assert {r.step for r in tr.select(kind=Kind.PARAM)} == {0, 2, 4}


def test_stats_only_and_max_tensor_bytes(fw: Any, tmp_path: Path) -> None:
    _train(fw, "mlp", tmp_path / "s", n_steps=2, stats_only=True)
    with open_trace(tmp_path / "s") as tr:
        for r in tr.records():
            keep = r.kind == Kind.MODEL_INPUT or (r.kind in (Kind.PARAM, Kind.BUFFER) and r.step == 0)
            assert r.has_data == keep, r.name
            assert np.isfinite(r.stats["mean"]) and np.isfinite(r.stats["l2"])
        # stats of a data-less record match the same tensor recorded in full elsewhere
        full = tmp_path / "f"
        _train(fw, "mlp", full, n_steps=2)
        with open_trace(full) as tf:
            ref = by_key(tf.select(kind=Kind.MODULE_OUTPUT, step=1))
            for key, r in by_key(tr.select(kind=Kind.MODULE_OUTPUT, step=1)).items():
                check_stats(r, ref[key].read())
    _train(fw, "mlp", tmp_path / "m", n_steps=1, max_tensor_bytes=64)
    with open_trace(tmp_path / "m") as tr:
        recs = [r for r in tr.records() if r.is_tensor]
        assert any(r.has_data for r in recs) and any(not r.has_data for r in recs)
        for r in recs:
            nbytes = r.numel * 4
            assert r.has_data == (nbytes <= 64), (r.name, nbytes)
            assert np.isfinite(r.stats["l2"])


def test_unknown_option_is_an_error(fw: Any, tmp_path: Path) -> None:
    model = fw.build("mlp")
    with pytest.raises(TypeError, match="unknown recording option"):
        recorder.record(model, tmp_path / "t", stat_only=True)
