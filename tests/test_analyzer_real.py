"""analyzer on traces recorded from real paddle and torch models, each in its own process
(``padiff-trace run`` replays paddle's inputs and weights into torch)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from padiff_trace import analyzer

pytest.importorskip("h5py")

PADDLE = '''
import numpy as np
import paddle

class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(16, 32)
        self.norm = paddle.nn.LayerNorm(32, epsilon=1e-5)
        self.act = paddle.nn.GELU()
        self.fc2 = paddle.nn.Linear(32, 16)

    def forward(self, x):
        h = self.fc1(x)
        h = self.norm(h)
        h = self.act(h)
        h = self.fc2(h)
        return x + h

class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = paddle.nn.LayerList([Block(), Block()])
        self.head = paddle.nn.Linear(16, 4)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)

def model():
    paddle.seed(0)
    return Net()

def inputs():
    x = np.random.default_rng(0).standard_normal((4, 16)).astype("float32")
    return (paddle.to_tensor(x),)
'''

TORCH = '''
import numpy as np
import torch

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.norm = torch.nn.LayerNorm(32, eps=1e-5)
        self.act = torch.nn.GELU(approximate=GELU_MODE)
        self.fc2 = torch.nn.Linear(32, 16)
        self.drop = torch.nn.Dropout(0.0)

    def forward(self, x):
        h = self.fc1(x)
        h = self.norm(h)
        h = self.act(h)
        h = self.drop(self.fc2(h))
        return RESIDUAL

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)

def model():
    return Net()

def inputs():
    return (torch.zeros(4, 16),)
'''


def _run(tmp_path: Path, gelu: str = "none", residual: str = "x + h") -> Path:
    (tmp_path / "net_p.py").write_text(textwrap.dedent(PADDLE))
    src = TORCH.replace("GELU_MODE", repr(gelu)).replace("RESIDUAL", residual)
    (tmp_path / "net_t.py").write_text(textwrap.dedent(src))
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "padiff_trace", "run", str(tmp_path / "net_p.py"), str(tmp_path / "net_t.py"),
         "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return out


def _traces(out: Path) -> tuple[Path, Path]:
    return out / "net_p.trace", out / "net_t.trace"


def test_real_noise_only_pair_passes(tmp_path: Path) -> None:
    a, b = _traces(_run(tmp_path))
    r = analyzer.compare(a, b)
    assert r.exit_code == 0, r.summary_text()
    # the extra (torch-only) Dropout calls stay unpaired; everything else pairs by order
    assert sorted(c.module for c in r.alignment.unpaired_b) == ["blocks.0.drop", "blocks.1.drop"]
    assert not r.alignment.unpaired_a
    assert any(p.role == "param_grad" for p in r.pairs) and any(p.role == "grad_output" for p in r.pairs)


@pytest.mark.parametrize(
    "kw,module,line_t",
    [
        ({"gelu": "tanh"}, "blocks.0.act", "h = self.act(h)"),
        ({"residual": "h"}, "blocks.0", "x = b(x)"),
    ],
)
def test_real_planted_bug_localized(tmp_path: Path, kw: dict[str, str], module: str, line_t: str) -> None:
    a, b = _traces(_run(tmp_path, **kw))
    r = analyzer.compare(a, b)
    assert r.exit_code == 1
    d = r.first_divergence
    assert d is not None and d.pair.role == "output", r.summary_text()
    assert d.pair.a.module == module and d.pair.b.module == module, r.summary_text()
    fa, fb = d.pair.a.stack[-1], d.pair.b.stack[-1]
    assert fa.file.endswith("net_p.py") and fb.file.endswith("net_t.py")
    assert fb.source.strip() == line_t
    src_p = (tmp_path / "net_p.py").read_text().splitlines()
    assert src_p[fa.line - 1].strip() == fa.source.strip()
    doc = json.loads(json.dumps(r.to_dict(), default=str))
    assert doc["amplifiers"][0]["a"].startswith(module)
