"""Hierarchical call alignment on synthetic views (no trace files): anchors, type
differences, parent cycles, and a step of 20k calls."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from padiff_trace.analyzer.alignment._calls import Call, TraceView, build_tree
from padiff_trace.analyzer.alignment._pairing import align_views

from padiff_trace.matching import parse_mapping

# (module, type, output shape, children); the input shape is the previous sibling's output
Spec = tuple[str, str, tuple[int, ...], list[Any]]


@dataclass
class _Rec:
    """What alignment reads of a record."""

    shape: tuple[int, ...]
    position: str = "out"
    is_tensor: bool = True


def view(framework: str, root: Spec, parents: dict[int, int] | None = None) -> TraceView:
    """A one-step view of the call tree ``root`` in entry order; ``parents`` overrides parent ids."""
    calls: list[Call] = []

    def add(spec: Spec, parent: int, in_shape: tuple[int, ...]) -> None:
        module, mtype, out, kids = spec
        c = Call(len(calls), 0, module, mtype, parent, 0, [_Rec(in_shape, "args[0]")], [_Rec(out)])
        calls.append(c)
        shape = in_shape
        for k in kids:
            add(k, c.id, shape)
            shape = k[2]

    add(root, -1, (2, 8))
    for cid, parent in (parents or {}).items():
        calls[cid].parent = parent
    by_id = {c.id: c for c in calls}
    return TraceView(
        trace=SimpleNamespace(path=f"<{framework}>", meta={}),  # type: ignore[arg-type]
        framework=framework, steps=[0], calls={0: calls}, by_id=by_id, grads_out={}, grads_in={},
        weights={}, param_grads={}, probes={}, losses={}, module_types={c.module: c.module_type for c in calls},
        trees={0: build_tree(calls, by_id)},
    )


def leaf(name: str, mtype: str, shape: tuple[int, ...] = (2, 8)) -> Spec:
    return (name, mtype, shape, [])


def pairs_of(al: Any) -> dict[str, tuple[str, str]]:
    return {p.a.module: (p.b.module, p.how) for p in al.pairs}


def test_anchors_pair_and_split_the_order_alignment() -> None:
    a = view("paddle", ("", "Net", (2, 8), [
        leaf("lin1", "Linear"), leaf("act1", "ReLU"), leaf("lin2", "Linear"), leaf("act2", "ReLU"),
    ]))
    b = view("torch", ("", "Net", (2, 8), [
        leaf("extra", "Linear"), leaf("l1", "Linear"), leaf("r1", "ReLU"), leaf("l2", "Linear"), leaf("r2", "ReLU"),
    ]))
    # by order alone lin1 may pair with B's extra Linear or with l1 (a tie)
    assert pairs_of(align_views(a, b))["lin1"][0] in ("extra", "l1")
    got = pairs_of(align_views(a, b, anchors={"lin1": "l1", "lin2": "l2"}))
    assert got == {"": ("", "root"), "lin1": ("l1", "anchor"), "act1": ("r1", "order"),
                   "lin2": ("l2", "anchor"), "act2": ("r2", "order")}
    al = align_views(a, b, anchors={"lin1": "l1", "lin2": "l2"})
    assert [c.module for c in al.unpaired_b] == ["extra"] and not al.unpaired_a
    assert al.module_pairs["lin1"] == "l1"
    # the mapping wins over an anchor of the same module
    m = parse_mapping({"modules": [{"paddle": "lin1", "torch": "extra"}]})
    got = pairs_of(align_views(a, b, mapping=m, anchors={"lin1": "l1", "lin2": "l2"}))
    assert got["lin1"] == ("extra", "mapping") and got["lin2"] == ("l2", "anchor")


def test_anchors_of_nested_modules_pair_their_children() -> None:
    def block(name: str, inner: str) -> Spec:
        return (name, "Block", (2, 8), [leaf(f"{name}.{inner}", "Linear"), leaf(f"{name}.act", "GELU")])

    a = view("paddle", ("", "Net", (2, 8), [block("enc.0", "fc"), block("enc.1", "fc")]))
    b = view("torch", ("", "Net", (2, 8), [block("layers.1", "proj"), block("layers.0", "proj")]))
    al = align_views(a, b, anchors={"enc.0.fc": "layers.0.proj", "enc.1.fc": "layers.1.proj"})
    got = pairs_of(al)
    # anchors cross the order of the blocks: both are kept; the GELUs follow their parents' order pairs
    assert got["enc.0.fc"] == ("layers.0.proj", "anchor") and got["enc.1.fc"] == ("layers.1.proj", "anchor")
    assert got["enc.0.act"][1] == "order"


def test_type_difference_is_paired_and_flagged() -> None:
    a = view("paddle", ("", "Net", (2, 8), [
        leaf("fc1", "Linear", (2, 16)), leaf("act", "GELU", (2, 16)), leaf("drop", "Dropout", (2, 16)),
        leaf("fc2", "Linear"),
    ]))
    b = view("torch", ("", "Net", (2, 8), [
        leaf("fc1", "Linear", (2, 16)), leaf("relu", "ReLU", (2, 16)), leaf("fc2", "Linear"),
    ]))
    al = align_views(a, b)
    got = pairs_of(al)
    assert got["act"] == ("relu", "type")
    assert [(p.a.module_type, p.b.module_type) for p in al.type_differences] == [("GELU", "ReLU")]
    assert [c.module for c in al.unpaired_a] == ["drop"] and not al.unpaired_b
    assert got["fc2"] == ("fc2", "order")


def test_no_type_difference_without_a_matching_slot() -> None:
    # a Linear facing three calls, one of another type: not the same slot
    a = view("paddle", ("", "Net", (2, 8), [leaf("fc", "Linear", (2, 16)), leaf("norm", "LayerNorm", (2, 16)),
                                           leaf("act", "ReLU", (2, 16))]))
    b = view("torch", ("", "Net", (2, 8), [leaf("conv", "Conv1d", (2, 16))]))
    assert [p.how for p in align_views(a, b).pairs] == ["root"]
    # different shapes: not paired either
    a = view("paddle", ("", "Net", (2, 8), [leaf("act", "GELU", (2, 16))]))
    b = view("torch", ("", "Net", (2, 8), [leaf("act", "ReLU", (2, 32))]))
    assert [p.how for p in align_views(a, b).pairs] == ["root"]
    # a Dropout never stands in for a missing module
    a = view("paddle", ("", "Net", (2, 8), [leaf("act", "GELU")]))
    b = view("torch", ("", "Net", (2, 8), [leaf("drop", "Dropout")]))
    assert [p.how for p in align_views(a, b).pairs] == ["root"]


def test_wrapped_call_pairs_across_levels() -> None:
    a = view("paddle", ("", "Net", (2, 8), [leaf("norm", "LayerNorm"), leaf("fc1", "Linear", (2, 16)),
                                           leaf("act", "GELU", (2, 16)), leaf("fc2", "Linear")]))
    b = view("torch", ("", "Net", (2, 8), [
        leaf("norm", "LayerNorm"), leaf("extra", "Identity"),
        ("ffn_in", "Sequential", (2, 16), [leaf("ffn_in.0", "Linear", (2, 16))]), leaf("fc2", "Linear"),
    ]))
    al = align_views(a, b)
    assert pairs_of(al)["fc1"] == ("ffn_in.0", "order")
    assert sorted(c.module for c in al.unpaired_b) == ["extra", "ffn_in"]
    assert [c.module for c in al.unpaired_a] == ["act"]


def test_parent_cycle_does_not_hang() -> None:
    spec: Spec = ("", "Net", (2, 8), [
        ("blk", "Block", (2, 8), [leaf("blk.fc", "Linear"), leaf("blk.act", "ReLU")]), leaf("head", "Linear"),
    ])
    a = view("paddle", spec, parents={1: 3, 3: 1})  # blk <-> blk.act
    b = view("torch", spec, parents={0: 0})  # the root its own parent
    t0 = time.perf_counter()
    al = align_views(a, b)
    assert time.perf_counter() - t0 < 5
    assert a.descendants(a.by_id[1]) == {2, 3}
    assert list(a.ancestors(a.by_id[2])) == [a.by_id[1], a.by_id[3]]
    assert al.pairs and all(p.a.module == p.b.module for p in al.pairs)
    assert {p.a.module for p in al.pairs} >= {"", "head"}


def _big(framework: str, blocks: int, flat: int, skip_every: int = 0) -> Spec:
    """``blocks`` blocks of 8 calls (attn with 4 children, mlp with 2), then a Sequential of
    ``flat`` Linear/ReLU calls; ``skip_every``: B's Sequential lacks every n-th ReLU."""
    kids: list[Spec] = []
    for i in range(blocks):
        p = f"blocks.{i}"
        attn = (f"{p}.attn", "Attention", (2, 8), [leaf(f"{p}.attn.{n}", "Linear") for n in "qkvo"])
        mlp = (f"{p}.mlp", "Mlp", (2, 8), [leaf(f"{p}.mlp.fc", "Linear", (2, 16)), leaf(f"{p}.mlp.act", "GELU", (2, 16))])
        kids.append((p, "Block", (2, 8), [leaf(f"{p}.norm", "LayerNorm"), attn, mlp]))
    seq: list[Spec] = []
    for k in range(flat):
        if k % 2:
            if not (skip_every and framework == "torch" and k % skip_every == 1):
                seq.append(leaf(f"seq.{k}", "ReLU"))
        else:
            seq.append(leaf(f"seq.{k}", "Linear"))
    kids.append(("seq", "Sequential", (2, 8), seq))
    return ("", "Net", (2, 8), kids)


