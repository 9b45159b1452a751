"""Precision policy per record: ``--autocast`` recordings and the precision findings.

Real torch and paddle, real CLI subprocesses (``python -m padiff_trace run/record/compare``)
on a small MLP (Linear-GELU-Linear) written as spec files into tmp_path.

On CPU paddle's AMP does nothing (``paddle.amp.auto_cast`` warns "amp_guard can only be
enabled on CUDAPlace ..." and computes in float32), so the clean bfloat16 pair is torch vs
torch; torch vs paddle under ``--autocast bfloat16`` is checked for what it is on CPU: the
paddle side computed in float32, and the report says so.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from padiff_trace import Kind, open_trace, recorder

ROOT = Path(__file__).resolve().parent.parent

TORCH_MLP = '''
import numpy as np
import torch

Linear = torch.nn.Linear
{prelude}

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = Linear(16, 32)
        self.act = torch.nn.GELU()
        self.fc2 = Linear(32, 8)

    def forward(self, x):
        {forward}


def model():
    torch.manual_seed(0)
    return MLP()


def inputs():
    return (torch.from_numpy(np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)),)
'''
PLAIN = "return self.fc2(self.act(self.fc1(x)))"
# B's Linear as matmul, then the bias added in the matmul's dtype: under bfloat16 autocast it
# rounds twice where F.linear rounds once (a clean pair, but not a bit-identical one)
SPLIT_LINEAR = """

class Linear(torch.nn.Linear):
    def forward(self, x):
        y = torch.matmul(x, self.weight.t())
        return y + self.bias.to(y.dtype)
"""
# fc1 in float32 while the rest of the model runs under the recording's autocast
FC1_FP32 = """with torch.autocast(device_type="cpu", enabled=False):
            h = self.fc1(x.float())
        return self.fc2(self.act(h))"""

# fc2 under an autocast region of the model's own code (left over from a training script): no
# recording option declares it
FC2_HALF = """h = self.act(self.fc1(x))
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            y = self.fc2(h)
        return y.float()"""

PADDLE_MLP = '''
import numpy as np
import paddle


class MLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(16, 32)
        self.act = paddle.nn.GELU()
        self.fc2 = paddle.nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def model():
    paddle.seed(0)
    return MLP()


def inputs():
    return (paddle.to_tensor(np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)),)
'''


def cli(*argv: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "padiff_trace", *map(str, argv)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def spec(tmp: Path, name: str, text: str) -> Path:
    p = tmp / f"{name}.py"
    p.write_text(text)
    return p


def torch_spec(tmp: Path, name: str, forward: str = PLAIN, prelude: str = "") -> Path:
    return spec(tmp, name, TORCH_MLP.replace("{forward}", forward).replace("{prelude}", prelude))


def report(out: Path) -> dict[str, Any]:
    return json.loads((out / "report.json").read_text())


def codes(rep: dict[str, Any]) -> list[str]:
    return [f["code"] for f in rep["diagnosis"]]


def output_dtypes(trace: Path) -> dict[str, str]:
    with open_trace(trace) as tr:
        return {r.module: r.dtype for r in tr.select(kind=Kind.MODULE_OUTPUT, step=0)}


# ---------------------------------------------------------------------- the option
def test_autocast_flag_is_generated_from_the_option() -> None:
    for cmd in ("record", "run"):
        proc = cli(cmd, "--help")
        assert proc.returncode == 0
        assert "--autocast {bfloat16,float16}" in proc.stdout
    with pytest.raises(Exception, match="autocast"):
        recorder.RecordOptions(autocast="float8")


# ---------------------------------------------------------------------- (i) a clean bf16 pair
def test_clean_bf16_pair_is_aligned(tmp_path: Path) -> None:
    """Both sides under bfloat16 autocast, B's Linear as matmul + bias (one more bf16 rounding):
    ALIGNED on bf16 floors and tolerances, where float32 tolerances call it diverged."""
    a = torch_spec(tmp_path, "mlp_a")
    b = torch_spec(tmp_path, "mlp_b", prelude=SPLIT_LINEAR)
    out = tmp_path / "run"
    proc = cli("run", a, b, "--out", out, "--autocast", "bfloat16")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for trace in (out / "mlp_a.trace", out / "mlp_b.trace"):
        assert output_dtypes(trace) == {"fc1": "bfloat16", "act": "bfloat16", "fc2": "bfloat16", "": "bfloat16"}
        with open_trace(trace) as tr:
            assert tr.meta["autocast"] == {"dtype": "bfloat16", "level": "O1", "backward": "outside", "effective": True}
            # backward outside autocast: the parameter gradients stay float32
            assert {r.dtype for r in tr.select(kind=Kind.PARAM_GRAD)} == {"float32"}
    rep = report(out / "report")
    assert rep["verdict"] == "aligned"
    assert rep["precision"]["count"] == 0 and rep["precision"]["dtypes"] == {"a": ["bfloat16"], "b": ["bfloat16"]}
    assert "precision_difference" not in codes(rep)
    # judged with bfloat16 tolerances and noise floors, not float32's
    outs = [p for p in rep["pairs"] if p["role"] == "output"]
    assert outs and all(p["tolerance"]["rtol"] == 3e-2 for p in outs)
    assert all(p["metrics"]["rel_l2"] > 1e-4 for p in outs)  # not bit-identical: bf16 rounding apart
    for p in outs:
        rms_b = p["metrics"]["norm_b"] / p["metrics"]["n"] ** 0.5
        assert p["noise"]["within"] and p["noise"]["expected_rms"] > 2.0**-8 * rms_b  # bf16's unit roundoff, not fp32's 6e-8
    proc = cli("compare", out / "mlp_a.trace", out / "mlp_b.trace", "--report", tmp_path / "fp32", "--atol", "1e-9", "--rtol", "1e-5")
    assert proc.returncode == 1, proc.stdout  # float32's tolerances: rounding to bf16 is far beyond them


def test_paddle_autocast_on_cpu_computes_in_float32(tmp_path: Path) -> None:
    """torch vs paddle, both --autocast bfloat16: on CPU only torch's autocast acts. The report
    names the paddle side's autocast as having had no effect and the dtype difference."""
    a, b = spec(tmp_path, "mlp_paddle", PADDLE_MLP), torch_spec(tmp_path, "mlp_torch")
    out = tmp_path / "run"
    proc = cli("run", a, b, "--out", out, "--autocast", "bfloat16")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "paddle's autocast has no effect on cpu" in proc.stderr
    with open_trace(out / "mlp_paddle.trace") as tr:
        assert tr.meta["autocast"]["effective"] is False
    with open_trace(out / "mlp_torch.trace") as tr:
        assert tr.meta["autocast"]["effective"] is True
    assert set(output_dtypes(out / "mlp_paddle.trace").values()) == {"float32"}
    assert set(output_dtypes(out / "mlp_torch.trace").values()) == {"bfloat16"}
    rep = report(out / "report")
    assert "autocast_no_effect" in codes(rep)
    first = rep["precision"]["first"]
    assert (first["a_dtype"], first["b_dtype"]) == ("float32", "bfloat16") and "fc1" in first["what"]


