"""analyzer.compare/align on synthetic traces (fast; real frameworks in test_analyzer_real.py)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_analyzer_helpers import Synth, toy_model

from padiff_trace import Kind, MappingError, Phase, RecordHeader, UserError, analyzer
from padiff_trace.cli import main


def _pair(tmp_path: Path, **b_kw: object) -> tuple[Path, Path]:
    a = toy_model(tmp_path / "a", "paddle", noise=1e-7)
    b = toy_model(tmp_path / "b", "torch", noise=1e-7, **b_kw)  # type: ignore[arg-type]
    return a, b


def test_noise_only_pair_passes_by_default(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    r = analyzer.compare(a, b)
    assert r.exit_code == 0 and r.first_divergence is None
    roles = {p.role for p in r.pairs}
    assert {"model_input", "output", "grad_output", "param", "param_grad", "loss"} <= roles
    # the transposed Linear weights were paired and compared, not reported as mismatch
    w = [p for p in r.pairs if p.role == "param" and p.a.position == "weight"]
    assert w and all(p.perm == (1, 0) and p.passed for p in w)


def test_planted_layernorm_bug_localized_with_both_stacks(tmp_path: Path) -> None:
    a = toy_model(tmp_path / "a", "paddle", ln_eps=1e-1)
    b = toy_model(tmp_path / "b", "torch", noise=1e-7)
    r = analyzer.compare(a, b)
    assert r.exit_code == 1
    d = r.first_divergence
    assert d is not None and d.pair.role == "output"
    assert d.pair.a.module == "norm" and d.pair.b.module == "norm"
    assert not d.inputs_failed and d.input_rel_l2 is not None and d.input_rel_l2 < 1e-6
    text = r.summary_text()
    assert "model_p.py:12  h = self.norm(h)" in text and "model_t.py:12  h = self.norm(h)" in text
    assert r.amplifiers[0].call_pair.a.module == "norm"
    assert max(len(line) for line in text.splitlines()) <= 80


def test_trees_that_differ_align_without_mapping(tmp_path: Path) -> None:
    # A applies ReLU functionally (no call), B has an extra Dropout module
    a = toy_model(tmp_path / "a", "paddle", functional_relu=True)
    b = toy_model(tmp_path / "b", "torch", extra_dropout=True)
    al = analyzer.align(a, b)
    pairs = {(p.a.module, p.b.module) for p in al.pairs}
    assert pairs == {("", ""), ("fc1", "fc1"), ("norm", "norm"), ("block", "block"), ("block.fc2", "block.fc2")}
    assert sorted(c.module for c in al.unpaired_b) == ["act", "drop"]
    assert analyzer.compare(a, b).exit_code == 0


def test_wrong_pair_is_not_made_for_unrelated_types(tmp_path: Path) -> None:
    a = toy_model(tmp_path / "a", "paddle")
    s = Synth(tmp_path / "b", "torch")
    x = np.ones((3, 8), np.float32)
    with s.call("", "Net", {"args[0]": x}, ("m.py", 1, "f")) as root:
        with s.call("conv", "Conv2d", {"args[0]": x}, ("m.py", 2, "g")) as c:
            c.out({"out": np.ones((3, 16), np.float32)})
        root.out({"out": np.ones((3, 4), np.float32)})
    s.close()
    al = analyzer.align(a, tmp_path / "b")
    assert [(p.a.module, p.b.module) for p in al.pairs] == [("", "")]


def test_wildcard_mapping_pins_renamed_modules(tmp_path: Path) -> None:
    a = toy_model(tmp_path / "a", "paddle", names={"fc1": "layers.0.proj", "block": "head"})
    b = toy_model(tmp_path / "b", "torch", names={"fc1": "blocks.0.dense", "block": "classifier"})
    m = tmp_path / "map.json"
    m.write_text(json.dumps({"version": 1, "modules": [
        {"paddle": "layers.*.proj", "torch": "blocks.*.dense"},
        {"paddle": "head", "torch": "classifier", "blackbox": True},
    ]}))
    al = analyzer.align(a, b, mapping=m)
    by = {p.a.module: (p.b.module, p.how) for p in al.pairs}
    assert by["layers.0.proj"] == ("blocks.0.dense", "mapping")
    assert by["head"] == ("classifier", "mapping")
    assert "head.fc2" not in by and [c.module for c in al.hidden_a] == ["head.fc2"]
    r = analyzer.compare(a, b, mapping=m)
    assert r.exit_code == 0
    # weights follow the module pairs, including inside the black box (parent paired)
    names = {(p.a.module, p.b.module) for p in r.pairs if p.role == "param"}
    assert ("layers.0.proj", "blocks.0.dense") in names and ("head.fc2", "classifier.fc2") in names


def test_mapping_entry_matching_nothing_names_it(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    m = tmp_path / "map.json"
    m.write_text(json.dumps({"encoder.*.attn": "enc.*.attention"}))
    with pytest.raises(MappingError, match=r"entry 0 \('encoder\.\*\.attn' -> 'enc\.\*\.attention'\) matches nothing"):
        analyzer.align(a, b, mapping=m)
    m.write_text(json.dumps({"modules": [{"paddle": "a.*", "torch": "b"}]}))
    with pytest.raises(MappingError, match="same wildcards"):
        analyzer.align(a, b, mapping=m)
    m.write_text("{not json")
    with pytest.raises(MappingError, match="invalid JSON"):
        analyzer.align(a, b, mapping=m)


def test_yaml_mapping(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    a, b = _pair(tmp_path)
    m = tmp_path / "map.yaml"
    m.write_text("modules:\n  - {paddle: norm, torch: norm, blackbox: true}\n")
    assert any(p.how == "mapping" for p in analyzer.align(a, b, mapping=m).pairs)


def test_mapping_is_oriented_to_sides_once() -> None:
    """A mapping file keyed paddle/torch (or source/target), applied to traces A and B, names
    sides: the paddle column is A's unless A is torch and B paddle; two traces of one framework
    read the file's order as A, B; paddle/torch weight names apply only across frameworks."""
    from padiff_trace.matching import parse_mapping

    m = parse_mapping({"modules": [{"paddle": "layers.*.proj", "torch": "blocks.*.dense", "transpose": [1, 0]}],
                       "weights": [{"paddle": "w.p", "torch": "w.t", "torch_part": [0, 4]},
                                   {"source": "s.x", "target": "t.x"}]})
    pt, tp, pp = m.oriented("paddle", "torch"), m.oriented("torch", "paddle"), m.oriented("paddle", "paddle")
    assert [(e.a, e.b, e.captures_from_a) for e in pt.modules] == [("layers.*.proj", "blocks.*.dense", True)]
    assert [(e.a, e.b, e.captures_from_a) for e in tp.modules] == [("blocks.*.dense", "layers.*.proj", False)]
    assert [(e.a, e.b) for e in pp.modules] == [("layers.*.proj", "blocks.*.dense")]
    assert all(e.transpose == (1, 0) for e in (*pt.modules, *tp.modules))  # permutes A's tensors, whichever A is
    assert [(w.a, w.b, w.a_part, w.b_part) for w in pt.weights] == [("w.p", "w.t", None, (0, 4)), ("s.x", "t.x", None, None)]
    assert [(w.a, w.b, w.a_part, w.b_part) for w in tp.weights] == [("w.t", "w.p", (0, 4), None), ("s.x", "t.x", None, None)]
    assert [(w.a, w.b) for w in pp.weights] == [("s.x", "t.x")]
    assert (pt.reversed, tp.reversed, pp.reversed) == (False, True, False)
    assert (pt.modules_pin_weights, pp.modules_pin_weights) == (True, False)