def test_20k_call_step_aligns(tmp_path: Any) -> None:
    a = view("paddle", _big("paddle", 1250, 10_000))  # 1 + 10k + 1 + 10k calls
    b = view("torch", _big("torch", 1250, 10_000, skip_every=50))
    assert len(a.calls[0]) > 20_000
    al = align_views(a, b)
    got = pairs_of(al)
    missing = {f"seq.{k}" for k in range(1, 10_000, 2) if k % 50 == 1}
    assert {c.module for c in al.unpaired_a} == missing and not al.unpaired_b
    assert all(got[m] == (m, "order") for m in a.module_types if m and m not in missing)
    json.dumps([p.how for p in al.pairs])


@pytest.mark.slow
def test_100k_call_step_aligns() -> None:
    a = view("paddle", _big("paddle", 6250, 50_000))
    b = view("torch", _big("torch", 6250, 50_000, skip_every=50))
    al = align_views(a, b)
    assert len(al.unpaired_a) == 1000 and not al.unpaired_b
    assert all(p.a.module == p.b.module for p in al.pairs)


def test_report_names_the_type_difference(tmp_path: Any) -> None:
    """End to end on written traces: the first divergence is the GELU/ReLU pair, named as such."""
    import numpy as np
    from test_analyzer_helpers import Synth

    from padiff_trace import analyzer

    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(3, 8)
    for side, fw, act in (("a", "paddle", "GELU"), ("b", "torch", "ReLU")):
        s = Synth(tmp_path / side, fw)
        src = f"model_{side}.py"
        with s.call("", "Net", {"args[0]": x}, (src, 1, "def forward(self, x):")) as root:
            with s.call("fc1", "Linear", {"args[0]": x}, (src, 2, "h = self.fc1(x)")) as c:
                c.out({"out": x})
            with s.call("act", act, {"args[0]": x}, (src, 3, "h = self.act(h)")) as c:
                h = (x * 0.5 * (1 + np.tanh(0.8 * x))).astype(np.float32) if act == "GELU" else np.maximum(x, 0)
                c.out({"out": h})
            with s.call("fc2", "Linear", {"args[0]": h}, (src, 4, "return self.fc2(h)")) as c:
                c.out({"out": h})
            root.out({"out": h})
        s.close()
    r = analyzer.compare(tmp_path / "a", tmp_path / "b")
    d = r.first_divergence
    assert d is not None and d.pair.a.module == "act" and d.pair.role == "output", r.summary_text()
    assert d.type_difference == ("GELU", "ReLU") and not d.inputs_failed
    text = r.summary_text()
    assert "type difference: A GELU vs B ReLU" in text and "(1 of different type)" in text
    doc = r.to_dict()
    assert doc["first_divergence"]["type_difference"] == {"a": "GELU", "b": "ReLU"}
    assert doc["type_differences"] == [{"a": "act#0", "b": "act#0", "a_type": "GELU", "b_type": "ReLU"}]
    assert [e["how"] for e in doc["alignment"]] == ["root", "order", "type", "order"]
    r.write(tmp_path / "report")
    assert "TYPE DIFFERENCE" in analyzer.alignment_text(r.alignment)