# ---------------------------------------------------------------------- (ii) fp32 vs bf16
def test_fp32_vs_bf16_is_a_precision_difference(tmp_path: Path) -> None:
    a, b = torch_spec(tmp_path, "mlp_a"), torch_spec(tmp_path, "mlp_b")
    ta, tb = tmp_path / "a.trace", tmp_path / "b.trace"
    assert cli("record", a, "--out", ta).returncode == 0
    proc = cli("record", b, "--out", tb, "--autocast", "bfloat16", "--inputs-from", ta, "--weights-from", ta)
    assert proc.returncode == 0, proc.stderr
    # noise-aware default: bf16 rounding is within B's bf16 floor, and named as a precision difference
    proc = cli("compare", ta, tb, "--report", tmp_path / "rep")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rep = report(tmp_path / "rep")
    c = codes(rep)
    assert "precision_difference" in c and "precision_explains" not in c
    assert rep["precision"]["count"] == rep["precision"]["compared"] == 5  # 4 module outputs and the loss
    assert rep["precision"]["first"]["a_dtype"] == "float32" and rep["precision"]["first"]["b_dtype"] == "bfloat16"
    assert rep["precision"]["autocast"]["a"] is None and rep["precision"]["autocast"]["b"]["dtype"] == "bfloat16"
    text = next(f["text"] for f in rep["diagnosis"] if f["code"] == "precision_difference")
    assert "fc1#0 [Linear]" in text and "float32 in A and bfloat16 in B" in text
    assert "bf16 noise floor" in " ".join(f["text"] for f in rep["diagnosis"])
    # an fp32 call paired with its bf16 twin is no amplifier (eps of the less precise side)
    assert all(x["ratio"] < 100 for x in rep["amplifiers"])
    # fp32 tolerances: it diverges at fc1, and the precision difference explains it, said before it
    proc = cli("compare", ta, tb, "--report", tmp_path / "tight", "--atol", "0", "--rtol", "1e-6")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rep = report(tmp_path / "tight")
    c = codes(rep)
    assert c.index("precision_difference") < c.index("precision_explains")
    explains = rep["diagnosis"][c.index("precision_explains")]
    assert explains["hint"] and explains["topic"] == "comparison"
    assert rep["first_divergence"]["index"] >= rep["precision"]["first"]["index"]
    assert "precision difference" in proc.stdout