def test_one_mapping_pairs_alike_whichever_trace_is_a(tmp_path: Path) -> None:
    """The same mapping file, the paddle trace as A or as B: the same calls, modules and weights
    pair (mirrored), and a failing entry names the trace it looked in."""
    p = toy_model(tmp_path / "p", "paddle", noise=1e-7, names={"fc1": "layers.0.proj", "block": "head"})
    t = toy_model(tmp_path / "t", "torch", noise=1e-7, names={"fc1": "blocks.0.dense", "block": "classifier"})
    m = tmp_path / "map.json"
    m.write_text(json.dumps({"version": 1, "modules": [
        {"paddle": "layers.*.proj", "torch": "blocks.*.dense"},
        {"paddle": "head", "torch": "classifier", "blackbox": True},
    ], "weights": [{"paddle": "head.fc2.weight", "torch": "classifier.fc2.weight"}]}))
    fwd, rev = analyzer.align(p, t, mapping=m), analyzer.align(t, p, mapping=m)
    calls = {(x.a.module, x.a.call_index, x.b.module, x.b.call_index, x.how) for x in fwd.pairs}
    assert calls == {(x.b.module, x.b.call_index, x.a.module, x.a.call_index, x.how) for x in rev.pairs}
    assert ("layers.0.proj", 0, "blocks.0.dense", 0, "mapping") in calls and ("head", 0, "classifier", 0, "mapping") in calls
    assert [c.module for c in fwd.hidden_a] == [c.module for c in rev.hidden_b] == ["head.fc2"]
    assert fwd.module_pairs == {y: x for x, y in rev.module_pairs.items()}
    assert {e.describe() for e in fwd.module_entries.values()} == {e.describe() for e in rev.module_entries.values()}
    wf, wr = analyzer.weight_map(p, t, mapping=m), analyzer.weight_map(t, p, mapping=m)
    assert wf is not None and wr is not None
    assert {(x.a, x.b, x.how) for x in wf.pairs} == {(x.b, x.a, x.how) for x in wr.pairs}
    assert ("head.fc2.weight", "classifier.fc2.weight", "mapping") in {(x.a, x.b, x.how) for x in wf.pairs}
    rf, rr = analyzer.compare(p, t, mapping=m), analyzer.compare(t, p, mapping=m)
    assert rf.exit_code == rr.exit_code == 0
    assert ({(x.role, x.step, x.a.name, x.b.name) for x in rf.pairs}
            == {(x.role, x.step, x.b.name, x.a.name) for x in rr.pairs})
    m.write_text(json.dumps({"head": "nothing"}))
    with pytest.raises(MappingError, match=r"its trace B path\(s\) \['nothing'\] are not modules of trace B"):
        analyzer.align(p, t, mapping=m)
    with pytest.raises(MappingError, match=r"its trace A path\(s\) \['nothing'\] are not modules of trace A"):
        analyzer.align(t, p, mapping=m)
    m.write_text(json.dumps({"missing": "classifier"}))
    with pytest.raises(MappingError, match="no module of trace B matches 'missing'"):
        analyzer.align(t, p, mapping=m)


