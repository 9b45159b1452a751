"""``padiff_trace.auto_diff``: PaDiff's README examples, run as written (only the import line
changed), with real paddle and real torch; a planted bug reported with both stacks by
``auto_diff`` and by ``padiff-trace compare`` on the traces it left; fresh result directories;
the notebook face of a report; PaDiff's option names.

The examples live in tests/padiff_examples/ and run in this process (``runpy``), from a
temporary current directory, as a user's script would.
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from padiff_trace import UserError

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "tests" / "padiff_examples"
PASSED, FAILED = "[AutoDiff] SUCCESS !!!", "[AutoDiff] FAILED !!!"


def run_example(name: str, cwd: Path) -> tuple[dict[str, Any], str]:
    """Run tests/padiff_examples/<name>.py as a script from ``cwd``: (its globals, its stdout)."""
    buf = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(buf):
        mp.chdir(cwd)
        namespace = runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")
    return namespace, buf.getvalue()


def run_dirs(cwd: Path) -> list[Path]:
    return sorted(p for p in (cwd / "padiff_trace_runs").iterdir() if p.is_dir())


def lines_of(path: Path, text: str) -> list[int]:
    return [i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln.strip() == text]


# ---------------------------------------------------------------- fast: no framework needed


def test_unknown_option_is_one_line_error_naming_the_accepted_ones() -> None:
    from padiff_trace import auto_diff

    for call in (lambda: auto_diff(None, None, None, options={"atoll": 1e-4}), lambda: auto_diff(None, None, None, atoll=1e-4)):
        with pytest.raises(UserError) as info:
            call()
        msg = str(info.value)
        assert "\n" not in msg and "'atoll'" in msg
        for name in ("atol", "rtol", "compare_mode", "diff_phase", "single_step", "steps", "auto_init"):
            assert name in msg
    with pytest.raises(UserError, match=r"'cmd' .*not supported: inspect the traces"):
        auto_diff(None, None, None, options={"cmd": True})
    with pytest.raises(UserError, match="compare_mode='exact': expected one of mean, strict"):
        auto_diff(None, None, None, options={"compare_mode": "exact"})
    with pytest.raises(UserError, match="given twice"):
        auto_diff(None, None, None, options={"atol": 1e-4}, atol=1e-3)


def test_importing_padiff_trace_loads_neither_the_recorder_nor_a_framework() -> None:
    code = textwrap.dedent(
        """
        import sys
        import padiff_trace
        assert not [m for m in sys.modules if m.startswith(("padiff_trace.recorder", "padiff_trace.pipeline"))]
        from padiff_trace import LayerMap, auto_diff
        assert auto_diff.__doc__ and LayerMap.__doc__
        assert not [m for m in sys.modules if m.split(".")[0] in ("paddle", "torch")]
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_migration_doc_holds_the_option_table() -> None:
    from padiff_trace.pipeline._padiff_options import migration_table

    assert migration_table() in (ROOT / "docs" / "migrating-from-padiff.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------- the README's examples


def test_readme_case1_simple_layer(tmp_path: Path) -> None:
    _, out = run_example("case1_simple", tmp_path)
    assert PASSED in out and FAILED not in out
    assert "[AutoDiff] Max output diff is" in out
    (d,) = run_dirs(tmp_path)
    assert (d / "paddle.trace").is_dir() and (d / "torch.trace").is_dir() and (d / "report" / "report.json").is_file()


def test_auto_diff_output_is_not_interleaved_with_info_log_lines(tmp_path: Path) -> None:
    """Importing paddle sets the root logger to INFO: our weight-map and alignment lines used to
    land between auto_diff's own printed lines. A script, in a process of its own."""
    proc = subprocess.run([sys.executable, str(EXAMPLES / "case1_simple.py")], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and PASSED in proc.stdout, proc.stderr[-2000:]
    assert "INFO" not in proc.stdout + proc.stderr, proc.stderr[-2000:]


@pytest.mark.parametrize("name", ["case2_layer_mapping", "case2_layermap_class"])
def test_readme_case2_multihead_attention_layer_map(tmp_path: Path, name: str) -> None:
    _, out = run_example(name, tmp_path)
    assert PASSED in out and FAILED not in out
    (d,) = run_dirs(tmp_path)
    mapping = json.loads((d / "mapping.json").read_text())
    assert mapping["modules"] == [{"paddle": "attn", "torch": "attn", "blackbox": True}]
    assert f"--mapping {d / 'mapping.json'}" in out  # the CLI line that repeats the comparison


def test_readme_case3_custom_loss_fn(tmp_path: Path) -> None:
    _, out = run_example("case3_loss_fn", tmp_path)
    assert out.count(PASSED) == 2 and FAILED not in out  # the README's two calls
    dirs = run_dirs(tmp_path)
    assert len(dirs) == 2  # two calls in one process: two result directories
    from padiff_trace import open_trace

    for d in dirs:
        with open_trace(d / "torch.trace") as tr:
            assert len(tr.select(kind="loss")) == 1


# ---------------------------------------------------------------- a planted bug


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str, Path]:
    cwd = tmp_path_factory.mktemp("planted")
    namespace, out = run_example("case1_planted_bug", cwd)
    return namespace["result"], out, cwd


def test_planted_bug_reported_with_both_stacks(planted: tuple[Any, str, Path]) -> None:
    result, out, _ = planted
    assert not result and result.verdict == "FAILED" and FAILED in out and PASSED not in out
    src = EXAMPLES / "case1_planted_bug.py"
    line_a, line_b = lines_of(src, "x = self.linear2(x)")  # paddle's forward, then torch's
    assert "Paddle Stacks" in out and "Torch Stacks" in out
    paddle_part, torch_part = out.split("Paddle Stacks", 1)[1].split("Torch Stacks", 1)
    assert f": {line_a}    forward" in paddle_part and f": {line_b}    forward" in torch_part
    assert "x = self.linear2(x)" in paddle_part and "x = self.linear2(x)" in torch_part
    assert "linear2#0:args[0]" in out  # the first differing value: linear2's input (the residual)
    d = result.first_divergence
    assert d is not None and d.located.a.first.module == "linear2" and d.located.b.first.module == "linear2"


def test_planted_bug_reported_by_the_cli_on_the_traces_left_behind(planted: tuple[Any, str, Path]) -> None:
    result, _, cwd = planted
    cmd = result.compare_command()
    assert cmd[:2] == ["padiff-trace", "compare"]
    proc = subprocess.run([sys.executable, "-m", "padiff_trace", *cmd[1:]], capture_output=True, text=True, cwd=cwd, timeout=300)
    assert proc.returncode == 1, proc.stderr
    line_a, line_b = lines_of(EXAMPLES / "case1_planted_bug.py", "x = self.linear2(x)")
    assert "DIVERGED" in proc.stdout
    assert f"case1_planted_bug.py:{line_a}" in proc.stdout and f"case1_planted_bug.py:{line_b}" in proc.stdout


def test_planted_bug_in_a_notebook(planted: tuple[Any, str, Path]) -> None:
    result, _, _ = planted
    report = result.report
    assert repr(report) == report.summary_text()
    page = report._repr_html_()
    assert "DIVERGED" in page and "First divergence" in page
    line_a, line_b = lines_of(EXAMPLES / "case1_planted_bug.py", "x = self.linear2(x)")
    assert "linear2#0:args[0]" in page  # the first differing value, with both sides' lines
    assert f"case1_planted_bug.py:{line_a}" in page and f"case1_planted_bug.py:{line_b}" in page
    assert result._repr_html_() == page
    a, b = result.divergence_arrays()
    assert isinstance(a, np.ndarray) and a.shape == b.shape
    assert not np.allclose(a, b, atol=1e-4)


# ---------------------------------------------------------------- forms and modes


def _tiny(seed: int = 0) -> tuple[Any, Any, tuple[Any, Any]]:
    import paddle
    import torch

    paddle.seed(seed)
    layer = paddle.nn.Sequential(paddle.nn.Linear(8, 16), paddle.nn.Tanh(), paddle.nn.Linear(16, 4))
    module = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    x = np.random.default_rng(seed).standard_normal((3, 8)).astype("float32")
    return layer, module, ({"input": paddle.to_tensor(x)}, {"input": torch.as_tensor(x)})


def test_either_order_two_directories_single_step_and_forward_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from padiff_trace import auto_diff

    monkeypatch.chdir(tmp_path)
    layer, module, (p_in, t_in) = _tiny()
    first = auto_diff(layer, module, (p_in, t_in))
    # torch first (PaDiff 0.3 order), inputs given paddle first: matched by their tensors' type
    second = auto_diff(module, layer, (p_in, t_in), options={"compare_mode": "strict", "atol": 1e-5})
    assert first and second and first.frameworks == ("paddle", "torch") and second.frameworks == ("torch", "paddle")
    assert first.directory != second.directory and first.directory.is_dir() and second.directory.is_dir()
    assert second.trace_a.name == "torch.trace"
    # PaDiff 0.3's documented call: keyword options, base model first, inputs in the models' order
    third = auto_diff(module, layer, (t_in, p_in), atol=1e-4, rtol=0, auto_init=True, compare_mode="strict", single_step=False,
                      loss_fns=[lambda out: (out**2).mean(), lambda out: (out**2).mean()], out=tmp_path / "v03")
    assert third and third.settings.mode == "strict" and third.settings.atol == 1e-4
    single = auto_diff(layer, module, (p_in, t_in), single_step=True, out=tmp_path / "ss")
    assert single and single.trace_b.name == "torch-single-step.trace" and single.directory == tmp_path / "ss"
    fwd = auto_diff(layer, module, (p_in, t_in), options={"diff_phase": "forward"})
    assert fwd and not [p for p in fwd.report.pairs if p.role in ("grad_output", "param_grad")]
    assert len(run_dirs(tmp_path)) == 3  # plus the named out=
    assert capsys.readouterr().out.count(PASSED) == 5
    with pytest.raises(UserError, match="exists and is not empty"):
        auto_diff(layer, module, (p_in, t_in), out=tmp_path / "ss")


def test_layer_map_ignore_and_auto(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PaDiff 0.2 LayerMap.md scenario 2: a pass-through layer on one side only, ignored."""
    import paddle
    import torch

    from padiff_trace import LayerMap, auto_diff

    class NOPLayer(paddle.nn.Layer):
        def forward(self, x):  # type: ignore[no-untyped-def]
            return x

    class SimpleLayer4(paddle.nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.nop = NOPLayer()
            self.linear = paddle.nn.Linear(100, 10)

        def forward(self, x):  # type: ignore[no-untyped-def]
            return self.linear(self.nop(x))

    monkeypatch.chdir(tmp_path)
    layer, module = SimpleLayer4(), torch.nn.Sequential()
    module.add_module("linear", torch.nn.Linear(100, 10))
    x = np.random.default_rng(1).random((100, 100), dtype=np.float32)
    layer_map = LayerMap()
    layer_map.ignore(layer.nop)
    result = auto_diff(layer, module, ({"x": paddle.to_tensor(x)}, {"input": torch.as_tensor(x)}), layer_map=layer_map,
                       options={"atol": 1e-4})
    assert result
    from padiff_trace import open_trace

    with open_trace(result.trace_a) as tr:
        assert not tr.select(module="nop") and tr.select(module="linear")

    mha = LayerMap()
    p_attn = paddle.nn.Sequential(paddle.nn.MultiHeadAttention(16, 2))
    t_attn = torch.nn.Sequential(torch.nn.MultiheadAttention(16, 2, batch_first=True))
    mha.auto(p_attn, t_attn)
    assert list(mha.map.items()) == [(p_attn[0], t_attn[0])]
    with pytest.raises(UserError, match=r"LayerMap\.auto: 1 such layers"):
        LayerMap().auto(p_attn, torch.nn.Sequential())
