"""The numerics environment of a recording (trace meta ``numerics``) and ``compare`` naming the
differences first: real ``python -m padiff_trace record`` / ``compare`` processes on small torch
and paddle spec files, recorded under different thread counts, kernel flags and TF32 settings.

What is recorded is curated (``padiff_trace.matching.NUMERICS_EFFECTS``): no secret from the
environment reaches a trace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from padiff_trace import open_trace
from padiff_trace.matching import numerics_effect

TORCH_SPEC = """import torch
{pre}
class Linear(torch.nn.Linear):  # a Linear by type; SCALE perturbs its output
    def forward(self, x):
        return super().forward(x) * {scale}
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = Linear(8, 4)
        self.act = torch.nn.Tanh()
    def forward(self, x):
        return self.act(self.fc(x))
def model():
    torch.manual_seed(0)
    return Net()
def inputs():
    torch.manual_seed(1)
    return (torch.randn(3, 8),)
"""

PADDLE_SPEC = """import paddle
def model():
    paddle.seed(0)
    return paddle.nn.Sequential(paddle.nn.Linear(8, 4), paddle.nn.Tanh())
def inputs():
    paddle.seed(1)
    return (paddle.randn([3, 8]),)
"""

# variables this module sets itself: the recordings see only the values a test gives them
_CURATED = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "FLAGS_use_mkldnn", "FLAGS_use_onednn", "NVIDIA_TF32_OVERRIDE")


def _spec(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _torch(tmp_path: Path, name: str, pre: str = "", scale: str = "1.0") -> Path:
    return _spec(tmp_path, name, TORCH_SPEC.format(pre=pre, scale=scale))


def _env(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _CURATED}
    env.update(changes)
    return env


def _record(spec: Path, out: Path, **env: str) -> Path:
    argv = [sys.executable, "-m", "padiff_trace", "record", str(spec), "--out", str(out), "--force"]
    r = subprocess.run(argv, capture_output=True, text=True, cwd=spec.parent, env=_env(**env), timeout=300)
    assert r.returncode == 0, r.stderr
    return out


def _compare(a: Path, b: Path, report: Path, *extra: str) -> tuple[str, dict[str, Any], str]:
    argv = [sys.executable, "-m", "padiff_trace", "compare", str(a), str(b), "--report", str(report), *extra]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=_env())
    assert r.returncode in (0, 1), r.stderr
    return ((report / "report.txt").read_text(), json.loads((report / "report.json").read_text()),
            (report / "report.html").read_text())


def _numerics(trace: Path) -> dict[str, Any]:
    with open_trace(trace) as t:
        return dict(t.meta["numerics"])


def _first_finding_line(txt: str) -> str:
    """The first line of report.txt after the summary's header (verdict, traces, pairs, calls)."""
    lines = txt.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  calls:"))
    return lines[at + 1]


def _assert_named_first(txt: str, js: dict[str, Any], html: str, key: str, label: str) -> dict[str, Any]:
    assert _first_finding_line(txt).startswith("  environment differences that can change numbers"), txt
    assert label.split(maxsplit=1)[0] in txt.split("First divergence", maxsplit=1)[0]
    entry = next(e for e in js["environment"] if e["key"] == key)
    assert entry["label"] == label and entry["effect"] and entry["a"] != entry["b"]
    assert js["diagnosis"][0]["code"] == "environment_difference" and js["diagnosis"][0]["topic"] == "comparison"
    box = html.index('class="environment"')
    assert box < html.index("<h2>Error along the model</h2>")
    assert label.replace("'", "&#x27;") in html[box:]
    return entry


def _every_key_is_described(numerics: dict[str, Any]) -> None:
    unknown = [k for k in numerics if numerics_effect(k) is None]
    assert not unknown, f"recorded settings missing from NUMERICS_EFFECTS: {unknown}"


def test_torch_thread_counts_are_named_first(tmp_path: Path) -> None:
    spec = _torch(tmp_path, "net.py")
    a = _record(spec, tmp_path / "a.trace", OMP_NUM_THREADS="1")
    b = _record(spec, tmp_path / "b.trace", OMP_NUM_THREADS="2")
    na, nb = _numerics(a), _numerics(b)
    assert (na["torch.num_threads"], nb["torch.num_threads"]) == (1, 2)
    assert (na["env.OMP_NUM_THREADS"], nb["env.OMP_NUM_THREADS"]) == ("1", "2")
    for key in ("torch.version", "torch.matmul_allow_tf32", "torch.cudnn_allow_tf32", "torch.float32_matmul_precision",
                "torch.deterministic_algorithms", "torch.num_interop_threads", "torch.mkldnn_enabled"):
        assert key in na, key
    _every_key_is_described(na)
    txt, js, html = _compare(a, b, tmp_path / "report")
    entry = _assert_named_first(txt, js, html, "torch.num_threads", "intra-op threads (torch.get_num_threads())")
    assert (entry["a"], entry["b"]) == (1, 2) and "order" in entry["effect"] and entry["switch"]
    assert {e["key"] for e in js["environment"]} == {"torch.num_threads", "env.OMP_NUM_THREADS"}