def test_shape_mismatch_is_a_failing_pair_not_a_crash(tmp_path: Path) -> None:
    def one(path: Path, fw: str, shape: tuple[int, ...]) -> Path:
        s = Synth(path, fw)
        x = np.ones((2, 3), np.float32)
        with s.call("", "Net", {"args[0]": x}, ("m.py", 1, "y = model(x)")) as root:
            with s.call("emb", "Embedding", {"args[0]": x}, ("m.py", 2, "e = self.emb(x)")) as c:
                c.out({"out": np.ones((2, 3), np.float32)})
            root.out({"out": np.ones((2, 3), np.float32)})
        s.param("emb", "Embedding", "weight", np.ones(shape, np.float32))
        s.close()
        return path

    r = analyzer.compare(one(tmp_path / "a", "paddle", (4, 3)), one(tmp_path / "b", "torch", (4, 2)))
    bad = [p for p in r.pairs if not p.passed]
    assert len(bad) == 1 and "shape mismatch: A [4, 3] vs B [4, 2]" in bad[0].reason
    assert r.exit_code == 1
    # a lookup table with a row more (a padding row, a padded vocabulary): the rows both have are
    # compared, and the report says what was left out and why it may still be a bug
    r = analyzer.compare(one(tmp_path / "c", "paddle", (4, 3)), one(tmp_path / "d", "torch", (5, 3)))
    assert r.exit_code == 0 and all(p.passed for p in r.pairs)
    said = [f.text for f in r.diagnosis if f.code == "extra_rows"]
    assert said == ["lookup table B's emb.weight has rows A's emb.weight lacks: compared on the first 4 rows; a padding "
                    "row or a padded vocabulary is a convention, a vocabulary size set wrong is not (check the config)"]