# ---------------------------------------------------------------------- (iii) one module in another dtype
def test_one_module_outside_autocast_is_named(tmp_path: Path) -> None:
    a, b = torch_spec(tmp_path, "mlp_a"), torch_spec(tmp_path, "mlp_b", FC1_FP32)
    out = tmp_path / "run"
    proc = cli("run", a, b, "--out", out, "--autocast", "bfloat16")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert output_dtypes(out / "mlp_b.trace") == {"fc1": "float32", "act": "float32", "fc2": "bfloat16", "": "bfloat16"}
    rep = report(out / "report")
    prec = rep["precision"]
    assert prec["count"] == 2  # fc1 and the GELU fed by it; fc2 is bf16 on both sides again
    assert prec["first"]["what"] == "the output of fc1#0 [Linear]"
    assert (prec["first"]["a_dtype"], prec["first"]["b_dtype"]) == ("bfloat16", "float32")
    text = next(f["text"] for f in rep["diagnosis"] if f["code"] == "precision_difference")
    assert text.startswith("precision difference: the output of fc1#0 [Linear] computed in bfloat16 in A and float32 in B")


# ---------------------------------------------------------------------- (iv) half precision nobody declared
def test_half_precision_nobody_declared_is_a_divergence(tmp_path: Path) -> None:
    """B's own code runs fc2 under bfloat16 autocast; neither recording declares it, and both
    compute in float32 elsewhere: fc2 is judged at float32, the first divergence, named with
    its dtypes. When both sides run that region in bfloat16, it is judged at bfloat16: aligned."""
    a, b = torch_spec(tmp_path, "mlp_a"), torch_spec(tmp_path, "mlp_b", FC2_HALF)
    out = tmp_path / "run"
    proc = cli("run", a, b, "--out", out)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert output_dtypes(out / "mlp_b.trace")["fc2"] == "bfloat16"
    rep = report(out / "report")
    assert rep["precision"]["undeclared"] is True
    first = next(p for p in rep["pairs"] if p["index"] == rep["first_divergence"]["index"])
    assert first["role"] == "output" and first["a"]["module"] == first["b"]["module"] == "fc2"
    c = codes(rep)
    assert "precision_undeclared" in c and "precision_explains" not in c
    said = rep["diagnosis"][c.index("precision_undeclared")]["text"]
    assert "B computing the output of fc2#0 [Linear] in bfloat16" in said and "judged at float32" in said
    both = tmp_path / "both"
    c2 = torch_spec(tmp_path, "mlp_c", FC2_HALF)
    proc = cli("run", b, c2, "--out", both)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "precision_undeclared" not in codes(report(both / "report"))


# ---------------------------------------------------------------------- recording changes no number
def _torch_model() -> Any:
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8))


def _paddle_model() -> Any:
    import paddle

    paddle.seed(0)
    return paddle.nn.Sequential(paddle.nn.Linear(16, 32), paddle.nn.GELU(), paddle.nn.Linear(32, 8))


@pytest.mark.parametrize("fw", ["torch", "paddle"])
@pytest.mark.parametrize("ops", [False, True])
def test_recording_under_autocast_is_bit_identical(fw: str, ops: bool, tmp_path: Path) -> None:
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    model = _torch_model() if fw == "torch" else _paddle_model()
    adapter = recorder.get_adapter(fw)

    def tensor(a: np.ndarray) -> Any:
        if fw == "torch":
            import torch

            return torch.from_numpy(a.copy())
        import paddle

        return paddle.to_tensor(a)

    def bits(t: Any) -> np.ndarray:
        if fw == "torch":
            import torch

            t = t.detach()
            return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().copy()
        return np.asarray(t.detach().numpy()).copy()

    with adapter.autocast("bfloat16"):  # the same autocast, no recorder
        ref = model(tensor(x))
        ref_loss = ref.astype("float32").mean() if fw == "paddle" else ref.float().mean()
    ref_loss.backward()
    ref_grad = bits(model[0].weight.grad)
    adapter.zero_grad(model, None)

    with recorder.record(model, tmp_path / "t", autocast="bfloat16", ops=ops) as rec:
        with rec.autocast():
            out = model(tensor(x))
            loss = rec.loss(out.astype("float32").mean() if fw == "paddle" else out.float().mean())
        loss.backward()
        rec.step()
    np.testing.assert_array_equal(bits(out), bits(ref))
    np.testing.assert_array_equal(bits(loss), bits(ref_loss))
    np.testing.assert_array_equal(bits(model[0].weight.grad), ref_grad)
    with open_trace(tmp_path / "t") as tr:
        assert tr.meta["autocast"]["dtype"] == "bfloat16"
        (root,) = tr.select(kind=Kind.MODULE_OUTPUT, module="")
        assert root.dtype == adapter.dtype_name(ref)
        np.testing.assert_array_equal(root.read(), np.asarray(ref.float().detach().numpy() if fw == "torch"
                                                              else ref.astype("float32").numpy()))


def test_no_autocast_option_is_a_no_op(tmp_path: Path) -> None:
    model = _torch_model()
    with recorder.record(model, tmp_path / "t") as rec:
        import torch

        with rec.autocast():
            assert not torch.is_autocast_enabled("cpu")
            rec.loss(model(torch.zeros(2, 16)).mean())
        rec.step()
    with open_trace(tmp_path / "t") as tr:
        assert tr.meta["autocast"] is None
