"""Memory properties (issue 5), measured in subprocesses by their own peak RSS (VmHWM).

* the analyzer's peak stays flat as traces grow: bounded by the largest tensor, not the trace;
* replaying weights from a trace does not hold the model twice.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from padiff_trace import Kind, Phase, RecordHeader, TraceWriter

MB = 2**20
PEAK = "print('PEAK', [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM')][0] // 1024)"


def _peak_mb(code: str) -> int:
    out = subprocess.run([sys.executable, "-c", code + "\n" + PEAK], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return int(out.stdout.split("PEAK")[-1].strip())


def _trace(path: Path, n: int, framework: str, noise: float) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(4 * MB // 4 * 4, dtype=np.float32)  # 16 MiB tensors
    with TraceWriter(path, {"framework": framework}) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]"), x[:16])
        for i in range(n):
            y = x + np.float32(i) + np.float32(noise)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, f"l{i}", "Linear", i + 1, 0, 0, "out"), y)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out"), x[:16])


def test_analyzer_peak_is_flat_in_trace_size(tmp_path: Path) -> None:
    sizes = {"small": 6, "large": 30}  # 96 MiB vs 480 MiB per trace, same 16 MiB largest tensor
    peaks = {}
    for name, n in sizes.items():
        _trace(tmp_path / name / "a", n, "paddle", 0.0)
        _trace(tmp_path / name / "b", n, "torch", 1e-3)
        code = f"import analyzer\nr = analyzer.compare({str(tmp_path / name / 'a')!r}, {str(tmp_path / name / 'b')!r}, quiet=True)\nassert r.exit_code == 1"
        peaks[name] = _peak_mb(code)
    base = _peak_mb("import analyzer, h5py, numpy")
    assert peaks["large"] - peaks["small"] < 40, peaks  # flat: 5x the data, same peak
    assert peaks["large"] - base < 2 * 16 * 2 + 150, (peaks, base)  # a few chunks of the largest tensor


def test_weight_replay_does_not_hold_the_model_twice(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    model = (
        "import torch\n"
        "torch.manual_seed(0)\n"
        "m = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(12)])\n"  # 192 MiB of weights
    )
    trace = tmp_path / "w.trace"
    record = model + f"import recorder\nwith recorder.record(m, {str(trace)!r}, weights='start'):\n    pass\n"
    subprocess.run([sys.executable, "-c", record], check=True, timeout=600)
    bare = _peak_mb(model)
    replay = _peak_mb(
        model + "from recorder._replay import transfer_weights\nfrom recorder import torch_\n"
        f"n = transfer_weights(torch_.make_adapter(), m, {str(trace)!r})\nassert sum(p.transfer for p in n.pairs) == 24\n"
    )
    assert replay - bare < 96, (bare, replay)  # << 192 MiB: one tensor at a time, not a second model