def test_nan_and_stats_only(tmp_path: Path) -> None:
    a = toy_model(tmp_path / "a", "paddle", nan_in_fc2=True)
    b = toy_model(tmp_path / "b", "torch")
    r = analyzer.compare(a, b)
    fa = r.first_nonfinite["a"]
    assert fa is not None and fa.module == "block.fc2" and r.first_nonfinite["b"] is None
    assert r.first_divergence is not None and r.first_divergence.pair.a.module == "block.fc2"
    assert r.first_divergence.pair.metrics.nan_mismatch == 1  # type: ignore[union-attr]

    s = toy_model(tmp_path / "s", "torch", stats_only=True)
    r2 = analyzer.compare(tmp_path / "b", s)
    assert r2.exit_code == 0 and all(p.metrics.stats_only for p in r2.pairs if p.metrics)  # type: ignore[union-attr]
    s2 = toy_model(tmp_path / "s2", "torch", stats_only=True, ln_eps=1e-1)
    r3 = analyzer.compare(tmp_path / "b", s2)
    assert r3.first_divergence is not None and r3.first_divergence.pair.a.module == "norm"


def test_backward_only_difference(tmp_path: Path) -> None:
    a = toy_model(tmp_path / "a", "paddle")
    b = toy_model(tmp_path / "b", "torch", grad_bug=True)
    r = analyzer.compare(a, b)
    d = r.first_divergence
    assert d is not None and d.pair.role == "param_grad" and d.pair.a.module == "block.fc2"


def test_modes_and_explicit_tolerances(tmp_path: Path) -> None:
    a = toy_model(tmp_path / "a", "paddle", noise=1e-4)
    b = toy_model(tmp_path / "b", "torch", noise=1e-4)
    assert analyzer.compare(a, b).exit_code == 1
    assert analyzer.compare(a, b, rtol=1e-3).exit_code == 0
    assert analyzer.compare(a, b, mode="strict").exit_code == 1
    assert analyzer.compare(a, b, mode="strict", atol=1e-2, rtol=1e-2).exit_code == 0
    assert analyzer.compare(a, b, mode="rel-l2", rtol=1e-3).exit_code == 0
    with pytest.raises(UserError, match="unknown compare mode"):
        analyzer.compare(a, b, mode="loose")
    with pytest.raises(TypeError, match="unknown compare option"):
        analyzer.compare(a, b, tolerance=1)


def test_report_files(tmp_path: Path) -> None:
    a = toy_model(tmp_path / "a", "paddle", ln_eps=1e-1)
    b = toy_model(tmp_path / "b", "torch")
    r = analyzer.compare(a, b)
    out = r.write(tmp_path / "rep")
    doc = json.loads((out / "report.json").read_text())
    assert doc["schema_version"] == 1 and doc["verdict"] == "diverged" and doc["exit_code"] == 1
    assert doc["weights"] and doc["param_grads"] and doc["pairs"]
    first = doc["pairs"][[p["index"] for p in doc["pairs"]].index(doc["first_divergence"]["index"])]
    assert first["a"]["module"] == "norm" and first["a"]["stack"][-1][:2] == ["model_p.py", 12]
    rows = list(csv.DictReader((out / "pairs.csv").open()))
    assert len(rows) == len(r.pairs) and {"a", "b", "max_abs", "mean_abs", "rel_l2"} <= set(rows[0])
    txt = (out / "report.txt").read_text()
    assert "mean diff:" in txt and "max diff:" in txt and "norm#0:out" in txt