def test_anchors_held_deeper_keep_parameter_free_calls_between_them() -> None:
    """paddle's layer has its Dropouts as direct children next to norm1/norm2; HF's holds
    them inside attention.output / output, next to the LayerNorms. The anchors sit at
    different depths: brought up, they keep each Dropout between the same two anchors
    (the one after the attention never pairs with the one after the FFN)."""
    p = "layer"
    a = view("paddle", ("", "Net", (2, 8), [(p, "EncoderLayer", (2, 8), [
        (f"{p}.attn", "MultiHeadAttention", (2, 8), [leaf(f"{p}.attn.q", "Linear"), leaf(f"{p}.attn.o", "Linear")]),
        leaf(f"{p}.drop1", "Dropout"), leaf(f"{p}.norm1", "LayerNorm"), leaf(f"{p}.fc1", "Linear"),
        leaf(f"{p}.actdrop", "Dropout"), leaf(f"{p}.fc2", "Linear"), leaf(f"{p}.drop2", "Dropout"),
        leaf(f"{p}.norm2", "LayerNorm"),
    ])]))
    q = "enc.0"
    b = view("torch", ("", "Net", (2, 8), [(q, "BertLayer", (2, 8), [
        (f"{q}.attention", "BertAttention", (2, 8), [
            (f"{q}.attention.self", "SelfAttention", (2, 8), [leaf(f"{q}.attention.self.query", "Linear")]),
            (f"{q}.attention.output", "SelfOutput", (2, 8), [
                leaf(f"{q}.attention.output.dense", "Linear"), leaf(f"{q}.attention.output.dropout", "Dropout"),
                leaf(f"{q}.attention.output.LayerNorm", "LayerNorm")]),
        ]),
        (f"{q}.intermediate", "Intermediate", (2, 8), [leaf(f"{q}.intermediate.dense", "Linear"),
                                                       leaf(f"{q}.intermediate.act", "GELUActivation")]),
        (f"{q}.output", "Output", (2, 8), [leaf(f"{q}.output.dense", "Linear"), leaf(f"{q}.output.dropout", "Dropout"),
                                           leaf(f"{q}.output.LayerNorm", "LayerNorm")]),
    ])]))
    anchors = {f"{p}.attn.q": f"{q}.attention.self.query", f"{p}.attn.o": f"{q}.attention.output.dense",
               f"{p}.norm1": f"{q}.attention.output.LayerNorm", f"{p}.fc1": f"{q}.intermediate.dense",
               f"{p}.fc2": f"{q}.output.dense", f"{p}.norm2": f"{q}.output.LayerNorm"}
    got = pairs_of(align_views(a, b, anchors=anchors))
    assert got[p] == (q, "contents")  # the same six anchors inside
    assert got[f"{p}.drop1"] == (f"{q}.attention.output.dropout", "order")
    assert got[f"{p}.drop2"] == (f"{q}.output.dropout", "order")
    assert f"{p}.actdrop" not in got and f"{p}.attn" not in got  # no counterpart: left alone


