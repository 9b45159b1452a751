"""analyzer on real paddle/torch recordings with planted porting bugs, each model in its own process.

Models: tests/analyzer_models/. ``block_paddle.py`` is recorded once; every torch variant of
``block_torch.py`` (PADIFF_BUG=...) is recorded with ``--inputs-from/--weights-from`` it.
Each bug must be reported at the exact module (block 1, not block 0) with the call site
(file:line and source) on both sides. The MHA test records a built-in TransformerEncoder pair
with ``padiff-trace run``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from padiff_trace.analyzer.alignment._slices import RowSlice

from padiff_trace import Kind, analyzer, open_trace

pytest.importorskip("h5py")

MODELS = Path(__file__).parent / "analyzer_models"


def _cli(*argv: str, env: dict[str, str] | None = None) -> None:
    e = dict(os.environ)
    e.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "padiff_trace", *argv], capture_output=True, text=True, env=e, timeout=600
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]


@pytest.fixture(scope="module")
def ref(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("paddle") / "p.trace"
    _cli("record", str(MODELS / "block_paddle.py"), "--out", str(out))
    return out


def _torch(ref: Path, bug: str) -> Path:
    out = ref.parent / f"{bug or 'clean'}.trace"
    if not out.exists():
        _cli("record", str(MODELS / "block_torch.py"), "--out", str(out), "--inputs-from", str(ref),
             "--weights-from", str(ref), env={"PADIFF_BUG": bug})
    return out


def _line(path: Path, lineno: int) -> str:
    return path.read_text().splitlines()[lineno - 1].strip()


def test_clean_port_aligned(ref: Path) -> None:
    r = analyzer.compare(ref, _torch(ref, ""))
    assert r.exit_code == 0, r.summary_text()
    assert not r.alignment.unpaired_a and not r.alignment.unpaired_b
    assert {p.role for p in r.pairs} >= {"output", "grad_output", "param", "param_grad", "loss"}


@pytest.mark.parametrize(
    "bug,role,module,src_p,src_t",
    [
        ("eps", "output", "blocks.1.norm0", "h = self.norm0(x * 0.01)", "h = self.norm0(x * 0.01)"),
        ("transpose", "input", "blocks.1.attn.o", "return self.o(out)", "return self.out(out) if RENAMED else self.o(out)"),
        ("scale", "input", "blocks.1.attn.softmax", "p = self.softmax(scores)", "p = self.softmax(scores)"),
        ("mask", "input", "blocks.1.attn.softmax", "p = self.softmax(scores)", "p = self.softmax(scores)"),
        ("dropout", "output", "blocks.1.drop", "return h + self.drop(f)", "return h + self.drop(f)"),
        ("grad", "grad_output", "blocks.1.fc2", "f = self.fc2(self.act(self.fc1(self.norm1(h))))",
         "f = self.fc2(self.act(self.fc1(self.norm1(h))))"),
    ],
)
def test_planted_bug_localized(ref: Path, bug: str, role: str, module: str, src_p: str, src_t: str) -> None:
    r = analyzer.compare(ref, _torch(ref, bug))
    assert r.exit_code == 1, r.summary_text()
    d = r.first_divergence
    assert d is not None, r.summary_text()
    p = d.pair
    assert (p.role, p.a.module, p.b.module) == (role, module, module), r.summary_text()
    fa, fb = p.a.stack[-1], p.b.stack[-1]
    assert fa.file.endswith("block_paddle.py") and fb.file.endswith("block_torch.py"), (fa, fb)
    assert (fa.source.strip(), fb.source.strip()) == (src_p, src_t)
    # the line numbers point at that source in the spec files
    assert _line(MODELS / "block_paddle.py", fa.line) == src_p
    assert _line(MODELS / "block_torch.py", fb.line) == src_t
    # block 0 is identical on both sides: nothing there fails
    assert not [x for x in r.failed if x.a.module.startswith("blocks.0.") and x.role in ("input", "output")]
    if bug == "grad":  # a backward-only bug: the forward pass matches everywhere
        assert not [x for x in r.failed if x.role in ("input", "output", "model_input", "loss")], r.summary_text()


def test_type_difference_is_the_first_divergence(ref: Path) -> None:
    """torch block 1 uses ReLU where paddle uses GELU: paired in its slot and named as the cause."""
    r = analyzer.compare(ref, _torch(ref, "act"))
    assert r.exit_code == 1
    d = r.first_divergence
    assert d is not None and (d.pair.role, d.pair.a.module, d.pair.b.module) == ("output", "blocks.1.act", "blocks.1.act")
    assert d.type_difference == ("GELU", "ReLU") and not d.inputs_failed, r.summary_text()
    assert "type difference: A GELU vs B ReLU" in r.summary_text()
    assert not r.alignment.unpaired_a and not r.alignment.unpaired_b
    assert [(p.a.module, p.how) for p in r.alignment.type_differences] == [("blocks.1.act", "type")]


def test_different_trees_align_without_mapping(ref: Path) -> None:
    """torch: fc1 nested in a Sequential, functional GELU, an extra Identity, no Dropout module."""
    r = analyzer.compare(ref, _torch(ref, "tree"))
    assert r.exit_code == 0, r.summary_text()
    only_a = sorted(c.module for c in r.alignment.unpaired_a)
    only_b = sorted(c.module for c in r.alignment.unpaired_b)
    assert only_a == ["blocks.0.act", "blocks.0.drop", "blocks.1.act", "blocks.1.drop"]
    assert only_b == ["blocks.0.extra", "blocks.0.ffn_in", "blocks.1.extra", "blocks.1.ffn_in"]
    pairs = {p.a.module: p.b.module for p in r.alignment.pairs}
    assert pairs["blocks.1.fc1"] == "blocks.1.ffn_in.0" and pairs["blocks.1.fc2"] == "blocks.1.fc2"
    weights = [x for x in r.pairs if x.role == "param" and x.step == 0]
    assert len(weights) == 2 * 16 and all(x.passed for x in weights)


def test_renamed_reordered_with_wildcard_mapping(ref: Path) -> None:
    """torch: blocks -> layers, q/k/v/o -> query/key/value/out, value projected before query and key."""
    b = _torch(ref, "renamed")
    mapping = MODELS / "renamed_map.json"
    for a_path, b_path in ((ref, b), (b, ref)):
        r = analyzer.compare(a_path, b_path, mapping=mapping)
        assert r.exit_code == 0, r.summary_text()
    r = analyzer.compare(ref, b, mapping=mapping)
    pairs = {p.a.module: (p.b.module, p.how) for p in r.alignment.pairs}
    for i in (0, 1):
        for mine, theirs in (("q", "query"), ("k", "key"), ("v", "value"), ("o", "out")):
            assert pairs[f"blocks.{i}.attn.{mine}"] == (f"layers.{i}.attn.{theirs}", "mapping")
    weights = [x for x in r.pairs if x.role == "param" and x.step == 0]
    assert len(weights) == 2 * 16 and all(x.passed for x in weights)
    assert not r.to_dict()["unpaired"]["weights_a"] and not r.to_dict()["unpaired"]["weights_b"]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("enc") / "run"
    _cli("run", str(MODELS / "encoder_paddle.py"), str(MODELS / "encoder_torch.py"), "--out", str(out))
    return out / "encoder_paddle.trace", out / "encoder_torch.trace"


@pytest.mark.parametrize("swap", [False, True])
def test_mha_packed_weights_pair_with_qkv(encoder: tuple[Path, Path], swap: bool) -> None:
    a, b = encoder[::-1] if swap else encoder
    r = analyzer.compare(a, b)
    assert r.exit_code == 0, r.summary_text()
    un = r.to_dict()["unpaired"]
    assert un["weights_a"] == [] and un["weights_b"] == [], un
    step0 = [p for p in r.pairs if p.role == "param" and p.step == 0]
    assert step0 and all(p.passed and p.metrics is not None and p.metrics.max_abs == 0.0 for p in step0)
    packed = {}
    for p in step0:
        pt, pp = (p.a, p.b) if swap else (p.b, p.a)
        if isinstance(pt, RowSlice):
            packed[(pp.module, pp.position)] = (pt.module, pt.position, p.perm)
    for i in (0, 1):
        m = f"layers.{i}.self_attn"
        for k, proj in enumerate(("q_proj", "k_proj", "v_proj")):
            rows = f"[{16 * k}:{16 * (k + 1)}]"
            assert packed[(f"{m}.{proj}", "weight")] == (m, f"in_proj_weight{rows}", (1, 0))
            assert packed[(f"{m}.{proj}", "bias")] == (m, f"in_proj_bias{rows}", None)
    grads = [p for p in r.pairs if p.role == "param_grad" and isinstance(p.b if not swap else p.a, RowSlice)]
    assert len(grads) == 2 * 6 and all(p.passed for p in grads)
    # out_proj (torch NonDynamicallyQuantizableLinear, never called) pairs as a transposed Linear
    outp = [p for p in step0 if p.a.module.endswith("out_proj") and p.a.position == "weight"]
    assert len(outp) == 2 and all(p.perm == (1, 0) for p in outp)


def test_row_slice_reads_its_rows(encoder: tuple[Path, Path]) -> None:
    t = open_trace(encoder[1])
    rec = t.select(module="layers.0.self_attn", kind=Kind.PARAM, step=0)
    w = next(r for r in rec if r.position == "in_proj_weight")
    full = w.read()
    s = RowSlice(w, 16, 32)
    assert s.shape == (16, 16) and s.numel == 256
    np.testing.assert_array_equal(s.read(), full[16:32])
    np.testing.assert_allclose(s.stats["l2"], np.linalg.norm(full[16:32].astype(np.float64)), rtol=1e-12)


def test_tiny_gradients_are_noise_when_forward_matches(tmp_path: Path) -> None:
    """loss = mean of a LayerNorm output: every gradient is ~0 (rounding noise, ~1e-9)."""
    out = tmp_path / "run"
    _cli("run", str(MODELS / "encoder_paddle.py"), str(MODELS / "encoder_torch.py"), "--out", str(out),
         env={"PADIFF_LOSS": "mean"})
    a, b = out / "encoder_paddle.trace", out / "encoder_torch.trace"
    r = analyzer.compare(a, b)
    grads = [p for p in r.pairs if p.role in ("grad_output", "param_grad") and p.metrics is not None]
    tiny = [p for p in grads if p.metrics.norm_b / np.sqrt(p.metrics.n) < 1e-6]
    assert len(tiny) >= 10  # the situation under test
    assert r.exit_code == 0, r.summary_text()
    # the classic tolerances call some of them failures: the noise floor is what passes them
    strict = analyzer.compare(a, b, atol=1e-9, rtol=1e-5)
    assert any(not p.passed for p in strict.pairs if p.role in ("grad_output", "param_grad"))
    assert all(p.passed for p in strict.pairs if p.role in ("output", "input", "param"))


@pytest.mark.parametrize("n,shape,perm", [(1000, None, None), ((1 << 21) + 77, None, None), (2053 * 1024, (2053, 1024), (1, 0))])
def test_fused_metrics_equal_plain_float64(tmp_path: Path, n: int, shape: tuple[int, ...] | None,
                                           perm: tuple[int, ...] | None) -> None:
    """The blocked, two-worker kernel gives the textbook float64 formulas (NaN/Inf excluded)."""
    from padiff_trace.analyzer.judging._metrics import Tolerance, measure

    from padiff_trace import Phase, RecordHeader, TraceWriter

    rng = np.random.default_rng(1)
    shp = shape or (n,)
    b = rng.standard_normal(shp).astype(np.float32)
    a = b + (rng.standard_normal(shp) * 1e-4).astype(np.float32)
    a.reshape(-1)[5] = np.nan
    a.reshape(-1)[7] = b.reshape(-1)[7] = np.inf
    stored_a = np.ascontiguousarray(a.transpose(perm)) if perm else a
    recs = []
    for side, arr in (("a", stored_a), ("b", b)):
        with TraceWriter(tmp_path / side, meta={"framework": "paddle"}) as w:
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "m", "Linear", 1, 0, 0, "out"), arr)
        recs.append(next(iter(open_trace(tmp_path / side).records())))
    tol = Tolerance(1e-5, 1e-4, "strict")
    m = measure(recs[0], recs[1], tol, perm)
    x, y = a.astype(np.float64).reshape(-1), b.astype(np.float64).reshape(-1)
    bad = ~(np.isfinite(x) & np.isfinite(y))
    x[bad] = y[bad] = 0.0
    d, ab = np.abs(x - y), np.abs(y)
    rel = d / (ab + np.finfo(np.float32).tiny)
    assert (m.nan_mismatch, m.inf_mismatch, m.nan_a, m.inf_a, m.inf_b) == (1, 0, 1, 1, 1)
    assert m.max_abs == d.max() and np.ravel_multi_index(m.argmax, shp) == d.argmax()
    assert m.max_rel == rel.max()
    got = [m.mean_abs, m.mean_abs_b, m.mean_rel, m.rel_l2, m.cosine, m.frac_fail - 1 / x.size]
    want = [d.mean(), ab.mean(), rel.mean(), np.linalg.norm(x - y) / np.linalg.norm(y),
            x @ y / np.linalg.norm(x) / np.linalg.norm(y), np.mean(d > 1e-5 + 1e-4 * ab)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