def _typed_pair(path: Path, framework: str, ids: np.ndarray, *, stats_only: bool = False) -> Path:
    """A model whose ``tok`` call outputs integer ids and whose ``quant`` call outputs float8 bits."""
    s = Synth(path, framework, stats_only=stats_only)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    with s.call("", "Net", {"args[0]": x}, ("m.py", 1, "y = model(x)")) as root:
        with s.call("tok", "Tokenizer", {"args[0]": x}, ("m.py", 2, "ids = self.tok(x)")) as c:
            c.out({"out": ids, "mask": ids % 2 == 0})
        with s.call("quant", "Quant", {"args[0]": x}, ("m.py", 3, "q = self.quant(x)")) as c:
            pass
        hdr = RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "quant", "Quant", c.id, c.parent, 0, "out", stack=c.stack)
        s.w.append(hdr, np.arange(12, dtype=np.uint8), dtype="float8_e4m3fn")
        root.out({"out": x})
    s.close()
    return path


def test_integer_pairs_compare_exactly(tmp_path: Path) -> None:
    ids = np.arange(1_000_000_000, 1_000_001_000, dtype=np.int64)
    off = ids.copy()
    off[500] += 1
    b = _typed_pair(tmp_path / "b", "torch", ids)
    r = analyzer.compare(_typed_pair(tmp_path / "a", "paddle", off), b)
    bad = [p for p in r.pairs if not p.passed]
    # the ids and the bool mask made from them (its parity flipped at the same element)
    assert sorted(p.a.name for p in bad) == ["tok#0:mask", "tok#0:out"], r.summary_text()
    assert all(p.tol.exact and "1 of 1000 elements differ" in p.reason for p in bad)
    assert r.exit_code == 1
    assert analyzer.compare(tmp_path / "a", b, atol=10.0, rtol=1.0).exit_code == 1  # tolerances never loosen integers
    assert analyzer.compare(b, b).exit_code == 0


