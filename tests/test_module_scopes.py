"""Tensors the names and blocks leave apart, settled by the modules around them (session 24):
rules found on held-out set 14 and tested here on tensor lists of our own shapes (fast).

- a layer's own ``weight`` [in, out] against a Linear inside the partner layer, whose other
  tensor (the layer's bias) pairs them (``partner_scopes``); a layer holding its tensors in a
  nested module is the partner of the outer one (``module_anchors`` / ``module_splits``);
- mixing vectors ``[d]`` against ``[1, 1, d]`` in partner modules, paired in registration
  order as one layout (axes of size one move no element);
- a norm kept before the first block on one side and inside it on the other: paired in the
  order both models call them, across blocks (``across_blocks``), never in registration order;
- lookup tables with a padding row more on one side: the rows both have (``extra_rows``);
- a left-over transposed pair written to a mapping file and read back pairs the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from padiff_trace import MappingError
from padiff_trace.matching import in_call_order, load_mapping, module_splits
from padiff_trace.matching._weightmap import TensorInfo
from padiff_trace.matching._weightmatch import WeightSide, match_weights, module_anchors
from padiff_trace.matching._weightsides import mapping_pins

PD = {"Linear": ["paddle.nn.layer.common.Linear", "paddle.nn.layer.layers.Layer"],
      "LayerNorm": ["paddle.nn.layer.norm.LayerNorm", "paddle.nn.layer.layers.Layer"],
      "Embedding": ["paddle.nn.layer.common.Embedding", "paddle.nn.layer.layers.Layer"],
      "GraphLayer": ["port.GraphLayer", "paddle.nn.layer.layers.Layer"],
      "Mix": ["port.Mix", "paddle.nn.layer.layers.Layer"]}
TD = {"Linear": ["torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"],
      "LayerNorm": ["torch.nn.modules.normalization.LayerNorm", "torch.nn.modules.module.Module"],
      "EmbeddingBag": ["torch.nn.modules.sparse.EmbeddingBag", "torch.nn.modules.module.Module"],
      "GCNConv": ["port.GCNConv", "torch.nn.modules.module.Module"],
      "TimeMix": ["port.TimeMix", "torch.nn.modules.module.Module"]}
D = 8


def t(name: str, mtype: str, shape: tuple[int, ...]) -> TensorInfo:
    mod, _, local = name.rpartition(".")
    return TensorInfo(name, mod, local, mtype, shape, True, True, True)


def test_a_layers_own_weight_pairs_with_the_linear_inside_its_partner_layer() -> None:
    pd = [t("layers.0.weight", "GraphLayer", (5, D)), t("layers.0.bias", "GraphLayer", (D,)),
          t("layers.1.weight", "GraphLayer", (D, 7)), t("layers.1.bias", "GraphLayer", (7,))]
    th = [t("conv1.lin.weight", "Linear", (D, 5)), t("conv1.bias", "GCNConv", (D,)),
          t("conv2.lin.weight", "Linear", (7, D)), t("conv2.bias", "GCNConv", (7,))]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    assert wm.ok, wm.problem_text("A", "B")
    by_a = {p.a: p for p in wm.pairs}
    assert by_a["layers.0.weight"].b == "conv1.lin.weight" and by_a["layers.0.weight"].a_axes == (1, 0)
    assert by_a["layers.1.weight"].b == "conv2.lin.weight"
    # the layer is the partner of the layer, not of the Linear inside it, and not split apart
    assert module_anchors(wm)["layers.0"] == "conv1"
    assert "conv1" not in module_splits(wm).get("layers.0", frozenset())
    assert "conv1.lin" in module_splits(wm).get("layers.0", frozenset())


def test_mixing_vectors_pair_within_their_partner_modules_in_registration_order() -> None:
    pd = [t("mix.key.weight", "Linear", (D, D + 1)), t("mix.value.weight", "Linear", (D, D + 2)),
          t("mix.bonus", "Mix", (D,)), t("mix.mix_key", "Mix", (D,)), t("mix.mix_value", "Mix", (D,)),
          t("norm.weight", "LayerNorm", (D,))]
    th = [t("att.key.weight", "Linear", (D + 1, D)), t("att.value.weight", "Linear", (D + 2, D)),
          t("att.time_first", "TimeMix", (D,)), t("att.time_mix_k", "TimeMix", (1, 1, D)),
          t("att.time_mix_v", "TimeMix", (1, 1, D)), t("ln.weight", "LayerNorm", (D,))]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: p.b for p in wm.pairs}
    assert got["mix.bonus"] == "att.time_first"
    assert got["mix.mix_key"] == "att.time_mix_k" and got["mix.mix_value"] == "att.time_mix_v"


def _moved_norm() -> tuple[WeightSide, WeightSide]:
    """A norm before the first block on paddle's side, inside block 0 (registered last) on torch's."""
    pd = [t("pre_ln.weight", "LayerNorm", (D,))]
    th: list[TensorInfo] = []
    for i in range(2):
        pd += [t(f"layers.{i}.fc.weight", "Linear", (D, D + 1)), t(f"layers.{i}.norm1.weight", "LayerNorm", (D,)),
               t(f"layers.{i}.norm2.weight", "LayerNorm", (D,))]
        th += [t(f"blocks.{i}.fc.weight", "Linear", (D + 1, D)), t(f"blocks.{i}.ln1.weight", "LayerNorm", (D,)),
               t(f"blocks.{i}.ln2.weight", "LayerNorm", (D,))]
    th.insert(3, t("blocks.0.ln0.weight", "LayerNorm", (D,)))
    pd.append(t("final.weight", "LayerNorm", (D,)))
    th.append(t("ln_out.weight", "LayerNorm", (D,)))
    return WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD)


def test_a_norm_moved_into_the_first_block_pairs_in_call_order_only() -> None:
    a, b = _moved_norm()
    assert not match_weights(a, b).ok  # registration order cannot tell: refused, not guessed
    calls_a = {"pre_ln": 0, "layers.0": 1, "layers.0.norm1": 2, "layers.0.fc": 3, "layers.0.norm2": 4,
               "layers.1": 5, "layers.1.norm1": 6, "layers.1.fc": 7, "layers.1.norm2": 8, "final": 9}
    calls_b = {"blocks.0": 0, "blocks.0.ln0": 1, "blocks.0.ln1": 2, "blocks.0.fc": 3, "blocks.0.ln2": 4,
               "blocks.1": 5, "blocks.1.ln1": 6, "blocks.1.fc": 7, "blocks.1.ln2": 8, "ln_out": 9}
    wm = match_weights(in_call_order(a, calls_a), in_call_order(b, calls_b))
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: (p.b, p.how) for p in wm.pairs}
    assert got["pre_ln.weight"] == ("blocks.0.ln0.weight", "call order")
    assert got["layers.0.norm1.weight"][0] == "blocks.0.ln1.weight"
    assert got["layers.0.norm2.weight"][0] == "blocks.0.ln2.weight"
    assert got["final.weight"][0] == "ln_out.weight"


def test_tables_with_a_padding_row_more_pair_their_common_rows() -> None:
    pd = [t(f"{n}.embedding.weight", "Embedding", (rows + 1, D)) for n, rows in (("site", 10), ("app", 7), ("device", 5))]
    th = [t(f"emb_l.{i}.weight", "EmbeddingBag", (rows, D)) for i, rows in enumerate((10, 7, 5))]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: (p.b, p.a_part, p.how) for p in wm.pairs}
    assert got["app.embedding.weight"] == ("emb_l.1.weight", (0, 7), "extra rows")
    # tables whose extra rows differ in count are not guessed
    th[1] = t("emb_l.1.weight", "EmbeddingBag", (6, D))
    assert not match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD)).ok


def test_a_transposed_left_over_pair_round_trips_through_a_mapping_file(tmp_path: Path) -> None:
    pd = [t("layers.0.weight", "GraphLayer", (5, D)), t("layers.0.bias", "GraphLayer", (D,))]
    th = [t("conv1.lin.weight", "Linear", (D, 5)), t("conv1.bias", "GCNConv", (D,))]
    a, b = WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD)
    doc = match_weights(a, b).to_json()
    path = tmp_path / "map.json"
    path.write_text(json.dumps(doc))
    pins, _ = mapping_pins(load_mapping(path), a, b)
    again = match_weights(a, b, pins=pins)
    assert {(p.a, p.b) for p in again.pairs} == {("layers.0.weight", "conv1.lin.weight"), ("layers.0.bias", "conv1.bias")}
    # without the axes the entry says, the shapes do not fit: refused with both shapes named
    for e in doc["weights"]:
        e.pop("paddle_axes", None)
    path.write_text(json.dumps(doc))
    pins, _ = mapping_pins(load_mapping(path), a, b)
    with pytest.raises(MappingError, match=r"\[5, 8\].*cannot be conv1.lin.weight \[8, 5\]"):
        match_weights(a, b, pins=pins)


def test_a_block_whose_branches_sit_at_other_depths_is_one_place_for_its_fused_units() -> None:
    """Paddle's block holds its branches as units of one depth (``one``, ``red``, ``three``,
    ``proj``, each a conv and a BatchNorm); torch fuses the two 1x1 units reading the block's
    input into ``reduce`` and wraps its other branches one or two Sequentials deeper. The
    branches that pair (``three`` ~ ``branch3.0``, ``proj`` ~ ``branch_pool.1``) have parents at
    other depths; the block's partner is their nearest common ancestor, and inside that pair the
    two 1x1 units are the rows of the fused one, in order."""
    cls = {"Conv2D": ["paddle.nn.layer.conv.Conv2D", "paddle.nn.layer.layers.Layer"],
           "BatchNorm": ["paddle.nn.layer.norm.BatchNorm", "paddle.nn.layer.layers.Layer"],
           "Conv2d": ["torch.nn.modules.conv.Conv2d", "torch.nn.modules.module.Module"],
           "BatchNorm2d": ["torch.nn.modules.batchnorm.BatchNorm2d", "torch.nn.modules.module.Module"]}

    def unit(path: str, conv: str, bn: str, cout: int, cin: int, k: int, types: tuple[str, str]) -> list[TensorInfo]:
        return [t(f"{path}.{conv}.weight", types[0], (cout, cin, k, k)), t(f"{path}.{bn}.weight", types[1], (cout,)),
                t(f"{path}.{bn}.bias", types[1], (cout,))]

    p, q = ("Conv2D", "BatchNorm"), ("Conv2d", "BatchNorm2d")
    pd, th = [], []
    for i in range(2):
        pd += [*unit(f"b{i}.one", "conv", "bn", 4, 8, 1, p), *unit(f"b{i}.red", "conv", "bn", 4, 8, 1, p),
               *unit(f"b{i}.three", "conv", "bn", 6, 4, 3, p), *unit(f"b{i}.proj", "conv", "bn", 2, 8, 1, p)]
        th += [*unit(f"blocks.{i}.reduce", "0", "1", 8, 8, 1, q), *unit(f"blocks.{i}.branch3.0", "0", "1", 6, 4, 3, q),
               *unit(f"blocks.{i}.branch_pool.1", "0", "1", 2, 8, 1, q)]
    wm = match_weights(WeightSide("paddle", tuple(pd), {k: v for k, v in cls.items() if "2d" not in k}),
                       WeightSide("torch", tuple(th), {k: v for k, v in cls.items() if "2d" in k}))
    assert wm.ok, wm.problem_text("A", "B")
    got = {(p.a, p.b_part) for p in wm.pairs if p.b == "blocks.1.reduce.0.weight"}
    assert got == {("b1.one.conv.weight", (0, 4)), ("b1.red.conv.weight", (4, 8))}, wm.pairs
    assert {(p.a, p.b_part) for p in wm.pairs if p.b == "blocks.0.reduce.1.bias"} == {
        ("b0.one.bn.bias", (0, 4)), ("b0.red.bn.bias", (4, 8))}, wm.pairs
