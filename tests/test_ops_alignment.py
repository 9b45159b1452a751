"""Op-level alignment across frameworks (issue 8), recorded in separate processes.

The specs in tests/op_models write seed 001's reformer-style attention (scale,
matmul, where, logsumexp, exp, matmul) with paddle and with torch ops; PADIFF_BUG
plants a bug inside the torch forward.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from padiff_trace.analyzer.alignment._ops import canonical_op

from padiff_trace import analyzer

MODELS = Path(__file__).parent / "op_models"
SPEC_A, SPEC_B = MODELS / "attn_paddle.py", MODELS / "attn_torch.py"


def _line(path: Path, marker: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if marker in text)


def _run(out: Path, bug: str) -> analyzer.Report:
    env = dict(os.environ, PADIFF_BUG=bug)
    cmd = [sys.executable, "-m", "padiff_trace", "run", str(SPEC_A), str(SPEC_B), "--out", str(out), "--ops"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return analyzer.compare(out / "attn_paddle.trace", out / "attn_torch.trace", quiet=True)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, analyzer.Report]:
    base = tmp_path_factory.mktemp("ops")
    return {bug or "none": _run(base / (bug or "none"), bug) for bug in ("", "scale", "mask", "axis")}


def test_reformer_sequence_aligned_one_to_one(reports: dict[str, analyzer.Report]) -> None:
    r = reports["none"]
    outs = [p for p in r.pairs if p.role == "op_output" and p.step == 0]
    seq = [canonical_op(p.a.module_type) for p in outs]
    assert seq == ["sqrt", "div", "matmul", "where", "logsumexp", "sub", "exp", "matmul"]
    assert [canonical_op(p.b.module_type) for p in outs] == seq
    markers = {"div": "OP-SCALE", "where": "OP-WHERE", "logsumexp": "OP-LSE", "exp": "OP-EXP"}
    for p in outs:
        marker = markers.get(canonical_op(p.a.module_type))
        if marker:
            assert p.a.stack[-1].line == _line(SPEC_A, marker)
            assert p.b.stack[-1].line == _line(SPEC_B, marker)
    assert all(p.passed for p in r.pairs if p.role.startswith("op_") and "grad" not in p.role)
    assert any(p.role == "op_grad_output" for p in r.pairs)


@pytest.mark.parametrize(
    ("bug", "op", "marker"),
    [("scale", "sqrt", "OP-SCALE"), ("mask", "where", "OP-WHERE"), ("axis", "logsumexp", "OP-LSE")],
)
def test_planted_bug_localized_to_op_and_line(reports: dict[str, analyzer.Report], bug: str, op: str, marker: str) -> None:
    d = reports[bug].first_divergence
    assert d is not None
    p = d.pair
    assert p.role.startswith("op_"), p.role
    assert canonical_op(p.a.module_type) == op and canonical_op(p.b.module_type) == op
    assert p.a.stack[-1].line == _line(SPEC_A, marker)
    assert p.b.stack[-1].line == _line(SPEC_B, marker)
    text = reports[bug].summary_text()
    assert f"op {p.a.module_type}" in text or f"divergent op is {p.a.module_type}" in text


def test_mapping_file_extends_the_op_table(tmp_path: Path) -> None:
    """An op name unknown to the table pairs through the mapping file's ``ops`` section."""
    import numpy as np
    from padiff_trace.analyzer import load_mapping
    from padiff_trace.analyzer.alignment._ops import collect_ops, pair_ops

    from padiff_trace import Kind, Phase, RecordHeader, TraceWriter, open_trace

    x = np.ones((2, 3), dtype=np.float32)
    for name, op in (("a", "truediv"), ("b", "my_fused_scale")):
        with TraceWriter(tmp_path / name) as w:
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, "", "Net", 0, -1, 0, "args[0]"), x)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.OP_OUTPUT, "", op, 1, 0, 0, "out"), x / 2)
    m = tmp_path / "map.json"
    m.write_text('{"version": 1, "ops": {"my_fused_scale": "div"}}')
    mapping = load_mapping(m)
    assert mapping.ops == {"my_fused_scale": "div"} and mapping.entries == ()
    with open_trace(tmp_path / "a") as ta, open_trace(tmp_path / "b") as tb:
        ops_a, ops_b = collect_ops(ta)[0], collect_ops(tb)[0]
        assert pair_ops(ops_a, ops_b) == []
        assert [(x.name, y.name) for x, y in pair_ops(ops_a, ops_b, mapping.ops)] == [("truediv", "my_fused_scale")]