def test_undecodable_dtype_is_reported_not_fatal(tmp_path: Path) -> None:
    ids = np.arange(1000, dtype=np.int64)
    for stats_only in (False, True):
        a = _typed_pair(tmp_path / f"a{stats_only}", "paddle", ids, stats_only=stats_only)
        b = _typed_pair(tmp_path / f"b{stats_only}", "torch", ids, stats_only=stats_only)
        r = analyzer.compare(a, b)
        q = next(p for p in r.pairs if p.a.name == "quant#0:out")
        assert q.passed and q.metrics is not None and "float8_e4m3fn" in q.metrics.uncomparable
        assert q.reason.startswith("not compared: A quant#0:out has dtype float8_e4m3fn")
        assert r.exit_code == 0
        assert [f.code for f in r.diagnosis] == ["uncomparable"] and "1 pair(s) not compared" in r.summary_text()
        doc = r.to_dict()
        jq = next(p for p in doc["pairs"] if p["a"]["module"] == "quant" and p["a"]["position"] == "out")
        assert jq["metrics"]["uncomparable"] == q.metrics.uncomparable


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _pair(tmp_path)
    assert main(["compare", str(a), str(b), "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("padiff-trace compare: ALIGNED")
    c = toy_model(tmp_path / "c", "paddle", ln_eps=1e-1)
    assert main(["compare", str(c), str(b), "--report", str(tmp_path / "rep")]) == 1
    assert "First divergence" in capsys.readouterr().out and (tmp_path / "rep" / "report.json").exists()
    assert main(["compare", str(a), str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing" in err
    assert main(["align", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "norm#0 [LayerNorm]  <->  norm#0 [LayerNorm]" in out and "only in B: 0" in out


def test_analyzer_imports_no_framework() -> None:
    code = (
        "import sys, analyzer, padiff_trace.cli._compare, padiff_trace.matching._match\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('torch', 'paddle')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[1])


def _open_under(root: Path) -> list[str]:
    """Files under ``root`` this process holds open (Linux: /proc/self/fd)."""
    out = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = fd.readlink()
        except OSError:
            continue
        if str(target).startswith(str(root)):
            out.append(str(target))
    return out


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="open files are listed through /proc")
def test_the_analyzer_closes_what_it_opens(tmp_path: Path) -> None:
    a = toy_model(tmp_path / "a", "paddle", ln_eps=1e-1)
    b = toy_model(tmp_path / "b", "torch")
    al = analyzer.align(a, b)
    assert al.pairs and _open_under(tmp_path) == []
    assert analyzer.weight_map(a, b) is not None and _open_under(tmp_path) == []
    with analyzer.compare(a, b) as report:
        assert report.verdict == "DIVERGED"
        assert _open_under(tmp_path)  # the report reads its traces on demand while it is used
        report.write(tmp_path / "rep")
    assert _open_under(tmp_path) == []
    # the report still answers afterwards (a later read opens the file again, and closes it with the report)
    assert report.first_divergence is not None and (tmp_path / "rep" / "report.json").is_file()
    with pytest.raises(UserError):  # a failing compare closes what it had opened before failing
        analyzer.compare(a, b, reference=b)
    assert _open_under(tmp_path) == []


def _rounded_stack(path: Path, fw: str, errors: tuple[float, ...], turned: bool = False) -> Path:
    """x -> embed (Linear) -> blocks (Sequential: blocks.0..2, Linears) -> out; side B's every leaf
    output carries rounding of the relative size given (A's: none), growing along the stack;
    ``turned``: the Sequential hands on its last block's square output transposed."""
    rng = np.random.default_rng(0)
    noise = np.random.default_rng(1)
    x = rng.normal(size=(64, 64)).astype(np.float32)
    ws = [(rng.normal(size=(64, 64)) / 8).astype(np.float32) for _ in range(4)]

    def rounded(v: np.ndarray, e: float) -> np.ndarray:
        if fw == "paddle":
            return v
        n = noise.normal(size=v.shape)
        return (v + e * np.linalg.norm(v) / np.linalg.norm(n) * n).astype(np.float32)

    s = Synth(path, fw)
    with s.call("", "Net", {"args[0]": x}, ("m.py", 1, "y = model(x)")) as root:
        with s.call("embed", "Linear", {"args[0]": x}, ("m.py", 2, "h = self.embed(x)")) as c:
            h = rounded(x @ ws[0], errors[0])
            c.out({"out": h})
        with s.call("blocks", "Sequential", {"args[0]": h}, ("m.py", 3, "h = self.blocks(h)")) as seq:
            for k in range(3):
                with s.call(f"blocks.{k}", "Linear", {"args[0]": h}, ("m.py", 9, "input = module(input)")) as c:
                    h = rounded(h @ ws[k + 1], errors[k + 1])
                    c.out({"out": h})
            h = np.ascontiguousarray(h.T) if turned else h
            seq.out({"out": h})
        root.out({"out": h})
    s.close()
    return path


def test_a_container_returning_its_last_childs_output_shares_that_childs_verdict(tmp_path: Path) -> None:
    """Rounding grows along a Sequential, each block passing on at most 1.5 times what it received,
    the last one past the noise floor (carried rounding). The Sequential returns that block's
    output, the same values on both sides: judged as the block's, not as an amplification of what
    the Sequential received three blocks earlier (a clean ResNeXt-50 was reported diverged so)."""
    errors = (2.5e-6, 3.6e-6, 5.2e-6, 7.5e-6)
    r = analyzer.compare(_rounded_stack(tmp_path / "a", "paddle", errors), _rounded_stack(tmp_path / "b", "torch", errors))
    outs = {p.a.module: p for p in r.pairs if p.role == "output"}
    assert outs["blocks.2"].passed and outs["blocks.2"].reason.startswith("carried rounding")
    assert outs["blocks"].passed and "the same values as the output of blocks.2" in outs["blocks"].reason
    assert r.exit_code == 0 and r.first_divergence is None
    # a last block that amplifies what it received is no rounding: it and its Sequential fail
    r = analyzer.compare(tmp_path / "a", _rounded_stack(tmp_path / "c", "torch", (*errors[:3], 3e-5)))
    assert r.exit_code == 1 and r.first_divergence is not None and r.first_divergence.pair.a.module == "blocks.2"
    # one side hands the block's square output on transposed: the same statistics, other values
    r = analyzer.compare(tmp_path / "a", _rounded_stack(tmp_path / "d", "torch", errors, turned=True))
    assert r.exit_code == 1 and r.first_divergence is not None and r.first_divergence.pair.a.module == "blocks"