def test_paddle_kernel_flag_is_named_first(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "net.py", PADDLE_SPEC)
    a = _record(spec, tmp_path / "a.trace", FLAGS_use_mkldnn="0")
    b = _record(spec, tmp_path / "b.trace", FLAGS_use_mkldnn="1")
    na, nb = _numerics(a), _numerics(b)
    assert (na["paddle.FLAGS_use_mkldnn"], nb["paddle.FLAGS_use_mkldnn"]) == (False, True)
    assert "paddle.version" in na and "paddle.onednn" in na
    _every_key_is_described(na)
    txt, js, html = _compare(a, b, tmp_path / "report")
    entry = _assert_named_first(txt, js, html, "paddle.FLAGS_use_mkldnn", "oneDNN kernels (FLAGS_use_mkldnn)")
    assert (entry["a"], entry["b"]) == (False, True) and "FLAGS_use_mkldnn" in entry["switch"]
    assert any(e["key"] == "env.FLAGS_use_mkldnn" and e["label"].startswith("FLAGS_use_mkldnn") for e in js["environment"])


def test_no_secret_reaches_a_trace(tmp_path: Path) -> None:
    secrets = {"PADIFF_TEST_SECRET_TOKEN": "ghp_" + "x7Q" * 12, "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9"}
    long_flag = "FLAGS_padiff_test_long_value"
    spec = _torch(tmp_path, "net.py")
    out = _record(spec, tmp_path / "a.trace", OMP_NUM_THREADS="1", **secrets, **{long_flag: "y" * 500})
    blobs = [p.read_bytes() for p in out.rglob("*") if p.is_file()]
    assert blobs
    for value in (*secrets.values(), "y" * 201):
        assert not any(value.encode() in blob for blob in blobs), f"{value[:6]}... is in the trace"
    numerics = _numerics(out)
    assert numerics["env.OMP_NUM_THREADS"] == "1"  # the curated variables are recorded
    assert f"env.{long_flag}" not in numerics  # a value over 200 characters is not
    assert not [k for k in numerics if "SECRET" in k or "AWS" in k]


def test_tf32_setting_is_named_even_on_cpu(tmp_path: Path) -> None:
    a = _record(_torch(tmp_path, "tf32.py", pre="torch.backends.cuda.matmul.allow_tf32 = True"), tmp_path / "a.trace")
    b = _record(_torch(tmp_path, "plain.py"), tmp_path / "b.trace")
    assert (_numerics(a)["torch.matmul_allow_tf32"], _numerics(b)["torch.matmul_allow_tf32"]) == (True, False)
    txt, js, html = _compare(a, b, tmp_path / "report")
    entry = _assert_named_first(txt, js, html, "torch.matmul_allow_tf32",
                                "TF32 in CUDA matmuls (torch.backends.cuda.matmul.allow_tf32)")
    assert entry["no_effect_here"] and "10-bit mantissa" in entry["effect"] and "NVIDIA_TF32_OVERRIDE=0" in entry["switch"]
    assert "no effect here" in txt
    assert not [f for f in js["diagnosis"] if f["code"] == "environment_explains"]  # inert on CPU: explains nothing


def test_identical_environments_have_no_environment_finding(tmp_path: Path) -> None:
    spec = _torch(tmp_path, "net.py")
    a = _record(spec, tmp_path / "a.trace", OMP_NUM_THREADS="2")
    b = _record(spec, tmp_path / "b.trace", OMP_NUM_THREADS="2")
    txt, js, html = _compare(a, b, tmp_path / "report")
    assert js["environment"] == []
    assert not [f for f in js["diagnosis"] if f["code"].startswith("environment")]
    assert "environment differences" not in txt and 'class="environment"' not in html


def test_paddle_against_torch_in_one_environment_has_no_environment_finding(tmp_path: Path) -> None:
    """Paddle sets OMP_NUM_THREADS=1 itself on import; against a torch trace that is its default,
    not a difference, and the frameworks' own settings are not compared across frameworks."""
    p = _record(_spec(tmp_path, "p.py", PADDLE_SPEC), tmp_path / "p.trace")
    t = _record(_torch(tmp_path, "t.py"), tmp_path / "t.trace")
    assert _numerics(p).get("env.OMP_NUM_THREADS") == "1" and "env.OMP_NUM_THREADS" not in _numerics(t)
    _, js, _ = _compare(p, t, tmp_path / "report")
    assert js["environment"] == []


@pytest.mark.parametrize(("scale", "code"), [("(1.0 + 3e-6)", "environment_explains"), ("1.5", "environment_ruled_out")])
def test_a_setting_acting_on_the_divergent_op_explains_it_or_is_ruled_out(tmp_path: Path, scale: str, code: str) -> None:
    a = _record(_torch(tmp_path, "a.py"), tmp_path / "a.trace", OMP_NUM_THREADS="1")
    b = _record(_torch(tmp_path, "b.py", scale=scale), tmp_path / "b.trace", OMP_NUM_THREADS="2")
    txt, js, _ = _compare(a, b, tmp_path / "report", "--mode", "strict", "--atol", "0", "--rtol", "1e-7")
    assert js["verdict"] == "diverged"
    found = [f for f in js["diagnosis"] if f["code"].startswith("environment_") and f["topic"] == "first_divergence"]
    assert found and found[0]["code"] == code, js["diagnosis"]
    assert "Linear" in found[0]["text"] and "threads" in found[0]["text"]
    if code == "environment_explains":
        assert found[0]["hint"] and "set_num_threads" in found[0]["text"] + txt