def test_first_divergence_names_the_call_that_made_it(tmp_path: Any) -> None:
    """A writes its activation inline in the layer's forward, B has an activation module (B
    only) that is wrong: the first differing record is fc2's input, but the error is made in
    A's layer (its inline code, with fc1 agreeing) and in B's act (its input agrees)."""
    import numpy as np
    from test_analyzer_helpers import Synth

    from padiff_trace import analyzer

    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(3, 8)
    gelu = (x * 0.5 * (1 + np.tanh(0.8 * x))).astype(np.float32)
    for side, fw in (("a", "paddle"), ("b", "torch")):
        s = Synth(tmp_path / side, fw)
        src = f"model_{side}.py"
        h = gelu if side == "a" else np.maximum(x, 0)
        with s.call("", "Net", {"args[0]": x}, (src, 1, "y = model(x)")) as root:
            with s.call("layer", "Block", {"args[0]": x}, (src, 2, "y = self.layer(x)")) as lay:
                with s.call("layer.fc1", "Linear", {"args[0]": x}, (src, 3, "h = self.fc1(x)")) as c:
                    c.out({"out": x})
                if side == "b":
                    with s.call("layer.act", "ReLU", {"args[0]": x}, (src, 4, "h = self.act(h)")) as c:
                        c.out({"out": h})
                with s.call("layer.fc2", "Linear", {"args[0]": h}, (src, 5, "return self.fc2(h)")) as c:
                    c.out({"out": h})
                lay.out({"out": h})
            root.out({"out": h})
        s.close()
    r = analyzer.compare(tmp_path / "a", tmp_path / "b")
    d = r.first_divergence
    assert d is not None and (d.pair.role, d.pair.a.module) == ("input", "layer.fc2"), r.summary_text()
    assert d.located is not None
    la, lb = d.located.a, d.located.b
    assert (la.call.module, la.why, [c.module for c in la.fine]) == ("layer", "inline code", ["layer.fc1"])
    assert (lb.call.module, lb.why) == ("layer.act", "one side only")
    doc = r.to_dict()["first_divergence"]["located"]
    assert doc["a"]["module"] == "layer" and doc["b"]["module"] == "layer.act" and doc["a"]["stack"]
    assert "the error is made in layer.act#0" in r.summary_text().replace("\n     ", " ")
