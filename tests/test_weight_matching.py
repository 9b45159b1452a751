"""The weight-matching engine (padiff_trace.matching._weightmatch) on the layouts real libraries use.

Fast: tensor lists only (names, shapes, class hierarchies as a recorder writes them); one
slow test runs a mapping file end to end. The real third-party pairs recorded end to end are
in test_real_pairs.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from padiff_trace import MappingError
from padiff_trace.matching import parse_mapping
from padiff_trace.matching._weightmap import TensorInfo
from padiff_trace.matching._weightmatch import WeightSide, mapping_pins, match_weights, module_anchors

H, F, V, P = 8, 32, 50, 16
PD = {"Linear": ["paddle.nn.layer.common.Linear", "paddle.nn.layer.layers.Layer"],
      "LayerNorm": ["paddle.nn.layer.norm.LayerNorm", "paddle.nn.layer.layers.Layer"],
      "Embedding": ["paddle.nn.layer.common.Embedding", "paddle.nn.layer.layers.Layer"]}
TD = {"Linear": ["torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"],
      "LayerNorm": ["torch.nn.modules.normalization.LayerNorm", "torch.nn.modules.module.Module"],
      "Embedding": ["torch.nn.modules.sparse.Embedding", "torch.nn.modules.module.Module"],
      "Conv1D": ["transformers.pytorch_utils.Conv1D", "torch.nn.modules.module.Module"]}


def t(name: str, mtype: str, shape: tuple[int, ...], param: bool = True, trainable: bool = True,
      persistent: bool = True) -> TensorInfo:
    mod, _, local = name.rpartition(".")
    return TensorInfo(name, mod, local, mtype, shape, param, trainable and param, persistent)


def paddle_linear(prefix: str, i: int, o: int) -> list[TensorInfo]:
    return [t(f"{prefix}.weight", "Linear", (i, o)), t(f"{prefix}.bias", "Linear", (o,))]


def torch_linear(prefix: str, i: int, o: int, mtype: str = "Linear") -> list[TensorInfo]:
    w = (i, o) if mtype == "Conv1D" else (o, i)
    return [t(f"{prefix}.weight", mtype, w), t(f"{prefix}.bias", mtype, (o,))]


def norm(prefix: str, mtype: str = "LayerNorm") -> list[TensorInfo]:
    return [t(f"{prefix}.weight", mtype, (H,)), t(f"{prefix}.bias", mtype, (H,))]


def paddle_bert(layers: int = 2) -> WeightSide:
    """paddle.nn.TransformerEncoderLayer naming and registration order (paddlenlp BERT)."""
    ts = [t("embeddings.word_embeddings.weight", "Embedding", (V, H)),
          t("embeddings.position_embeddings.weight", "Embedding", (P, H))] + norm("embeddings.layer_norm")
    for i in range(layers):
        p = f"encoder.layers.{i}"
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            ts += paddle_linear(f"{p}.self_attn.{n}", H, H)
        ts += paddle_linear(f"{p}.linear1", H, F) + paddle_linear(f"{p}.linear2", F, H) + norm(f"{p}.norm1") + norm(f"{p}.norm2")
    return WeightSide("paddle", tuple(ts), PD)


def torch_bert(layers: int = 2) -> WeightSide:
    """Hugging Face BERT naming and registration order."""
    ts = [t("embeddings.word_embeddings.weight", "Embedding", (V, H)),
          t("embeddings.position_embeddings.weight", "Embedding", (P, H))] + norm("embeddings.LayerNorm")
    ts.append(t("embeddings.position_ids", "", (1, P), param=False, persistent=False))
    for i in range(layers):
        p = f"encoder.layer.{i}"
        for n in ("query", "key", "value"):
            ts += torch_linear(f"{p}.attention.self.{n}", H, H)
        ts += torch_linear(f"{p}.attention.output.dense", H, H) + norm(f"{p}.attention.output.LayerNorm")
        ts += torch_linear(f"{p}.intermediate.dense", H, F) + torch_linear(f"{p}.output.dense", F, H) + norm(f"{p}.output.LayerNorm")
    return WeightSide("torch", tuple(ts), TD)


def pairs(wm) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {p.a: p.b for p in wm.pairs if p.a_part is None and p.b_part is None}


def test_renamed_and_reordered_blocks_pair_by_structure() -> None:
    wm = match_weights(paddle_bert(), torch_bert())
    assert wm.ok, wm.problem_text("A", "B")
    got = pairs(wm)
    assert got["encoder.layers.1.self_attn.q_proj.weight"] == "encoder.layer.1.attention.self.query.weight"
    assert got["encoder.layers.1.self_attn.v_proj.bias"] == "encoder.layer.1.attention.self.value.bias"
    assert got["encoder.layers.0.self_attn.out_proj.weight"] == "encoder.layer.0.attention.output.dense.weight"
    assert got["encoder.layers.0.linear1.weight"] == "encoder.layer.0.intermediate.dense.weight"
    assert got["encoder.layers.1.norm2.bias"] == "encoder.layer.1.output.LayerNorm.bias"
    assert got["embeddings.layer_norm.weight"] == "embeddings.LayerNorm.weight"
    q = next(p for p in wm.pairs if p.a == "encoder.layers.0.self_attn.q_proj.weight")
    assert q.relative_perm == (1, 0)  # paddle [in, out] -> torch [out, in]: also when square
    assert ("b", "embeddings.position_ids", "derived state (the model computes it): not copied") in wm.skipped


def test_fused_qkv_conv1d_is_split_and_conv1d_is_a_linear() -> None:
    """HF GPT-2: c_attn Conv1D [H, 3H] = q|k|v; c_proj/c_fc Conv1D stored [in, out]."""
    pd, th = [], []
    for i in range(2):
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            pd += paddle_linear(f"decoder.layers.{i}.self_attn.{n}", H, H)
        pd += paddle_linear(f"decoder.layers.{i}.linear1", H, F) + paddle_linear(f"decoder.layers.{i}.linear2", F, H)
        th += torch_linear(f"h.{i}.attn.c_attn", H, 3 * H, "Conv1D") + torch_linear(f"h.{i}.attn.c_proj", H, H, "Conv1D")
        th += torch_linear(f"h.{i}.mlp.c_fc", H, F, "Conv1D") + torch_linear(f"h.{i}.mlp.c_proj", F, H, "Conv1D")
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    assert wm.ok, wm.problem_text("A", "B")
    packed = [(p.a, p.b_part) for p in wm.pairs if p.b == "h.1.attn.c_attn.weight"]
    assert packed == [(f"decoder.layers.1.self_attn.{n}.weight", (k * H, (k + 1) * H)) for k, n in enumerate(("q_proj", "k_proj", "v_proj"))]
    bias = [(p.a, p.b_part) for p in wm.pairs if p.b == "h.0.attn.c_attn.bias"]
    assert [a for a, _ in bias] == [f"decoder.layers.0.self_attn.{n}.bias" for n in ("q_proj", "k_proj", "v_proj")]
    got = pairs(wm)
    assert got["decoder.layers.0.self_attn.out_proj.weight"] == "h.0.attn.c_proj.weight"
    assert got["decoder.layers.0.linear2.weight"] == "h.0.mlp.c_proj.weight"
    # paddle Linear and HF Conv1D are both [in, out]: no transpose, also for the square c_proj
    assert next(p for p in wm.pairs if p.b == "h.0.attn.c_proj.weight").relative_perm is None


def test_a_users_own_copy_of_conv1d_is_the_linear_stored_in_out() -> None:
    """A GPT-2 port that copies transformers' Conv1D into its own file (hierarchy
    ``port.Conv1D``, not the library's): the bare name still says a Linear stored [in, out],
    so fc1 (paddle [H, F]) pairs with c_fc, not with c_proj whose stored shape [F, H] is fc1's
    canonical one, and q|k|v pack into c_attn."""
    own = {**TD, "Conv1D": ["port.Conv1D", "torch.nn.modules.module.Module"]}
    pd = [x for n in ("q_proj", "k_proj", "v_proj", "out_proj") for x in paddle_linear(f"layers.0.attn.{n}", H, H)]
    pd += paddle_linear("layers.0.ffn.fc1", H, F) + paddle_linear("layers.0.ffn.fc2", F, H)
    th = torch_linear("h.0.attn.c_attn", H, 3 * H, "Conv1D") + torch_linear("h.0.attn.c_proj", H, H, "Conv1D")
    th += torch_linear("h.0.mlp.c_fc", H, F, "Conv1D") + torch_linear("h.0.mlp.c_proj", F, H, "Conv1D")
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), own))
    assert wm.ok, wm.problem_text("A", "B")
    got = pairs(wm)
    assert got["layers.0.ffn.fc1.weight"] == "h.0.mlp.c_fc.weight" and got["layers.0.ffn.fc2.weight"] == "h.0.mlp.c_proj.weight"
    assert [p.a for p in wm.pairs if p.b == "h.0.attn.c_attn.weight"] == [
        f"layers.0.attn.{n}.weight" for n in ("q_proj", "k_proj", "v_proj")]
    assert next(p for p in wm.pairs if p.b == "h.0.attn.c_proj.weight").relative_perm is None


def test_torch_mha_in_proj_is_three_paddle_projections() -> None:
    pd = [x for n in ("q_proj", "k_proj", "v_proj", "out_proj") for x in paddle_linear(f"layers.0.self_attn.{n}", H, H)]
    th = [t("layers.0.self_attn.in_proj_weight", "MultiheadAttention", (3 * H, H)),
          t("layers.0.self_attn.in_proj_bias", "MultiheadAttention", (3 * H,))]
    th += torch_linear("layers.0.self_attn.out_proj", H, H, "NonDynamicallyQuantizableLinear")
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th)))
    assert wm.ok, wm.problem_text("A", "B")
    k = next(p for p in wm.pairs if p.a == "layers.0.self_attn.k_proj.weight")
    assert (k.b, k.b_part, k.a_perm) == ("layers.0.self_attn.in_proj_weight", (H, 2 * H), (1, 0))
    assert pairs(wm)["layers.0.self_attn.out_proj.weight"] == "layers.0.self_attn.out_proj.weight"


def test_a_missing_tensor_is_refused_per_tensor_never_shifted() -> None:
    """One LayerNorm fewer on each side, in different blocks: nothing slides into another slot."""
    a = paddle_bert()
    b = torch_bert()
    a2 = WeightSide("paddle", tuple(x for x in a.tensors if not x.name.startswith("encoder.layers.0.norm2")), PD)
    b2 = WeightSide("torch", tuple(x for x in b.tensors if not x.name.startswith("encoder.layer.1.output.LayerNorm")), TD)
    wm = match_weights(a2, b2)
    # in each block one side has one LayerNorm, the other two: which is which is not known, so
    # those are refused (listed), never guessed; everything else still pairs
    names_a = {x.name.rsplit(".", 1)[0] for x in wm.unmatched_a}
    names_b = {x.name.rsplit(".", 1)[0] for x in wm.unmatched_b}
    assert names_a == {"encoder.layers.0.norm1", "encoder.layers.1.norm1", "encoder.layers.1.norm2"}
    assert names_b == {"encoder.layer.0.attention.output.LayerNorm", "encoder.layer.0.output.LayerNorm",
                       "encoder.layer.1.attention.output.LayerNorm"}
    got = pairs(wm)
    assert got["encoder.layers.1.linear2.bias"] == "encoder.layer.1.output.dense.bias"
    assert not any("norm" in a and a.startswith("encoder") for a in got)
    text = wm.problem_text("trace", "model")
    assert "cannot match 6 trace and 6 model" in text and '"weights"' in text and "encoder.layers.0.norm1" in text


def test_library_subclass_resolves_through_its_hierarchy() -> None:
    classes = dict(PD, GPTLayerNorm=["paddlenlp.transformers.gpt.modeling.GPTLayerNorm", "paddle.nn.layer.norm.LayerNorm",
                                     "paddle.nn.layer.layers.Layer"])
    a = WeightSide("paddle", tuple(norm("ln_f", "GPTLayerNorm") + norm("head_norm")), classes)
    b = WeightSide("torch", tuple(norm("final_layer_norm") + norm("norm_out")), TD)
    wm = match_weights(a, b)
    # the names say nothing (ln_f ~ final_layer_norm): type, role and registration order pair them
    assert wm.ok and {p.how for p in wm.pairs} == {"role+order", "structure"}  # head_norm ~ norm_out share "norm"
    assert wm.to_json()["weights"][0]["confidence"] == "medium"  # ln_f ~ final_layer_norm; its bias follows
    assert pairs(wm)["ln_f.weight"] == "final_layer_norm.weight"


def test_role_names_outweigh_registration_order() -> None:
    """Registration order k, q, v on one side: module names (key~k_proj) say which is which."""
    pd = [x for n in ("q_proj", "k_proj", "v_proj") for x in paddle_linear(f"attn.{n}", H, H)]
    th = [x for n in ("key", "query", "value") for x in torch_linear(f"attn.{n}", H, H)]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    got = pairs(wm)
    assert got["attn.q_proj.weight"] == "attn.query.weight" and got["attn.k_proj.weight"] == "attn.key.weight"
    assert next(p for p in wm.pairs if p.a == "attn.q_proj.weight").how == "name"
    assert pairs(wm)["attn.q_proj.bias"] == "attn.query.bias"  # the bias follows its weight


def test_encoder_and_decoder_blocks_with_the_same_index_stay_apart() -> None:
    """BART-like: layers.0 of the encoder and of the decoder share block index 0; HF registers
    k, v, q; the decoder's cross attention is cross_attn in one library, encoder_attn in the other."""
    pd, th = [], []
    for stack, attns in (("encoder", ("self_attn",)), ("decoder", ("self_attn", "cross_attn"))):
        for att in attns:
            for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
                pd += paddle_linear(f"{stack}.{stack}.layers.0.{att}.{n}", H, H)
        pd += paddle_linear(f"{stack}.{stack}.layers.0.linear2", F, H)
    for stack, attns in (("encoder", ("self_attn",)), ("decoder", ("self_attn", "encoder_attn"))):
        for att in attns:
            for n in ("k_proj", "v_proj", "q_proj", "out_proj"):
                th += torch_linear(f"{stack}.layers.0.{att}.{n}", H, H)
        th += torch_linear(f"{stack}.layers.0.fc2", F, H)
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    assert wm.ok
    got = pairs(wm)
    for stack, a_att, b_att in (("encoder", "self_attn", "self_attn"), ("decoder", "self_attn", "self_attn"),
                                ("decoder", "cross_attn", "encoder_attn")):
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            for local in ("weight", "bias"):
                assert got[f"{stack}.{stack}.layers.0.{a_att}.{n}.{local}"] == f"{stack}.layers.0.{b_att}.{n}.{local}"
    assert got["decoder.decoder.layers.0.linear2.bias"] == "decoder.layers.0.fc2.bias"


def test_derived_state_is_compared_never_copied() -> None:
    a = WeightSide("paddle", (t("layers.0.rotary.inv_freq", "Rotary", (4,), param=False),
                              t("layers.0.rotary.cos_cached", "Rotary", (1, 16, 1, 8), param=False)))
    b = WeightSide("torch", (t("rotary_emb.inv_freq", "LlamaRotaryEmbedding", (4,), param=False, persistent=False),))
    wm = match_weights(a, b)
    assert wm.ok
    inv = [p for p in wm.pairs if p.a == "layers.0.rotary.inv_freq"]
    assert len(inv) == 1 and inv[0].transfer is False and inv[0].how == "derived"
    assert ("a", "layers.0.rotary.cos_cached", "derived state (the model computes it): not copied") in wm.skipped


def test_derived_state_kept_once_is_compared_with_every_per_block_copy() -> None:
    """One rotary table for the model (HF) against one per attention layer (paddlenlp): each
    per-layer copy is compared with the single table, never copied; a table of one layer
    alone is not the same situation (a group per block index would be needed)."""
    rot = {"Rot": ["x.Rot", "torch.nn.modules.module.Module"]}
    a = WeightSide("paddle", tuple(
        t(f"layers.{i}.attn.rotary.inv_freq", "Rot", (4,), param=False, persistent=False) for i in range(3)
    ), PD)
    b = WeightSide("torch", (t("rotary.inv_freq", "Rot", (4,), param=False, persistent=False),), {**TD, **rot})
    wm = match_weights(a, b)
    shared = [(p.a, p.b) for p in wm.pairs if p.how == "shared derived"]
    assert shared == [(f"layers.{i}.attn.rotary.inv_freq", "rotary.inv_freq") for i in range(3)]
    assert all(not p.transfer for p in wm.pairs) and module_anchors(wm) == {}
    # two single tables outside blocks, or copies that share a block: left alone
    b2 = WeightSide("torch", (t("rotary.inv_freq", "Rot", (4,), param=False, persistent=False),
                              t("rotary2.inv_freq", "Rot", (4,), param=False, persistent=False)), {**TD, **rot})
    assert not [p for p in match_weights(a, b2).pairs if p.how == "shared derived"]


def test_frozen_and_buffers_without_counterpart_are_skipped_with_a_reason() -> None:
    a = WeightSide("paddle", (t("w.weight", "Linear", (H, H)), t("pos.table", "Sinusoid", (P, H), trainable=False)), PD)
    b = WeightSide("torch", (t("w.weight", "Linear", (H, H)), t("w.mask", "Linear", (H,), param=False)), TD)
    wm = match_weights(a, b)
    assert wm.ok
    assert ("a", "pos.table", "frozen parameter with no counterpart on the other side") in wm.skipped
    assert ("b", "w.mask", "buffer with no counterpart on the other side") in wm.skipped


def test_mapping_pins_one_ambiguous_pair_for_transfer_and_compare() -> None:
    """Two same-shaped Linears whose names say nothing: order pairs them; a pin reverses it."""
    a = WeightSide("paddle", tuple(paddle_linear("blk.left", H, H) + paddle_linear("blk.right", H, H)), PD)
    b = WeightSide("torch", tuple(torch_linear("blk.fst", H, H) + torch_linear("blk.snd", H, H)), TD)
    assert pairs(match_weights(a, b))["blk.left.weight"] == "blk.fst.weight"
    mapping = parse_mapping({"version": 1, "weights": [{"paddle": "blk.left.weight", "torch": "blk.snd.weight"},
                                                        {"paddle": "blk.left.bias", "torch": "blk.snd.bias"}]}, "m.json")
    wm = match_weights(a, b, *mapping_pins(mapping, a, b))
    got = pairs(wm)
    assert got["blk.left.weight"] == "blk.snd.weight" and got["blk.right.weight"] == "blk.fst.weight"
    assert next(p for p in wm.pairs if p.a == "blk.left.weight").how == "mapping"
    # the weight map written by a transfer is itself a mapping file that reproduces the pairs
    again = parse_mapping(json.loads(wm.dumps()), "weightmap.json")
    assert pairs(match_weights(a, b, *mapping_pins(again, a, b))) == got
    # a module entry pins the module's tensors by local name
    mods = parse_mapping({"blk.left": "blk.snd"}, "m2.json")
    assert pairs(match_weights(a, b, *mapping_pins(mods, a, b)))["blk.left.bias"] == "blk.snd.bias"
    assert module_anchors(wm)["blk.left"] == "blk.snd"


def test_bad_pins_name_the_entry_and_both_shapes() -> None:
    a = WeightSide("paddle", tuple(paddle_linear("x", H, F)), PD)
    b = WeightSide("torch", tuple(torch_linear("y", H, H)), TD)
    m = parse_mapping({"weights": [{"paddle": "x.weight", "torch": "y.weight"}]}, "m.json")
    with pytest.raises(MappingError, match=r"m.json: weights entry 0.*x.weight \[8, 32\].*y.weight \[8, 8\]"):
        match_weights(a, b, *mapping_pins(m, a, b))
    m = parse_mapping({"weights": [{"paddle": "x.wieght", "torch": "y.weight"}]}, "m.json")
    with pytest.raises(MappingError, match=r"no tensor named 'x\.wieght' on side A"):
        match_weights(a, b, *mapping_pins(m, a, b))
    with pytest.raises(MappingError, match="names one side only"):
        parse_mapping({"weights": [{"paddle": "x.weight"}]}, "m.json")


def test_packed_share_conversion_round_trips() -> None:
    """What a transfer copies through a packed pair equals numpy slicing of the canonical tensor."""
    from padiff_trace.recorder._replay import _canonical, _to_target  # numpy helpers only

    rng = np.random.default_rng(0)
    c_attn = rng.standard_normal((H, 3 * H)).astype(np.float32)  # Conv1D [in, 3*out]
    q = _canonical(c_attn, (1, 0), (0, H), 0)  # canonical [out, in] rows 0:H
    np.testing.assert_array_equal(q, c_attn[:, :H].T)
    np.testing.assert_array_equal(_to_target(q, (1, 0)), c_attn[:, :H])  # into a paddle Linear [in, out]




def test_integer_inputs_in_another_convention_are_not_replayed() -> None:
    """B keeps its own integer input when it is A's data rearranged (labels the model shifts
    itself), and takes A's when the two are independent draws (each framework's randint)."""
    from padiff_trace.recorder._inputreplay import another_convention

    ids = np.random.default_rng(0).integers(4, 1000, (2, 8))
    shifted = np.concatenate([ids[:, 1:], np.full((2, 1), -100)], axis=1)
    assert "shifted by one position" in another_convention(shifted, ids)
    padded = ids.copy()
    padded[1, 6:] = -100  # another marker at ignored positions
    assert "another convention" in another_convention(ids, padded)
    assert another_convention(ids, np.random.default_rng(1).integers(4, 1000, (2, 8))) == ""
    assert another_convention(ids, ids) == ""
    assert another_convention(ids[:, :3], shifted[:, :3]) == ""  # too few elements to tell
    assert another_convention(ids.astype("float32"), shifted.astype("float32")) == ""  # float data: replayed
    assert another_convention(np.zeros_like(ids), np.zeros_like(ids) + 1) == ""  # one value: a placeholder
    mask = np.ones((2, 8), bool)
    mask[1, -2:] = False
    assert another_convention(mask, np.ones((2, 8), bool)) == ""  # an all-True placeholder mask: replayed

def _fused_llama(groups: int, heads: int = 4, kv: int = 2, d: int = 4) -> tuple[WeightSide, WeightSide]:
    """paddlenlp LLaMA with fuse_attention_qkv (qkv_proj [H, (heads + 2 kv) d], packed head
    group by head group when the recorder wrote ``pack_groups``) against HF's q/k/v_proj."""
    hid = heads * d
    pd, th = [], []
    for i in range(2):
        a = f"layers.{i}.self_attn"
        pd += [t(f"{a}.qkv_proj.weight", "Linear", (hid, (heads + 2 * kv) * d)), t(f"{a}.o_proj.weight", "Linear", (hid, hid))]
        th += [t(f"{a}.q_proj.weight", "Linear", (heads * d, hid)), t(f"{a}.k_proj.weight", "Linear", (kv * d, hid)),
               t(f"{a}.v_proj.weight", "Linear", (kv * d, hid)), t(f"{a}.o_proj.weight", "Linear", (hid, hid))]
    packs = {f"layers.{i}.self_attn.qkv_proj": groups for i in range(2)} if groups > 1 else {}
    return WeightSide("paddle", tuple(pd), PD, pack_groups=packs), WeightSide("torch", tuple(th), TD)


def test_qkv_packed_head_by_head_takes_each_parts_share_of_every_group() -> None:
    """GQA, 4 heads, 2 key/value heads of 4: paddlenlp packs [kv group][q of 2 heads | k | v]."""
    wm = match_weights(*_fused_llama(groups=2))
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.b: (p.a_part, p.a_groups) for p in wm.pairs if p.a == "layers.1.self_attn.qkv_proj.weight"}
    assert got == {"layers.1.self_attn.q_proj.weight": ((0, 8), 2), "layers.1.self_attn.k_proj.weight": ((8, 12), 2),
                   "layers.1.self_attn.v_proj.weight": ((12, 16), 2)}
    assert "in each of 2 groups" in next(iter(p for p in wm.pairs if p.a_groups == 2)).conversion()
    entry = next(e for e in wm.to_json()["weights"] if e["torch"] == "layers.0.self_attn.k_proj.weight")
    assert entry["paddle_part"] == [8, 12] and entry["paddle_groups"] == 2
    # written to weightmap.json and handed back as a mapping file, the shares are pinned as they were
    a, b = _fused_llama(groups=2)
    pinned = match_weights(a, b, *mapping_pins(parse_mapping(json.loads(wm.dumps()), "weightmap.json"), a, b))
    assert [(p.a, p.b, p.a_part, p.a_groups, p.how) for p in pinned.pairs if p.a_part is not None] == \
        [(p.a, p.b, p.a_part, p.a_groups, "mapping") for p in wm.pairs if p.a_part is not None]
    # without the recorder's word the parts are consecutive blocks (GPT-2's c_attn, torch MHA)
    plain = match_weights(*_fused_llama(groups=1))
    assert {p.a_part for p in plain.pairs if p.a == "layers.1.self_attn.qkv_proj.weight"} == {(0, 16), (16, 24), (24, 32)}
    assert all(p.a_groups == 1 for p in plain.pairs)


def test_packed_part_reads_and_writes_a_share_of_every_group() -> None:
    from padiff_trace.arrays import packed_part, put_packed_part

    w = np.arange(24 * 3).reshape(24, 3)  # canonical [out, in]; 2 groups of [q 8 | k 2 | v 2] rows
    k = packed_part(w, 8, 10, groups=2)
    np.testing.assert_array_equal(k, w[[8, 9, 20, 21]])
    np.testing.assert_array_equal(packed_part(w, 0, 8), w[:8])
    rebuilt = np.zeros_like(w)
    for lo, hi in ((0, 8), (8, 10), (10, 12)):
        put_packed_part(rebuilt, packed_part(w, lo, hi, groups=2), lo, hi, groups=2)
    np.testing.assert_array_equal(rebuilt, w)


def test_qkv_packed_two_ways_is_regrouped_into_three_pairs() -> None:
    """paddlenlp GPT's fused qkv_proj (head by head, 2 heads) against GPT-2's c_attn ([q | k | v]):
    the same shape, the same three projections in another order."""
    pd = [t("h.0.attn.qkv_proj.weight", "Linear", (H, 3 * H)), t("h.0.attn.qkv_proj.bias", "Linear", (3 * H,))]
    th = torch_linear("h.0.attn.c_attn", H, 3 * H, "Conv1D")
    wm = match_weights(WeightSide("paddle", tuple(pd), PD, pack_groups={"h.0.attn.qkv_proj": 2}),
                       WeightSide("torch", tuple(th), TD, pack_groups={"h.0.attn.c_attn": 1}))
    assert wm.ok, wm.problem_text("A", "B")
    w = [(p.a_part, p.a_groups, p.b_part, p.b_groups) for p in wm.pairs if p.b == "h.0.attn.c_attn.weight"]
    assert w == [((0, 4), 2, (0, 8), 1), ((4, 8), 2, (8, 16), 1), ((8, 12), 2, (16, 24), 1)]
    assert len([p for p in wm.pairs if p.b == "h.0.attn.c_attn.bias"]) == 3
    # the other side's packing unknown (a class QKV_PACKING does not list): never regrouped
    unknown = match_weights(WeightSide("paddle", tuple(pd), PD, pack_groups={"h.0.attn.qkv_proj": 2}),
                            WeightSide("torch", tuple(th), TD))
    assert [(p.a_part, p.b_part) for p in unknown.pairs] == [(None, None), (None, None)]
    # the same packing on both sides: one whole-tensor pair
    same = match_weights(WeightSide("paddle", tuple(pd), PD, pack_groups={"h.0.attn.qkv_proj": 2}),
                         WeightSide("paddle", tuple(pd), PD, pack_groups={"h.0.attn.qkv_proj": 2}))
    assert [(p.a_part, p.b_part) for p in same.pairs] == [(None, None), (None, None)]


def test_mapping_index_takes_an_element_of_a_stack() -> None:
    """``*_index`` names the element of that side's stacked tensor a part then cuts; anything but
    a count >= 0 is refused in one line naming the entry."""
    ok = {"weights": [{"paddle": "e.1.gate.weight", "torch": "experts.gate_up", "torch_index": 1, "torch_part": [0, 8]}]}
    m = parse_mapping(ok, "m.json")
    assert m.weights[0].indexes == {"torch": 1}
    (w,) = m.oriented("paddle", "torch").weights
    assert (w.a_index, w.b_index, w.b_part) == (None, 1, (0, 8))
    for bad in (-1, 1.5, True, "1"):
        entry = {"paddle": "e.1.gate.weight", "torch": "experts.gate_up", "torch_index": bad}
        with pytest.raises(MappingError, match=r"m.json: weights entry 0: torch_index must be a count >= 0"):
            parse_mapping({"weights": [entry]}, "m.json")


def test_mapping_groups_need_a_part_and_a_count() -> None:
    ok = {"weights": [{"paddle": "a.qkv.weight", "torch": "a.k.weight", "paddle_part": [8, 12], "paddle_groups": 2}]}
    m = parse_mapping(ok, "m.json")
    assert m.weights[0].groups == {"paddle": 2}
    for bad in ({"paddle": "a.qkv.weight", "torch": "a.k.weight", "paddle_groups": 2},
                {"paddle": "a.qkv.weight", "torch": "a.k.weight", "paddle_part": [8, 12], "paddle_groups": 0}):
        with pytest.raises(MappingError, match="paddle_groups must be a count"):
            parse_mapping({"weights": [bad]}, "m.json")

_PADDLE_SPEC = """
import numpy as np
import paddle


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.left = paddle.nn.Linear(8, 8)
        self.right = paddle.nn.Linear(8, 8)

    def forward(self, x):
        return self.right(paddle.nn.functional.relu(self.left(x)))


def model():
    paddle.seed(0)
    return Net()


def inputs():
    return (paddle.to_tensor(np.random.default_rng(0).standard_normal((4, 8)).astype("float32")),)


def loss(out):
    return (out**2).mean()
"""

_TORCH_SPEC = """
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fst = torch.nn.Linear(8, 8)
        self.snd = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.fst(torch.relu(self.snd(x)))


def model():
    return Net()


def inputs():
    return (torch.zeros(4, 8),)


def loss(out):
    return (out**2).mean()
"""


@pytest.mark.slow
def test_mapping_file_pins_an_ambiguous_pair_for_transfer_and_comparison(tmp_path: Path) -> None:
    """Two same-shaped Linears whose names say nothing, used in opposite registration order:
    without a mapping the transfer copies by registration order and that run diverges, so
    ``run`` records B again pairing them in the order the models call them, which aligns and
    says so; one user-written ``weights`` entry (with its bias) fixes the transfer and the
    comparison alike from the start."""
    pytest.importorskip("paddle")
    pytest.importorskip("torch")
    spec_a, spec_b = tmp_path / "net_paddle.py", tmp_path / "net_torch.py"
    spec_a.write_text(_PADDLE_SPEC)
    spec_b.write_text(_TORCH_SPEC)

    def run(out: Path, *flags: str) -> tuple[int, dict[str, object], dict[str, object]]:
        cmd = [sys.executable, "-m", "padiff_trace", "run", str(spec_a), str(spec_b), "--out", str(out), *flags]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert proc.returncode in (0, 1), proc.stderr[-3000:]
        wm = json.loads((out / "net_torch.trace" / "weightmap.json").read_text())
        return proc.returncode, wm, json.loads((out / "report" / "report.json").read_text())

    rc, wm, report = run(tmp_path / "by_order")
    assert {(e["paddle"], e["torch"]) for e in wm["weights"]} >= {("left.weight", "fst.weight")}  # registration order
    assert rc == 0, report["first_divergence"]  # kept: B recorded again in call order
    again = json.loads((tmp_path / "by_order" / "net_torch-call-order.trace" / "weightmap.json").read_text())
    assert {(e["paddle"], e["torch"]) for e in again["weights"]} >= {("left.weight", "snd.weight"), ("right.weight", "fst.weight")}
    assert any("order the models call their modules" in c["text"] for c in report["diagnosis"]), report["diagnosis"]
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({"version": 1, "weights": [
        {"paddle": "left.weight", "torch": "snd.weight"}, {"paddle": "left.bias", "torch": "snd.bias"}]}))
    rc, wm, report = run(tmp_path / "pinned", "--mapping", str(mapping))
    assert rc == 0, report["first_divergence"]
    got = {(e["paddle"], e["torch"]): e["how"] for e in wm["weights"]}
    assert got[("left.weight", "snd.weight")] == "mapping" and ("right.weight", "fst.weight") in got
    compared = {(p["a"]["module"], p["b"]["module"]) for p in report["weights"]}  # type: ignore[index]
    assert compared == {("left", "snd"), ("right", "fst")}
    calls = {(c["a"], c["b"]) for c in report["alignment"]}  # type: ignore[index]
    assert ("left#0", "snd#0") in calls and ("right#0", "fst#0") in calls


def test_a_word_that_tells_two_norms_apart_outweighs_registration_order() -> None:
    """paddlenlp NeZha registers a block's last LayerNorm before the attention holding the other;
    HF names them attention.output.LayerNorm and output.LayerNorm. "attention" is the only word
    that tells them apart on each side, and it says which is which."""
    a = WeightSide("paddle", tuple(norm("layer.0.layer_norm") + norm("layer.0.attention.layer_norm")), PD)
    b = WeightSide("torch", tuple(norm("layer.0.attention.output.LayerNorm") + norm("layer.0.output.LayerNorm")), TD)
    got = pairs(match_weights(a, b))
    assert got["layer.0.layer_norm.weight"] == "layer.0.output.LayerNorm.weight"
    assert got["layer.0.attention.layer_norm.bias"] == "layer.0.attention.output.LayerNorm.bias"


def test_bare_matrices_pair_with_linear_weights_by_name_then_as_the_last_left() -> None:
    """A model holding its projections as bare [in, out] matrices (paddlenlp CLIP) against Linear
    layers (HF): text ~ text by name; vision ~ visual as the only ones left; transposed by shape."""
    a = WeightSide("paddle", (t("text_projection", "CLIPModel", (H, P)), t("vision_projection", "CLIPModel", (H, P))), PD)
    b = WeightSide("torch", (t("visual_projection.weight", "Linear", (P, H)), t("text_projection.weight", "Linear", (P, H))), TD)
    wm = match_weights(a, b)
    assert wm.ok and pairs(wm) == {"text_projection": "text_projection.weight", "vision_projection": "visual_projection.weight"}
    assert {w["convert"] for w in wm.to_json()["weights"]} == {"transpose"}
    # square matrices: the shape cannot say which way they are stored, so they pair as they stand
    # (never transposed to fit); ``run`` tries the other way where the values diverge there
    sq = WeightSide("paddle", (t("text_projection", "CLIPModel", (H, H)),), PD)
    got = match_weights(sq, WeightSide("torch", (t("text_projection.weight", "Linear", (H, H)),), TD))
    assert [(p.a, p.b, p.a_perm, p.a_axes) for p in got.pairs] == [("text_projection", "text_projection.weight", None, None)]


def test_a_layout_observed_for_a_class_holds_on_both_sides_of_one_framework() -> None:
    """A square weight of a class the tables do not know, seen stored [in, out] in a recorded call:
    transposed against a torch Linear, copied as is against the same class (a float64 re-run)."""
    w = (t("attn.q_proj.weight", "Linear3D", (H, H)), t("attn.q_proj.bias", "Linear3D", (H,)))
    a = WeightSide("paddle", w, {}, {"Linear3D.weight": (1, 0)})
    lin = WeightSide("torch", tuple(torch_linear("attn.query", H, H)), TD)
    assert {p.how: p.relative_perm for p in match_weights(a, lin).pairs if p.a.endswith("weight")} == {"shape+order": (1, 0)}
    same = match_weights(a, WeightSide("paddle", w, {}))
    assert all(p.relative_perm is None for p in same.pairs) and len(same.pairs) == 2


def _hand_seq2seq() -> tuple[WeightSide, WeightSide]:
    """A hand port: paddle's built-in encoder/decoder layers (separate q, k, v, out; an FFN
    linear1 [H, 2H]) against a torch model of one's own: blocks named ``encoder_layer_0`` (no
    path index), a fused ``qkv``, a cross-attention ``q`` beside a fused ``kv``, and an output
    projection the paddle side ties to its embedding."""
    a = [t("embedding.weight", "Embedding", (V, H))]
    b = [t("tok_embed.weight", "Embedding", (V, H))]
    for i in range(2):
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            a += paddle_linear(f"decoder.layers.{i}.self_attn.{n}", H, H)
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            a += paddle_linear(f"decoder.layers.{i}.cross_attn.{n}", H, H)
        a += paddle_linear(f"decoder.layers.{i}.linear1", H, 2 * H) + paddle_linear(f"decoder.layers.{i}.linear2", 2 * H, H)
        p = f"decoder.blocks.decoder_layer_{i}"
        b += torch_linear(f"{p}.self_attn.qkv", H, 3 * H) + torch_linear(f"{p}.self_attn.proj", H, H)
        b += torch_linear(f"{p}.cross_attn.q", H, H) + torch_linear(f"{p}.cross_attn.kv", H, 2 * H)
        b += torch_linear(f"{p}.cross_attn.proj", H, H)
        b += torch_linear(f"{p}.ff.0", H, 2 * H) + torch_linear(f"{p}.ff.2", 2 * H, H)
    b.append(t("generator.weight", "Linear", (V, H)))
    return WeightSide("paddle", tuple(a), PD), WeightSide("torch", tuple(b), TD)


def test_fused_parts_are_neighbours_and_a_fused_name_says_which() -> None:
    """``kv`` takes k|v (its name lists them), never q|k; a ``q`` and a ``proj`` with a ``kv``
    between them are no fused pair, so an FFN ``linear1`` [H, 2H] stays the FFN's; blocks whose
    paths carry no index (``decoder_layer_0``) take the fused runs in registration order."""
    wm = match_weights(*_hand_seq2seq())
    assert wm.ok, wm.problem_text("A", "B")
    got = {(p.a, p.b): p.b_part for p in wm.pairs}
    for i in range(2):
        a, b = f"decoder.layers.{i}", f"decoder.blocks.decoder_layer_{i}"
        assert got[(f"{a}.self_attn.k_proj.weight", f"{b}.self_attn.qkv.weight")] == (H, 2 * H)
        assert got[(f"{a}.cross_attn.k_proj.weight", f"{b}.cross_attn.kv.weight")] == (0, H)
        assert got[(f"{a}.cross_attn.v_proj.weight", f"{b}.cross_attn.kv.weight")] == (H, 2 * H)
        assert got[(f"{a}.cross_attn.q_proj.weight", f"{b}.cross_attn.q.weight")] is None
        assert got[(f"{a}.linear1.weight", f"{b}.ff.0.weight")] is None


def test_an_output_projection_tied_on_one_side_is_the_embedding_again() -> None:
    """The one matrix left on one side, shaped like the other side's one embedding, while the
    other side has none left: tied there (low confidence, said so); a second candidate or a
    matrix left on both sides is never guessed."""
    a, b = _hand_seq2seq()
    wm = match_weights(a, b)
    tied = [p for p in wm.pairs if p.how == "tied"]
    assert [(p.a, p.b) for p in tied] == [("embedding.weight", "generator.weight")]
    assert next(e for e in wm.to_json()["weights"] if e["how"] == "tied")["confidence"] == "low"
    other = WeightSide("torch", (*b.tensors, t("lm_head.weight", "Linear", (V, H))), TD)
    assert not [p for p in match_weights(a, other).pairs if p.how == "tied"]


def _concat_projection() -> tuple[WeightSide, WeightSide]:
    """One Linear over [word | char] features (paddle, [in, out]) against a Linear of each summed
    (torch, ``word_proj`` with the bias, ``char_proj`` without), between two same-shape blocks."""
    pd = [t("embed.weight", "Embedding", (V, H)), *paddle_linear("proj", H + 4, 2 * H), *paddle_linear("head", 2 * H, H)]
    th = [t("embedding.weight", "Embedding", (V, H)), *torch_linear("word_proj", H, 2 * H),
          t("char_proj.weight", "Linear", (2 * H, 4)), *torch_linear("out", 2 * H, H)]
    return WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD)


def test_a_projection_of_concatenated_inputs_is_its_parts_along_the_input_axis() -> None:
    """[out, in1 + in2] against [out, in1] and [out, in2]: inputs side by side (axis 1 of the
    canonical layout), never the output axis; the conversion reads the columns."""
    from padiff_trace.recorder._replay import _canonical

    wm = match_weights(*_concat_projection())
    assert wm.ok, wm.problem_text("A", "B")
    parts = {p.b: (p.a, p.a_part, p.axis, p.how) for p in wm.pairs if p.a == "proj.weight"}
    assert parts == {"word_proj.weight": ("proj.weight", (0, H), 1, "packed"),
                     "char_proj.weight": ("proj.weight", (H, H + 4), 1, "packed")}
    assert pairs(wm)["proj.bias"] == "word_proj.bias" and pairs(wm)["head.weight"] == "out.weight"
    w = np.arange((H + 4) * 2 * H, dtype=np.float32).reshape(H + 4, 2 * H)  # paddle [in, out]
    char = next(p for p in wm.pairs if p.b == "char_proj.weight")
    np.testing.assert_array_equal(_canonical(w, char.a_perm, char.a_part, char.axis), w[H:].T)
    entry = next(e for e in wm.to_json()["weights"] if e.get("torch") == "char_proj.weight")
    assert (entry["paddle_part"], entry["axis"]) == ([H, H + 4], 1)


def test_a_mapping_file_cuts_the_input_axis_and_names_a_bad_axis() -> None:
    a, b = _concat_projection()
    entry = {"paddle": "proj.weight", "torch": "char_proj.weight", "paddle_part": [H, H + 4], "axis": 1}
    wm = match_weights(a, b, *mapping_pins(parse_mapping({"weights": [entry]}, "m.json"), a, b))
    pinned = next(p for p in wm.pairs if p.b == "char_proj.weight")
    assert (pinned.how, pinned.a_part, pinned.axis) == ("mapping", (H, H + 4), 1)
    with pytest.raises(MappingError, match=r"m\.json: weights entry 0: axis must be"):
        parse_mapping({"weights": [dict(entry, axis=-1)]}, "m.json")
    with pytest.raises(MappingError, match="shapes differ"):  # the part cut from the output axis does not fit
        match_weights(a, b, *mapping_pins(parse_mapping({"weights": [dict(entry, axis=0)]}, "m.json"), a, b))


def test_one_bias_of_a_concat_projection_is_the_sum_of_the_parts_biases() -> None:
    """When both per-part Linears keep a bias, the one Linear's bias is their sum: paired as
    ``summed`` (never refused as ambiguous), written back by a mapping file's ``"sum": true``,
    and ``"sum"`` on a part entry is refused in one line."""
    a, _ = _concat_projection()
    th = [t("embedding.weight", "Embedding", (V, H)), *torch_linear("word_proj", H, 2 * H),
          *torch_linear("char_proj", 4, 2 * H), *torch_linear("out", 2 * H, H)]
    b = WeightSide("torch", tuple(th), TD)
    wm = match_weights(a, b)
    assert wm.ok, wm.problem_text("A", "B")
    summed = [(p.a, p.b) for p in wm.pairs if p.how == "summed"]
    assert summed == [("proj.bias", "word_proj.bias"), ("proj.bias", "char_proj.bias")], summed
    again = match_weights(a, b, *mapping_pins(parse_mapping(json.loads(wm.dumps()), "weightmap.json"), a, b))
    assert [(p.a, p.b) for p in again.pairs if p.how == "summed"] == summed
    bad = {"paddle": "proj.bias", "torch": "word_proj.bias", "sum": True, "paddle_part": [0, 4]}
    with pytest.raises(MappingError, match=r"m\.json: weights entry 0: sum must be"):
        parse_mapping({"weights": [bad]}, "m.json")


def test_a_pointwise_conv_is_a_linear_before_fused_runs_are_looked_for() -> None:
    """A 1x1 Conv1D [out, in, 1] (paddle, channels first) is a Linear [out, in] (torch, channels
    last): paired by a reshape within its block, so the block's Linears count the same on both
    sides, and a fused q|k|v takes the attention's q, k, v, never an FFN's [2H, H] Linear."""
    conv = ["paddle.nn.layer.conv.Conv1D", "paddle.nn.layer.layers.Layer"]
    pd, th = [], []
    for i in range(2):
        a, b = f"blocks.{i}", f"layers.{i}"
        pd += paddle_linear(f"{a}.ffn.fc1", H, 2 * H) + paddle_linear(f"{a}.ffn.fc2", 2 * H, H)
        pd += [x for n in ("q_proj", "k_proj", "v_proj", "out_proj") for x in paddle_linear(f"{a}.mha.{n}", H, H)]
        pd += [t(f"{a}.conv.pointwise.weight", "Conv1D", (2 * H, H, 1)), t(f"{a}.conv.pointwise.bias", "Conv1D", (2 * H,))]
        th += torch_linear(f"{b}.ff.w1", H, 2 * H) + torch_linear(f"{b}.ff.w2", 2 * H, H)
        th += torch_linear(f"{b}.attn.qkv", H, 3 * H) + torch_linear(f"{b}.attn.out", H, H)
        th += torch_linear(f"{b}.conv_module.pw_in", H, 2 * H)
    wm = match_weights(WeightSide("paddle", tuple(pd), {**PD, "Conv1D": conv}), WeightSide("torch", tuple(th), TD))
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: (p.b, p.how, p.b_part) for p in wm.pairs}
    for i in range(2):
        assert got[f"blocks.{i}.conv.pointwise.weight"] == (f"layers.{i}.conv_module.pw_in.weight", "reshape", None)
        assert got[f"blocks.{i}.ffn.fc1.weight"][0] == f"layers.{i}.ff.w1.weight"
        assert got[f"blocks.{i}.mha.k_proj.weight"] == (f"layers.{i}.attn.qkv.weight", "packed", (H, 2 * H))
    assert next(p for p in wm.pairs if p.a == "blocks.0.conv.pointwise.weight").reshape


def test_bare_matrices_named_apart_pair_in_registration_order_in_one_layout() -> None:
    """``fc1``/``fc2`` Linears against bare ``w1``/``w2`` matrices of one class (einsum): each
    fits either as stored or transposed, names share no word, so registration order decides,
    taken only when every pair holds in one layout (low confidence, said so); an axis of size
    one more or fewer (a layer scale [C, 1, 1] against [C]) is a reshape."""
    pd = [*paddle_linear("blocks.0.mix.fc1", 16, 24), *paddle_linear("blocks.0.mix.fc2", 24, 16),
          t("blocks.0.gamma", "Block", (H, 1, 1))]
    th = [t("layers.0.mixing.w1", "TokenMixer", (24, 16)), t("layers.0.mixing.b1", "TokenMixer", (24,)),
          t("layers.0.mixing.w2", "TokenMixer", (16, 24)), t("layers.0.mixing.b2", "TokenMixer", (16,)),
          t("layers.0.ls", "MixerLayer", (H,))]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    got = {p.a: (p.b, p.how) for p in wm.pairs}
    assert got["blocks.0.mix.fc1.weight"] == ("layers.0.mixing.w1", "shape+order")
    assert got["blocks.0.mix.fc2.weight"][0] == "layers.0.mixing.w2"  # then the only one left
    assert got["blocks.0.gamma"] == ("layers.0.ls", "reshape")
    assert next(p for p in wm.pairs if p.a == "blocks.0.mix.fc1.weight").relative_perm == (1, 0)  # paddle [in, out]


def test_a_head_untied_on_one_side_is_the_other_sides_token_embedding_beside_a_position_table() -> None:
    """torch ties its lm_head to ``wte`` while paddle keeps ``lm_head`` [H, V]: the one matrix
    left is the embedding of its shape, although a position table [P, H] is an embedding too."""
    pd = [t("tok_emb.weight", "Embedding", (V, H)), t("pos_emb.weight", "Embedding", (P, H)),
          *paddle_linear("blocks.0.fc", H, H), t("lm_head.weight", "Linear", (H, V))]
    th = [t("wte.weight", "Embedding", (V, H)), t("wpe.weight", "Embedding", (P, H)), *torch_linear("h.0.fc", H, H)]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    assert [(p.a, p.b) for p in wm.pairs if p.how == "tied"] == [("lm_head.weight", "wte.weight")]


def test_call_order_outweighs_names_that_mislead_and_registration_order() -> None:
    """A Conformer block's five LayerNorms: each author registered them in another order, and a
    word of the names points the wrong way (``norm_final`` ~ ``ff_final.ln``). In registration
    order the names decide; in the order both models call their modules, the ranks do."""
    from padiff_trace.matching import in_call_order

    pd = [x for n in ("ffn1.norm", "norm_mha", "conv.norm", "ffn2.norm", "norm_final") for x in norm(f"blocks.0.{n}")]
    th = [x for n in ("ff_macaron.ln", "ff_final.ln", "attn_norm", "conv_module.ln", "out_norm") for x in norm(f"layers.0.{n}")]
    a, b = WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD)
    calls_a = {f"blocks.0.{n}": i for i, n in enumerate(("ffn1.norm", "norm_mha", "conv.norm", "ffn2.norm", "norm_final"))}
    calls_b = {f"layers.0.{n}": i for i, n in enumerate(("ff_macaron.ln", "attn_norm", "conv_module.ln", "ff_final.ln", "out_norm"))}
    by_names = pairs(match_weights(a, b))
    assert by_names["blocks.0.norm_final.weight"] == "layers.0.ff_final.ln.weight"  # the word "final"
    ordered = pairs(match_weights(in_call_order(a, calls_a), in_call_order(b, calls_b)))
    assert ordered["blocks.0.ffn2.norm.weight"] == "layers.0.ff_final.ln.weight"
    assert ordered["blocks.0.norm_final.weight"] == "layers.0.out_norm.weight"
    assert ordered["blocks.0.norm_mha.weight"] == "layers.0.attn_norm.weight"
    assert in_call_order(a, {}) is a  # no calls recorded: registration order stands


def test_activations_in_nchw_and_nhwc_with_equal_height_and_width_compare_moving_one_axis() -> None:
    from padiff_trace.analyzer.judging._reconcile import axis_permutation, stable_permutation

    assert axis_permutation((2, 32, 8, 8), (2, 8, 8, 32)) is None  # two orders fit the shapes
    assert stable_permutation((2, 32, 8, 8), (2, 8, 8, 32)) == (0, 2, 3, 1)  # C moves, H and W keep their order
    assert stable_permutation((2, 8, 8, 32), (2, 32, 8, 8)) == (0, 3, 1, 2)
    assert stable_permutation((2, 8, 8), (2, 8, 8)) is None and stable_permutation((2, 8), (2, 9)) is None


def test_a_patch_convolution_is_a_linear_over_flattened_patches_in_either_channel_order() -> None:
    """A conv [D, C, p, p] left over against a Linear [D, C * p * p]: paired by a reshape
    (patches flattened channels first); a mapping entry's ``*_axes`` reorders the conv's axes
    first (channels last), and the pair writes them back for a round trip."""
    conv = ["paddle.nn.layer.conv.Conv2D", "paddle.nn.layer.layers.Layer"]
    pd = [t("stem.conv.weight", "Conv2D", (H, 3, 4, 4)), t("stem.conv.bias", "Conv2D", (H,))]
    th = [t("patch_embed.proj.weight", "Linear", (H, 48)), t("patch_embed.proj.bias", "Linear", (H,))]
    a, b = WeightSide("paddle", tuple(pd), {**PD, "Conv2D": conv}), WeightSide("torch", tuple(th), TD)
    wm = match_weights(a, b)
    first = next(p for p in wm.pairs if p.a == "stem.conv.weight")
    assert (first.b, first.how, first.a_axes) == ("patch_embed.proj.weight", "reshape", None)
    entry = {"paddle": "stem.conv.weight", "torch": "patch_embed.proj.weight", "paddle_axes": [0, 2, 3, 1]}
    pinned = match_weights(a, b, *mapping_pins(parse_mapping({"weights": [entry]}, "m.json"), a, b))
    p = next(p for p in pinned.pairs if p.a == "stem.conv.weight")
    assert (p.how, p.a_perm, p.reshape) == ("reshape", (0, 2, 3, 1), True)
    w = np.arange(H * 48, dtype=np.float32).reshape(H, 3, 4, 4)
    np.testing.assert_array_equal(np.transpose(w, p.a_perm).reshape(H, 48)[:, :3], w[:, :, 0, 0])  # pixel (0, 0), all channels
    back = next(e for e in pinned.to_json()["weights"] if e.get("paddle") == "stem.conv.weight")
    assert back["paddle_axes"] == [0, 2, 3, 1]
    with pytest.raises(MappingError, match=r"paddle_axes must be an order"):
        parse_mapping({"weights": [dict(entry, paddle_axes=[0, 2, 2, 1])]}, "m.json")


def test_a_gated_conv_holding_filter_and_gate_is_two_weight_normed_convs() -> None:
    """paddle's one Conv1D [2C, C, k] (filter | gate) against torch's two convs weight-normed
    through parametrizations (v under ``conv.parametrizations.weight.original1``): each v takes
    its share of the packed weight, and each g is set from it (skipped, said why)."""
    conv = ["paddle.nn.layer.conv.Conv1D", "paddle.nn.layer.layers.Layer"]
    tconv = ["torch.nn.utils.parametrize.ParametrizedConv1d", "torch.nn.modules.conv.Conv1d", "torch.nn.modules.module.Module"]
    pd = [t("layers.0.dilated.weight", "Conv1D", (2 * H, H, 3)), t("layers.0.dilated.bias", "Conv1D", (2 * H,))]
    th = []
    for n in ("conv_filter", "conv_gate"):
        th += [t(f"blocks.0.{n}.bias", "ParametrizedConv1d", (H,)),
               t(f"blocks.0.{n}.parametrizations.weight.original0", "ParametrizationList", (H, 1, 1)),
               t(f"blocks.0.{n}.parametrizations.weight.original1", "ParametrizationList", (H, H, 3))]
    wm = match_weights(WeightSide("paddle", tuple(pd), {**PD, "Conv1D": conv}),
                       WeightSide("torch", tuple(th), {**TD, "ParametrizedConv1d": tconv}))
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.b: (p.a, p.a_part, p.how) for p in wm.pairs}
    assert got["blocks.0.conv_filter.parametrizations.weight.original1"] == ("layers.0.dilated.weight", (0, H), "packed")
    assert got["blocks.0.conv_gate.parametrizations.weight.original1"] == ("layers.0.dilated.weight", (H, 2 * H), "packed")
    assert got["blocks.0.conv_gate.bias"] == ("layers.0.dilated.bias", (H, 2 * H), "packed")
    assert {n for s, n, _ in wm.skipped if s == "b"} == {f"blocks.0.{n}.parametrizations.weight.original0"
                                                          for n in ("conv_filter", "conv_gate")}


def test_two_weight_normed_convs_are_the_parts_of_one_weight_normed_conv() -> None:
    """paddle's weight norm keeps ``weight_v``/``weight_g`` on the layer itself, torch's
    parametrization under ``conv.parametrizations.weight``: both are the layer's weight, v in
    the layer's own layout (paddle's Linear v is [in, out]). Two weight-normed convolutions (value,
    gate) against one fused one: each v is its share of the fused v along the output channels, each
    g its share of the fused g ([C] against [2C, 1, 1]), as each bias is."""
    conv = ["paddle.nn.layer.conv.Conv1D", "paddle.nn.layer.layers.Layer"]
    tconv = ["torch.nn.utils.parametrize.ParametrizedConv1d", "torch.nn.modules.conv.Conv1d", "torch.nn.modules.module.Module"]
    tlin = ["torch.nn.utils.parametrize.ParametrizedLinear", "torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"]
    pd = [t("proj.bias", "Linear", (F,)), t("proj.weight_g", "Linear", (F,)), t("proj.weight_v", "Linear", (H, F))]
    for n in ("conv_value", "conv_gate"):
        pd += [t(f"blocks.0.{n}.bias", "Conv1D", (F,)), t(f"blocks.0.{n}.weight_g", "Conv1D", (F,)),
               t(f"blocks.0.{n}.weight_v", "Conv1D", (F, F, 3))]
    th = [t("fc.bias", "ParametrizedLinear", (F,)), t("fc.parametrizations.weight.original0", "ParametrizationList", (F, 1)),
          t("fc.parametrizations.weight.original1", "ParametrizationList", (F, H)),
          t("layers.0.conv.bias", "ParametrizedConv1d", (2 * F,)),
          t("layers.0.conv.parametrizations.weight.original0", "ParametrizationList", (2 * F, 1, 1)),
          t("layers.0.conv.parametrizations.weight.original1", "ParametrizationList", (2 * F, F, 3))]
    wm = match_weights(WeightSide("paddle", tuple(pd), {**PD, "Conv1D": conv}),
                       WeightSide("torch", tuple(th), {**TD, "ParametrizedConv1d": tconv, "ParametrizedLinear": tlin}))
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: (p.b, p.b_part) for p in wm.pairs}
    fused = "layers.0.conv.parametrizations.weight."
    for k, n in enumerate(("conv_value", "conv_gate")):
        part = (k * F, (k + 1) * F)
        assert got[f"blocks.0.{n}.weight_v"] == (fused + "original1", part)
        assert got[f"blocks.0.{n}.weight_g"] == (fused + "original0", part)
        assert got[f"blocks.0.{n}.bias"] == ("layers.0.conv.bias", part)
    v = next(p for p in wm.pairs if p.a == "proj.weight_v")
    assert (v.b, v.relative_perm) == ("fc.parametrizations.weight.original1", (1, 0))
    assert got["proj.weight_g"] == ("fc.parametrizations.weight.original0", None)


def test_experts_in_a_list_pair_with_stacked_expert_weights() -> None:
    """A mixture of experts as a list of Linear experts (paddle, ``w1``/``w2``/``w3`` each [in,
    out]) against 3-D stacked ``w_gate``/``w_up``/``w_down`` used as ``x @ W[e]`` in a class the
    tables do not know: each expert is its slice of the stack, the role each stack's name says
    choosing between the gate and the up projection (same shapes), the shapes the orientation."""
    d, f, n = H, F, 4
    user = {**TD, "Experts": ["port.Experts", "torch.nn.modules.module.Module"]}
    pd = [t("moe.gate.weight", "Linear", (d, n))]
    for e in range(n):
        pd += [t(f"moe.experts.{e}.w1.weight", "Linear", (d, f)), t(f"moe.experts.{e}.w2.weight", "Linear", (f, d)),
               t(f"moe.experts.{e}.w3.weight", "Linear", (d, f))]
    th = [t("ffn.router.weight", "Linear", (n, d)), t("ffn.experts.w_gate", "Experts", (n, d, f)),
          t("ffn.experts.w_up", "Experts", (n, d, f)), t("ffn.experts.w_down", "Experts", (n, f, d))]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), user))
    assert wm.ok, wm.problem_text("A", "B")
    got = {(p.a, p.b_part) for p in wm.pairs if p.how == "stacked"}
    for e in range(n):
        assert {(f"moe.experts.{e}.w1.weight", (e, e + 1)), (f"moe.experts.{e}.w3.weight", (e, e + 1)),
                (f"moe.experts.{e}.w2.weight", (e, e + 1))} <= got
    by_a = {p.a: p for p in wm.pairs}
    assert by_a["moe.experts.2.w1.weight"].b == "ffn.experts.w_gate" and by_a["moe.experts.2.w3.weight"].b == "ffn.experts.w_up"
    assert by_a["moe.experts.0.w2.weight"].b == "ffn.experts.w_down"
    # paddle's [in, out] expert is the stack's [in, out] slice: A transposed to canonical, B's slice too
    assert by_a["moe.experts.0.w1.weight"].b_perm == (0, 2, 1)


def test_a_stack_of_square_matrices_is_never_guessed() -> None:
    pd = [t(f"experts.{e}.proj.weight", "Linear", (H, H)) for e in range(3)]
    th = [t("experts.w", "Experts", (3, H, H))]
    user = {**TD, "Experts": ["port.Experts", "torch.nn.modules.module.Module"]}
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), user))
    assert not any(p.how == "stacked" for p in wm.pairs)


def test_the_last_tensors_left_pair_by_element_count_and_the_one_layout_that_fits() -> None:
    """Trainable tensors no rule paired, each the only one of its element count on both sides
    (a table against a one-hot pointwise conv, a Linear against a transposed conv on a 1x1
    input): paired in the one axis order that fits; a square one only as it stands."""
    from padiff_trace.arrays._layout import axes_between

    assert axes_between((32, 16), (16, 32, 1)) == (1, 0)
    assert axes_between((512, 16), (16, 32, 4, 4)) == (1, 0)  # cuts one axis, not two (512 = 16 * 32 too)
    assert axes_between((128, 5, 8, 4), (5, 128, 4, 8)) == (1, 0, 3, 2)
    assert axes_between((16, 16), (16, 16)) is None and axes_between((64, 64), (64, 4, 16)) is None
    conv = {"Conv1d": ["torch.nn.modules.conv.Conv1d", "torch.nn.modules.module.Module"],
            "ConvTranspose2d": ["torch.nn.modules.conv.ConvTranspose2d", "torch.nn.modules.module.Module"]}
    a = WeightSide("paddle", (t("embed.weight", "Embedding", (12, 6)), t("up.weight", "Linear", (6, 36)),
                              t("mix.w", "Mixer", (8, 8))), PD)
    b = WeightSide("torch", (t("lookup.weight", "Conv1d", (6, 12, 1)), t("up.weight", "ConvTranspose2d", (6, 4, 3, 3)),
                             t("blend.weight", "Blender", (8, 8))), {**TD, **conv})
    wm = match_weights(a, b)
    got = {p.a: (p.b, p.conversion()) for p in wm.pairs}
    assert got["embed.weight"] == ("lookup.weight", "reshape, transpose")
    assert got["up.weight"] == ("up.weight", "reshape")  # paddle's stored [in, out] is the transposed conv's order
    # a square one pairs as it stands, never transposed to fit: ``run`` lets the values try the other way
    assert got["mix.w"] == ("blend.weight", "copy") and wm.ok


def test_a_module_called_twice_is_each_copy_of_it_on_the_other_side() -> None:
    """One Sin layer with a frequency vector called twice in a Sequential against two copies of
    it: the copy left over is the same tensor again (tied: its gradient is compared with the
    sum of the copies'); a structural extra of another class stays one-sided."""
    a = WeightSide("paddle", (*paddle_linear("f.0", 4, 8), t("f.1.freq", "Sin", (1, 8)), *paddle_linear("f.2", 8, 8),
                              *paddle_linear("f.4", 8, 2)), PD)
    b = WeightSide("torch", (*torch_linear("mlp.0", 4, 8), t("mlp.1.freq", "Sin", (8,)), *torch_linear("mlp.2", 8, 8),
                             t("mlp.3.freq", "Sin", (8,)), *torch_linear("mlp.4", 8, 2), t("extra.scale", "Scale", (3,))),
                   {**TD, "Sin": ["Sin"], "Scale": ["Scale"]})
    wm = match_weights(a, b)
    freq = sorted((p.b, p.how) for p in wm.pairs if p.a == "f.1.freq")
    assert [b for b, _ in freq] == ["mlp.1.freq", "mlp.3.freq"] and ("mlp.3.freq", "tied") in freq
    assert [x.name for x in wm.unmatched_b] == ["extra.scale"]


def test_per_item_linears_of_one_input_stack_weights_with_weights_and_biases_with_biases() -> None:
    """One ``Linear(1, d)`` per input variable (paddle: weight ``[1, d]``, bias ``[d]``) against
    one module holding ``weight [n, d]`` and ``bias [n, d]`` (``x[..., i] * W[i] + b[i]``): the
    items' weights are the weight stack's slices (axes of size one aside) and their biases the
    bias stack's, never the biases the weight stack's though their shapes fit it as they stand."""
    n, d = 3, H
    user = {**TD, "RealEmbedding": ["port.RealEmbedding", "torch.nn.modules.module.Module"]}
    pd = [x for i in range(n) for x in paddle_linear(f"prescalers.{i}", 1, d)]
    th = [t("embedding.weight", "RealEmbedding", (n, d)), t("embedding.bias", "RealEmbedding", (n, d))]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), user))
    assert wm.ok, wm.problem_text("A", "B")
    got = {(p.a, p.b, p.b_part) for p in wm.pairs if p.how == "stacked"}
    assert got == {(f"prescalers.{i}.{k}", f"embedding.{k}", (i, i + 1)) for i in range(n) for k in ("weight", "bias")}, got


def test_a_parameter_whose_name_says_log_on_one_side_only_is_marked_as_kept_in_log_space() -> None:
    """``log_temp`` against ``temperature``: B keeps the logarithm; CLIP's ``logit_scale`` on both
    sides, or against ``log_inv_tau`` (a log by CLIP's convention), a word ``log`` on both sides,
    or ``log_sigma`` against ``logsigma`` (the word run into the quantity), is no such pair;
    ``logvar`` against ``var`` is."""
    pd = [t("attn.temperature", "Attn", (4,)), t("head.logit_scale", "Head", (1,)), t("flow.log_s", "Flow", (3,)),
          t("slots.slots_log_sigma", "Slots", (1, 1, 5)), t("vae.var", "Vae", (6,)), t("sim.logit_scale", "Sim", (1,))]
    th = [t("attn.log_temp", "Attn", (4,)), t("head.logit_scale", "Head", (1,)), t("flow.log_scale", "Flow", (3,)),
          t("slots.slots_logsigma", "Slots", (1, 1, 5)), t("vae.logvar", "Vae", (6,)), t("sim.log_inv_tau", "Sim", (1,))]
    user = {"Attn": ["port.Attn"], "Head": ["port.Head"], "Flow": ["port.Flow"], "Slots": ["port.Slots"], "Vae": ["port.Vae"],
            "Sim": ["port.Sim"]}
    wm = match_weights(WeightSide("paddle", tuple(pd), {**PD, **user}), WeightSide("torch", tuple(th), {**TD, **user}))
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: p.logged for p in wm.pairs}
    assert got == {"attn.temperature": "b", "head.logit_scale": None, "flow.log_s": None,
                   "slots.slots_log_sigma": None, "vae.var": "b", "sim.logit_scale": None}, got


def test_tables_of_one_role_pair_wherever_they_sit_in_the_layout_their_role_has() -> None:
    """Position tables on the root, ``pos_embed1 [1, 16, 4]`` and ``pos_embed2 [1, 4, 8]`` (tokens),
    against one ``pos_embed`` per stage, ``[1, 4, 4, 4]`` and ``[1, 8, 2, 2]`` (grids): the numbers
    are no block indices, the role and the size pair them. Stage two's shapes fit one axis order;
    stage one's fit two, and the order its role has on this side decides. paddle's PReLU keeps its
    slopes as ``_weight``: the same tensor as torch's ``weight``."""
    from padiff_trace.arrays._layout import axes_candidates

    assert axes_candidates((1, 16, 4), (1, 4, 4, 4)) == [(0, 1, 2), (0, 2, 1)]
    assert axes_candidates((1, 4, 8), (1, 8, 2, 2)) == [(0, 2, 1)]
    user = {"Net": ["port.Net"], "Stage": ["port.Stage"],
            "PReLU": ["paddle.nn.layer.activation.PReLU", "paddle.nn.layer.layers.Layer"]}
    a = WeightSide("paddle", (t("pos_embed1", "Net", (1, 16, 4)), t("pos_embed2", "Net", (1, 4, 8)),
                              t("act1._weight", "PReLU", (4,)), t("act2._weight", "PReLU", (8,))), {**PD, **user})
    tuser = {"Model": ["port.Model"], "Stage": ["port.Stage"],
             "PReLU": ["torch.nn.modules.activation.PReLU", "torch.nn.modules.module.Module"]}
    b = WeightSide("torch", (t("stages.0.pos_embed", "Stage", (1, 4, 4, 4)), t("stages.1.pos_embed", "Stage", (1, 8, 2, 2)),
                             t("dnn.1.weight", "PReLU", (4,)), t("dnn.3.weight", "PReLU", (8,))), {**TD, **tuser})
    wm = match_weights(a, b)
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: (p.b, p.a_axes) for p in wm.pairs}
    assert got["pos_embed1"] == ("stages.0.pos_embed", (0, 2, 1)) and got["pos_embed2"] == ("stages.1.pos_embed", (0, 2, 1))
    assert got["act1._weight"][0] == "dnn.1.weight" and got["act2._weight"][0] == "dnn.3.weight"
    # no tensor of that role already paired: the two orders stay open, nothing is guessed
    lone = match_weights(WeightSide("paddle", (t("pos_embed1", "Net", (1, 16, 4)),), {**PD, **user}),
                         WeightSide("torch", (t("stages.0.pos_embed", "Stage", (1, 4, 4, 4)),), {**TD, **tuser}))
    assert not lone.pairs and not lone.ok


def test_tokens_of_their_own_are_slices_of_one_stacked_parameter() -> None:
    """A class token and a distillation token ``[1, 1, D]`` each on one side, one ``tokens
    [1, 2, D]`` on the other: each token is one slice of the stacked axis (its size one there),
    in registration order. The projection beside them sits one module deeper on one side, so
    no two partner modules hold the tokens: the last tensors left in their place pair."""
    user = {"Embeddings": ["port.Embeddings"]}
    a = WeightSide("paddle", (t("embeddings.cls_token", "Embeddings", (1, 1, H)),
                              t("embeddings.distillation_token", "Embeddings", (1, 1, H)),
                              *paddle_linear("embeddings.patches.proj", 12, H)), {**PD, **user})
    tuser = {"Tokenizer": ["port.Tokenizer"]}
    b = WeightSide("torch", (t("stem.tokens", "Tokenizer", (1, 2, H)), *torch_linear("stem.proj", 12, H)),
                   {**TD, **tuser})
    wm = match_weights(a, b)
    assert wm.ok, wm.problem_text("A", "B")
    parts = {p.a: (p.b, p.b_part, p.axis) for p in wm.pairs if p.b == "stem.tokens"}
    assert parts == {"embeddings.cls_token": ("stem.tokens", (0, 1), 1),
                     "embeddings.distillation_token": ("stem.tokens", (1, 2), 1)}
    assert pairs(wm)["embeddings.patches.proj.weight"] == "stem.proj.weight"


def test_a_conv_over_stacked_channels_is_a_conv1d_over_them_concatenated() -> None:
    """TextCNN: paddle's Conv2D ``[8, 2, k, 16]`` over two embeddings stacked as channels against
    torch's Conv1d ``[8, 32, k]`` over them concatenated, one per kernel size, named apart
    (``branches.0.conv`` against ``encoder.conv_k2``): no shape key relates the units, their
    element counts do; the axes merge in their stored order (channels major) and each bias
    follows its weight."""
    conv2d = {"Conv2D": ["paddle.nn.layer.conv.Conv2D", "paddle.nn.layer.layers.Layer"]}
    conv1d = {"Conv1d": ["torch.nn.modules.conv.Conv1d", "torch.nn.modules.module.Module"]}
    a = WeightSide("paddle", tuple(x for i, k in enumerate((2, 3, 4)) for x in (
        t(f"branches.{i}.conv.weight", "Conv2D", (8, 2, k, 16)), t(f"branches.{i}.conv.bias", "Conv2D", (8,)))), {**PD, **conv2d})
    b = WeightSide("torch", tuple(x for k in (2, 3, 4) for x in (
        t(f"encoder.conv_k{k}.weight", "Conv1d", (8, 32, k)), t(f"encoder.conv_k{k}.bias", "Conv1d", (8,)))), {**TD, **conv1d})
    wm = match_weights(a, b)
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: (p.b, p.a_axes) for p in wm.pairs}
    for i, k in enumerate((2, 3, 4)):
        assert got[f"branches.{i}.conv.weight"] == (f"encoder.conv_k{k}.weight", (0, 1, 3, 2))
        assert got[f"branches.{i}.conv.bias"][0] == f"encoder.conv_k{k}.bias"


def test_bare_query_key_value_matrices_are_parts_of_a_fused_qkv_turned() -> None:
    """AutoInt: a layer of one's own holding bare ``W_Query``, ``W_Key``, ``W_Value``, ``W_Res``
    ``[in, out]`` against a block with a fused ``attn.qkv`` Linear and a ``res_proj``. ``W_Res``
    is the one candidate ``res_proj.weight`` shares a word with; the three left are the fused
    weight's parts, transposed (only that fits in the first block, ``[8, 16]`` against
    ``[48, 8]``), and the square blocks after it are turned as their class's first."""
    user = {"InteractingLayer": ["port.InteractingLayer"]}
    pd = [t(f"interacting.{i}.{n}", "InteractingLayer", (d, 16)) for i, d in enumerate((8, 16))
          for n in ("W_Query", "W_Key", "W_Value", "W_Res")]
    th = [x for i, d in enumerate((8, 16)) for x in (t(f"blocks.{i}.attn.qkv.weight", "Linear", (48, d)),
                                                     t(f"blocks.{i}.res_proj.weight", "Linear", (16, d)))]
    wm = match_weights(WeightSide("paddle", tuple(pd), {**PD, **user}), WeightSide("torch", tuple(th), TD))
    assert wm.ok, wm.problem_text("A", "B")
    for i in (0, 1):
        parts = {p.a: (p.b_part, p.relative_perm) for p in wm.pairs if p.b == f"blocks.{i}.attn.qkv.weight"}
        assert parts == {f"interacting.{i}.W_Query": ((0, 16), (1, 0)), f"interacting.{i}.W_Key": ((16, 32), (1, 0)),
                         f"interacting.{i}.W_Value": ((32, 48), (1, 0))}, parts
        res = next(p for p in wm.pairs if p.a == f"interacting.{i}.W_Res")
        assert (res.b, res.relative_perm) == (f"blocks.{i}.res_proj.weight", (1, 0))


def test_a_linear_over_time_and_state_is_a_linear_and_its_parents_time_vector() -> None:
    """A neural ODE's dynamics: paddle's Linear over ``[t, x]`` (``[17, 32]`` stored [in, out])
    against torch's Linear over ``x`` (``[32, 16]``) plus a vector ``time1 [32]`` its parent keeps
    and multiplies by ``t``: the vector is the first input column, the Linear the rest; the second
    layer's vector (``time2 [16]``) fits only the second."""
    user = {"ConcatLinear": ["port.ConcatLinear"]}
    tuser = {"Dynamics": ["port.Dynamics"]}
    pd = [*paddle_linear("odefunc.layer1._layer", 17, 32), *paddle_linear("odefunc.layer2._layer", 33, 16)]
    th = [t("dynamics.time1", "Dynamics", (32,)), t("dynamics.time2", "Dynamics", (16,)),
          *torch_linear("dynamics.fc1", 16, 32), *torch_linear("dynamics.fc2", 32, 16)]
    wm = match_weights(WeightSide("paddle", tuple(pd), {**PD, **user}), WeightSide("torch", tuple(th), {**TD, **tuser}))
    assert wm.ok, wm.problem_text("A", "B")
    parts = {p.b: (p.a, p.a_part, p.axis) for p in wm.pairs if p.a_part is not None}
    assert parts == {"dynamics.time1": ("odefunc.layer1._layer.weight", (0, 1), 1),
                     "dynamics.fc1.weight": ("odefunc.layer1._layer.weight", (1, 17), 1),
                     "dynamics.time2": ("odefunc.layer2._layer.weight", (0, 1), 1),
                     "dynamics.fc2.weight": ("odefunc.layer2._layer.weight", (1, 33), 1)}, parts


def test_a_module_without_block_indices_gives_no_parts_to_a_block_whose_partner_is_known() -> None:
    """CrossViT: torch's cross-attention lives at ``cross.small_cls.attn`` (no block index, so
    any block's path fits it), with ``to_q`` and ``to_k`` ``[32, 32]`` side by side. Paddle's
    first block has an MLP ``fc1`` of ``[32, 64]``: as big as q|k stacked. The block's norms
    paired it with torch's ``large.layers.0``, so its MLP's parts are looked for there: ``fc1``
    is the feed-forward's first Linear, not q|k of an attention elsewhere."""
    pd = [*norm("blocks.0.blocks.0.0.norm1"), *paddle_linear("blocks.0.blocks.0.0.attn.q_proj", H, H),
          *paddle_linear("blocks.0.blocks.0.0.attn.k_proj", H, H), *paddle_linear("blocks.0.blocks.0.0.attn.v_proj", H, H),
          *paddle_linear("blocks.0.blocks.0.0.attn.proj", H, H), *norm("blocks.0.blocks.0.0.norm2"),
          *paddle_linear("blocks.0.blocks.0.0.mlp.fc1", H, 2 * H), *paddle_linear("blocks.0.blocks.0.0.mlp.fc2", 2 * H, H),
          *norm("blocks.0.fusion.0.norm1"), *paddle_linear("blocks.0.fusion.0.attn.wq", H, H),
          *paddle_linear("blocks.0.fusion.0.attn.wkv", H, 2 * H), *paddle_linear("blocks.0.fusion.0.attn.proj", H, H)]
    th = [*norm("large.layers.0.0.norm"), *torch_linear("large.layers.0.0.fn.to_qkv", H, 3 * H),
          *torch_linear("large.layers.0.0.fn.to_out", H, H), *norm("large.layers.0.1.norm"),
          *torch_linear("large.layers.0.1.fn.net.0", H, 2 * H), *torch_linear("large.layers.0.1.fn.net.2", 2 * H, H),
          *norm("cross.small_cls.attn_norm"), *torch_linear("cross.small_cls.attn.to_q", H, H),
          *torch_linear("cross.small_cls.attn.to_k", H, H), *torch_linear("cross.small_cls.attn.to_v", H, H),
          *torch_linear("cross.small_cls.attn.to_out", H, H)]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    got = {(p.a, p.b) for p in wm.pairs}
    assert ("blocks.0.blocks.0.0.mlp.fc1.weight", "large.layers.0.1.fn.net.0.weight") in got, sorted(got)
    assert not any(p.a.startswith("blocks.0.blocks.0.0.mlp") and p.b.startswith("cross.") for p in wm.pairs), sorted(got)


def test_gates_stacked_in_another_order_round_trip_through_a_mapping_file() -> None:
    """A ConvLSTM's gate convolution: paddle stacks its output rows i, f, o, g, torch i, f, g, o.
    ``paddle_blocks: [0, 1, 3, 2]`` takes paddle's rows as four blocks in torch's order (torch's
    block 2 is paddle's block 3); written back by the weight map under the same key, and a torch
    side's order is kept as paddle's inverse (a swap is its own inverse, a rotation is not)."""
    conv = {"Conv2D": ["paddle.nn.layer.conv.Conv2D", "paddle.nn.layer.layers.Layer"]}
    tconv = {"Conv2d": ["torch.nn.modules.conv.Conv2d", "torch.nn.modules.module.Module"]}
    a = WeightSide("paddle", (t("cell.conv.weight", "Conv2D", (32, 11, 3, 3)), t("cell.conv.bias", "Conv2D", (32,))), conv)
    b = WeightSide("torch", (t("cell.gates.weight", "Conv2d", (32, 11, 3, 3)), t("cell.gates.bias", "Conv2d", (32,))), tconv)
    doc = {"version": 1, "weights": [
        {"paddle": "cell.conv.weight", "torch": "cell.gates.weight", "paddle_blocks": [0, 1, 3, 2]},
        {"paddle": "cell.conv.bias", "torch": "cell.gates.bias", "torch_blocks": [1, 2, 3, 0]}]}
    mapping = parse_mapping(doc, "gates.json")
    wm = match_weights(a, b, *mapping_pins(mapping, a, b))
    blocks = {p.a: p.a_blocks for p in wm.pairs}
    assert blocks == {"cell.conv.weight": (0, 1, 3, 2), "cell.conv.bias": (3, 0, 1, 2)}, blocks
    written = {e["paddle"]: e.get("paddle_blocks") for e in json.loads(wm.dumps())["weights"]}
    assert written == {"cell.conv.weight": [0, 1, 3, 2], "cell.conv.bias": [3, 0, 1, 2]}, written
    again = match_weights(a, b, *mapping_pins(parse_mapping(json.loads(wm.dumps()), "weightmap.json"), a, b))
    assert {p.a: p.a_blocks for p in again.pairs} == blocks
    with pytest.raises(MappingError, match="_blocks"):
        parse_mapping({"weights": [{"paddle": "x.weight", "torch": "y.weight", "paddle_blocks": [0, 0]}]}, "bad.json")
    # a fused tensor's rows reordered, then cut (q rows in another rotary layout inside q|k|v):
    # the order is the fused tensor's whole axis 0; on the second side it cannot act before the part
    lin = {"Linear": ["paddle.nn.layer.common.Linear", "paddle.nn.layer.layers.Layer"]}
    tlin = {"Linear": ["torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"]}
    fa = WeightSide("paddle", (t("attn.qkv.weight", "Linear", (4, 12)),), lin)
    fb = WeightSide("torch", (t("attn.q.weight", "Linear", (4, 4)), t("attn.k.weight", "Linear", (4, 4)),
                              t("attn.v.weight", "Linear", (4, 4))), tlin)
    order = [0, 2, 1, 3, 4, 6, 5, 7, 8, 9, 10, 11]
    fused = {"version": 1, "weights": [
        {"paddle": "attn.qkv.weight", "torch": f"attn.{r}.weight", "paddle_part": [4 * i, 4 * i + 4],
         "paddle_blocks": order} for i, r in enumerate("qkv")]}
    wm = match_weights(fa, fb, *mapping_pins(parse_mapping(fused, "fused.json"), fa, fb))
    assert {(p.b, p.a_part, p.a_blocks) for p in wm.pairs} == {
        (f"attn.{r}.weight", (4 * i, 4 * i + 4), tuple(order)) for i, r in enumerate("qkv")}, wm.pairs
    with pytest.raises(MappingError, match="other order"):
        match_weights(fb, fa, *mapping_pins(parse_mapping(fused, "fused.json"), fb, fa))



def test_a_vector_reordered_into_the_same_elements_in_another_shape_keeps_its_order() -> None:
    """A LayerNorm's ``[42]`` scale against ``nn.LayerNorm((7, 6))``'s ``[7, 6]``: paired by a
    reshape, and the order a mapping entry gives (``paddle_blocks``, one element a block) kept on
    the pair and written back, where before the reshape dropped it."""
    ln = {"LayerNorm": ["paddle.nn.layer.norm.LayerNorm", "paddle.nn.layer.layers.Layer"]}
    tln = {"LayerNorm": ["torch.nn.modules.normalization.LayerNorm", "torch.nn.modules.module.Module"]}
    a = WeightSide("paddle", (t("norm.weight", "LayerNorm", (42,)),), ln)
    b = WeightSide("torch", (t("plane_norm.weight", "LayerNorm", (7, 6)),), tln)
    order = [int(i) for i in np.arange(42).reshape(6, 7).T.ravel()]
    doc = {"version": 1, "weights": [{"paddle": "norm.weight", "torch": "plane_norm.weight", "paddle_blocks": order}]}
    wm = match_weights(a, b, *mapping_pins(parse_mapping(doc, "m.json"), a, b))
    (p,) = wm.pairs
    assert (p.how, p.a_blocks) == ("reshape", tuple(order)), p
    (written,) = json.loads(wm.dumps())["weights"]
    assert written["paddle_blocks"] == order, written


def test_an_offset_and_a_whole_side_reordered_into_the_other_sides_part_round_trip() -> None:
    """``torch_offset: 1`` (torch keeps a norm's scale as paddle's plus one) becomes the pair's
    offset, written back under the side it was given for, and read from the other side it is
    the opposite; ``paddle_blocks`` beside a ``torch_part`` (paddle's whole q reordered, then put
    in torch's share of a fused q|k|v) is allowed, torch's blocks beside a paddle part are not.
    Offsets are refused beside parts and for values that are not numbers."""
    a = WeightSide("paddle", (t("n.g", "OffsetNorm", (H,)), *paddle_linear("q", H, H)), PD)
    b = WeightSide("torch", (t("ln.weight", "LayerNorm", (H,)), *torch_linear("qkv", H, 3 * H)), TD)
    order = [1, 0, 3, 2, 5, 4, 7, 6]
    doc = {"version": 1, "weights": [
        {"paddle": "n.g", "torch": "ln.weight", "torch_offset": 1},
        {"paddle": "q.weight", "torch": "qkv.weight", "torch_part": [0, H], "paddle_blocks": order},
        {"paddle": "q.bias", "torch": "qkv.bias", "torch_part": [0, H]}]}
    wm = match_weights(a, b, *mapping_pins(parse_mapping(doc, "m.json"), a, b))
    got = {p.a: (p.offset, p.a_blocks, p.b_part) for p in wm.pairs}
    assert got["n.g"] == (1.0, None, None) and got["q.weight"] == (0.0, tuple(order), (0, H)), got
    written = {e["paddle"]: e for e in json.loads(wm.dumps())["weights"]}
    assert (written["n.g"]["torch_offset"] == 1.0 and "offset" in written["n.g"]["convert"]) or "+1" in written["n.g"]["convert"]
    flipped = {**doc, "weights": [{"paddle": "n.g", "torch": "ln.weight", "paddle_offset": 1}]}
    assert [p.offset for p in match_weights(a, b, *mapping_pins(parse_mapping(flipped, "m.json"), a, b)).pairs
            if p.a == "n.g"] == [-1.0]
    for bad in ({"paddle": "q.weight", "torch": "qkv.weight", "torch_part": [0, H], "torch_offset": 1},
                {"paddle": "n.g", "torch": "ln.weight", "torch_offset": "one"}):
        with pytest.raises(MappingError, match="_offset"):
            parse_mapping({"weights": [bad]}, "bad.json")
    pa = WeightSide("paddle", tuple(paddle_linear("qkv", H, 3 * H)), PD)
    tb = WeightSide("torch", tuple(torch_linear("q", H, H)), TD)
    reversed_blocks = {"weights": [{"paddle": "qkv.weight", "torch": "q.weight", "paddle_part": [0, H], "torch_blocks": order}]}
    with pytest.raises(MappingError, match="blocks"):
        match_weights(pa, tb, *mapping_pins(parse_mapping(reversed_blocks, "bad.json"), pa, tb))


def test_the_receiving_models_own_values_say_a_norm_keeps_one_plus_w() -> None:
    """``own_offset``: a received vector centred one unit from the model's own (zeros against
    ones, trained values around 0 against around 1) is shifted by that unit, either way; vectors
    centred alike, or 0.5 apart, or a single value are not. ``traced_offset``: a pair of traces
    whose values differ by exactly one everywhere; ``scale_of_a_norm``: a norm's scale by its class,
    never its shift."""
    from padiff_trace.matching import own_offset, traced_offset
    from padiff_trace.matching._offsets import scale_of_a_norm

    rng = np.random.default_rng(0)
    w = rng.normal(0.0, 0.15, 16).astype("float32")
    assert own_offset(w, 1.0 + rng.normal(0.0, 0.15, 16)) == 1.0
    assert own_offset(np.ones(16), np.zeros(16)) == -1.0
    assert own_offset(w, rng.normal(0.0, 0.15, 16)) == 0.0
    assert own_offset(w, 0.5 + w) == 0.0
    assert own_offset(np.zeros(1), np.ones(1)) == 0.0
    assert traced_offset(w, w + np.float32(1.0)) == 1.0
    assert traced_offset(w + np.float32(1.0), w) == -1.0
    assert traced_offset(w, w + np.float32(1.001)) == 0.0
    assert scale_of_a_norm("g", "weight", "OffsetNorm", "LayerNorm")
    assert scale_of_a_norm("weight", "weight", "Gemma2RMSNorm", "RMSNorm")
    assert not scale_of_a_norm("bias", "bias", "LayerNorm", "LayerNorm")
    assert not scale_of_a_norm("gamma", "layer_scale", "Block", "ConvNeXtBlock")
    assert not scale_of_a_norm("weight", "weight", "BatchNorm2D", "BatchNorm2d")  # a zero-initialised residual scale


def test_a_layers_place_in_a_pipeline_is_no_block_index_and_a_type_word_tells_no_member_apart() -> None:
    """Two LayerNorms of one width: paddle's ``proj_norm`` after ``proj`` and ``head.1`` inside a
    ``head`` Sequential (Linear, LayerNorm, GELU, Linear); torch's ``stem.1`` inside a ``stem``
    Sequential (Linear, LayerNorm) and ``ln_head`` before ``out``. The ``1`` of ``head.1`` and of
    ``stem.1`` is each layer's place in a pipeline of other layers, not a block both count, and
    ``ln`` only says ``ln_head`` is a LayerNorm, which both are: the norms pair by the words that
    remain (``head``) and registration order."""
    a = WeightSide("paddle", (*paddle_linear("proj", H, H), *norm("proj_norm"), *paddle_linear("head.0", H, H),
                              *norm("head.1"), *paddle_linear("head.3", H, 2)), PD)
    b = WeightSide("torch", (*torch_linear("stem.0", H, H), *norm("stem.1"), *torch_linear("fc", H, H),
                             *norm("ln_head"), *torch_linear("out", H, 2)), TD)
    got = pairs(match_weights(a, b))
    assert got["proj_norm.weight"] == "stem.1.weight" and got["head.1.weight"] == "ln_head.weight", got
    assert got["proj_norm.bias"] == "stem.1.bias" and got["head.1.bias"] == "ln_head.bias", got


def test_the_last_table_left_keeps_axes_of_equal_size_in_order_when_its_other_axes_move() -> None:
    """A relative-position table ``[15, 15, k, u]`` under one name against ``[k, u, 15, 15]``
    under another, the last trainable tensors of their classes: two reorderings fit (the two
    15s swapped or not); the one that keeps them in order is the layout, the other a bug. A
    square matrix still pairs only as it stands (nothing else moves)."""
    a = WeightSide("paddle", (t("blk.lam.rel_pos_emb", "LambdaLayer", (15, 15, 8, 2)), t("blk.lam.q", "LambdaLayer", (16,)),
                              t("blk.mix.w", "Mixer", (8, 8))), PD)
    b = WeightSide("torch", (t("stage.lam.rel_emb", "LambdaConv", (8, 2, 15, 15)), t("stage.lam.q", "LambdaConv", (16,)),
                             t("stage.blend.w", "Blender", (8, 8))), TD)
    wm = match_weights(a, b)
    got = {p.a: p for p in wm.pairs}
    assert got["blk.lam.rel_pos_emb"].b == "stage.lam.rel_emb" and wm.ok, wm.summary_lines()
    assert got["blk.lam.rel_pos_emb"].relative_perm == (2, 3, 0, 1)
    assert got["blk.mix.w"].b == "stage.blend.w" and got["blk.mix.w"].relative_perm is None


def test_a_one_direction_rnn_named_backward_holds_the_bidirectional_layers_reverse_tensors() -> None:
    """Two one-direction GRUs ``fwd_gru`` and ``bwd_gru`` against one bidirectional GRU, and a
    hand-written decoder cell (two Linears) against a decoder GRU whose recurrent weight has the
    encoder's shape: ``bwd_gru``'s ``weight_hh_l0`` is the ``_reverse`` one, never the
    decoder's."""
    gru = {"GRU": ["torch.nn.modules.rnn.GRU", "torch.nn.modules.module.Module"]}

    def rnn(prefix: str, suffix: str = "") -> list[TensorInfo]:
        return [t(f"{prefix}.{k}_l0{suffix}", "GRU", s) for k, s in
                (("weight_ih", (48, 12)), ("weight_hh", (48, 16)), ("bias_ih", (48,)), ("bias_hh", (48,)))]

    cell = (*paddle_linear("decoder.cell.inp", 44, 48), *paddle_linear("decoder.cell.hid", 16, 48))
    decoder = [t(f"decoder.rnn.{k}_l0", "GRU", s) for k, s in
               (("weight_ih", (48, 44)), ("weight_hh", (48, 16)), ("bias_ih", (48,)), ("bias_hh", (48,)))]
    a = WeightSide("paddle", (*rnn("encoder.fwd_gru"), *rnn("encoder.bwd_gru"), *cell), PD)
    b = WeightSide("torch", (*rnn("encoder.rnn"), *rnn("encoder.rnn", "_reverse"), *decoder), {**TD, **gru})
    wm = match_weights(a, b)
    got = {p.a: p.b for p in wm.pairs}
    assert got["encoder.bwd_gru.weight_hh_l0"] == "encoder.rnn.weight_hh_l0_reverse", got
    assert got["encoder.fwd_gru.weight_hh_l0"] == "encoder.rnn.weight_hh_l0", got
    assert "decoder.rnn.weight_hh_l0" not in got.values(), got


def test_a_blocks_shortcut_is_the_other_sides_downsample_whatever_the_registration_order() -> None:
    """A bottleneck's expanding 1x1 convolution and its shortcut's have one shape (its input as
    wide as its middle). Torch registers
    ``downsample`` first, paddle ``shortcut`` last; the names ``conv3`` say nothing (a type word
    and a number), but ``shortcut`` and ``downsample`` name one role, wherever in the path they
    stand (here the unit around the convolution)."""
    conv = {"Conv2d": ["torch.nn.modules.conv.Conv2d", "torch.nn.modules.module.Module"]}
    a = WeightSide("paddle", (t("blocks.0.conv1.conv.weight", "Conv2D", (8, 8, 1, 1)),
                              t("blocks.0.conv3.conv.weight", "Conv2D", (32, 8, 1, 1)),
                              t("blocks.0.shortcut.conv.weight", "Conv2D", (32, 8, 1, 1))), PD)
    b = WeightSide("torch", (t("layers.0.downsample.0.weight", "Conv2d", (32, 8, 1, 1)),
                             t("layers.0.conv1.weight", "Conv2d", (8, 8, 1, 1)),
                             t("layers.0.conv3.weight", "Conv2d", (32, 8, 1, 1))), {**TD, **conv})
    wm = match_weights(a, b)
    got = {p.a: p.b for p in wm.pairs}
    assert got["blocks.0.shortcut.conv.weight"] == "layers.0.downsample.0.weight", got
    assert got["blocks.0.conv3.conv.weight"] == "layers.0.conv3.weight", got


def test_a_query_projection_never_pairs_with_a_value_projection() -> None:
    """Separate q, k, v projections against a fused ``to_kv`` and a ``to_q`` drawn in a module of
    the loop step: ranks and shapes would put ``to_v`` on ``step.to_q`` and ``to_q`` into the
    fused tensor; the roles the names say keep q with q and k|v with kv."""
    a = WeightSide("paddle", (*paddle_linear("feat_fc1", 16, 16), *paddle_linear("feat_fc2", 16, 16),
                              *paddle_linear("slot.to_q", 16, 16), *paddle_linear("slot.to_k", 16, 16),
                              *paddle_linear("slot.to_v", 16, 16)), PD)
    b = WeightSide("torch", (*torch_linear("mlp.1", 16, 16), *torch_linear("mlp.3", 16, 16),
                             *torch_linear("slot.to_kv", 16, 32), *torch_linear("slot.step.to_q", 16, 16)), TD)
    wm = match_weights(a, b)
    got = {(p.a, p.a_part, p.b_part): p.b for p in wm.pairs}
    assert got.get(("slot.to_q.weight", None, None)) == "slot.step.to_q.weight", got
    assert got.get(("slot.to_k.weight", None, (0, 16))) == "slot.to_kv.weight", got
    assert got.get(("slot.to_v.weight", None, (16, 32))) == "slot.to_kv.weight", got


def test_same_shape_tensors_nothing_tells_apart_pair_in_order_inside_one_place_only() -> None:
    """Layer scales as modules of their own (``stage1.0.ls1.gamma``) against a block's own
    parameters (``stages.0.0.gamma1``): no name or type relates them. The blocks holding them
    hold exactly each other's paired tensors (norm, fc), so each block's two scales are one
    group and pair in order (``order only``, low confidence); a block's scales never pair with the
    other block's, and a group with more tensors on one side pairs nothing."""
    from padiff_trace.matching._inorder import pair_in_order, subtree_place
    from padiff_trace.matching._weightmap import CONFIDENCE
    from padiff_trace.matching._weighttensors import normalise

    def sides(extra: bool) -> tuple[list, list]:
        pd, th = [], []
        for i in (1, 2):
            p, q = f"stage{i}.0", f"stages.{i - 1}.0"
            pd += [t(f"{p}.ls1.gamma", "LayerScale", (H,)), t(f"{p}.ls2.gamma", "LayerScale", (H,)),
                   t(f"{p}.fc.weight", "Linear", (H, H)), t(f"{p}.norm.weight", "LayerNorm", (H,))]
            th += [t(f"{q}.norm.weight", "LayerNorm", (H,)), t(f"{q}.fc.weight", "Linear", (H, H)),
                   t(f"{q}.gamma1", "Block", (H,)), t(f"{q}.gamma2", "Block", (H,))]
        if extra:
            th.append(t("stages.1.0.gamma3", "Block", (H,)))
        ls = {"LayerScale": ["port.LayerScale", "paddle.nn.layer.layers.Layer"]}
        block = {"Block": ["port.Block", "torch.nn.modules.module.Module"]}
        a = normalise(WeightSide("paddle", tuple(pd), {**PD, **ls}), "a")
        b = normalise(WeightSide("torch", tuple(th), {**TD, **block}), "b")
        return a, b

    for extra in (False, True):
        a, b = sides(extra)
        paired = [(f"stage{i}.0.{m}.weight", f"stages.{i - 1}.0.{m}.weight") for i in (1, 2) for m in ("fc", "norm")]
        for x in (*a, *b):
            x.used = x.info.local == "weight"
        got: list[tuple[str, str, str]] = []
        pair_in_order(a, b, subtree_place(paired), lambda x, y, how, got=got: got.append((x.info.name, y.info.name, how)))
        first = [("stage1.0.ls1.gamma", "stages.0.0.gamma1", "order only"), ("stage1.0.ls2.gamma", "stages.0.0.gamma2", "order only")]
        second = [("stage2.0.ls1.gamma", "stages.1.0.gamma1", "order only"), ("stage2.0.ls2.gamma", "stages.1.0.gamma2", "order only")]
        assert got == (first if extra else first + second), got
    assert CONFIDENCE["order only"] == "low"


def test_a_bias_waits_for_its_weight_where_the_two_weights_cannot_be_one() -> None:
    """The only 1x1 convolution bias of 4H on each side: paddle's MLP convolution's
    (``stage1.0.mlp.0``, a pointwise conv against torch's ``pwconv1`` Linear) and torch's fused
    ``proj_in`` of the next block (against paddle's ``proj_a | proj_b``). One of each, yet their
    weights ([4H, H] and [4H, 2H]) cannot be one tensor: each bias follows its own weight."""
    conv = {"Conv2D": ["paddle.nn.layer.conv.Conv2D", "paddle.nn.layer.layers.Layer"]}
    tconv = {"Conv2d": ["torch.nn.modules.conv.Conv2d", "torch.nn.modules.module.Module"]}
    pd = [t("stage1.0.mlp.0.weight", "Conv2D", (4 * H, H, 1, 1)), t("stage1.0.mlp.0.bias", "Conv2D", (4 * H,)),
          t("stage2.0.proj_a.weight", "Conv2D", (H, 2 * H, 1, 1)), t("stage2.0.proj_a.bias", "Conv2D", (H,)),
          t("stage2.0.proj_b.weight", "Conv2D", (3 * H, 2 * H, 1, 1)), t("stage2.0.proj_b.bias", "Conv2D", (3 * H,))]
    th = [t("stages.0.0.pwconv1.weight", "Linear", (4 * H, H)), t("stages.0.0.pwconv1.bias", "Linear", (4 * H,)),
          t("stages.1.0.proj_in.weight", "Conv2d", (4 * H, 2 * H, 1, 1)), t("stages.1.0.proj_in.bias", "Conv2d", (4 * H,))]
    wm = match_weights(WeightSide("paddle", tuple(pd), {**PD, **conv}), WeightSide("torch", tuple(th), {**TD, **tconv}))
    assert wm.ok, wm.problem_text("A", "B")
    got = {(p.a, p.a_part): (p.b, p.b_part) for p in wm.pairs}
    assert got[("stage1.0.mlp.0.bias", None)] == ("stages.0.0.pwconv1.bias", None)
    assert got[("stage2.0.proj_a.bias", None)] == ("stages.1.0.proj_in.bias", (0, H))
    assert got[("stage2.0.proj_b.bias", None)] == ("stages.1.0.proj_in.bias", (H, 4 * H))


def test_norms_named_alike_pair_by_their_names_not_their_registration_order() -> None:
    """A block's two norms registered ``norm2`` first on one side, ``norm1`` first on the other,
    their types apart (a hand-written channels-first norm against the framework's), beside a
    stem norm and a downsampling norm of the same shape named otherwise on each side. The names
    pair the block's norms one to one; the root holding two norms of its own does not shift
    which block is which. Where the norms are left to units of their own, their names pair those
    units too (``_named_alike``)."""
    from padiff_trace.matching._subtrees import _named_alike
    from padiff_trace.matching._weighttensors import normalise

    ln = {"LayerNorm": ["port.LayerNorm", "torch.nn.modules.module.Module"]}
    conv = {"Conv2D": ["paddle.nn.layer.conv.Conv2D", "paddle.nn.layer.layers.Layer"]}
    tconv = {"Conv2d": ["torch.nn.modules.conv.Conv2d", "torch.nn.modules.module.Module"]}
    pd = [t("stem_conv.weight", "Conv2D", (H, 3, 4, 4)), *norm("stem_norm"), t("stage1.0.fc.weight", "Linear", (H, H)),
          t("stage1.0.fc.bias", "Linear", (H,)), *norm("stage1.0.norm2"), *norm("stage1.0.norm1"), *norm("down_norm"),
          t("down_conv.weight", "Conv2D", (2 * H, H, 2, 2))]
    th = [t("downsample.0.0.weight", "Conv2d", (H, 3, 4, 4)), *norm("downsample.0.1"), *norm("stages.0.0.norm1"),
          t("stages.0.0.fc.weight", "Linear", (H, H)), t("stages.0.0.fc.bias", "Linear", (H,)), *norm("stages.0.0.norm2"),
          *norm("downsample.1.0"), t("downsample.1.1.weight", "Conv2d", (2 * H, H, 2, 2))]
    a, b = WeightSide("paddle", tuple(pd), {**PD, **conv}), WeightSide("torch", tuple(th), {**TD, **ln, **tconv})
    wm = match_weights(a, b)
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: p.b for p in wm.pairs}
    for n in ("norm1", "norm2"):
        assert got[f"stage1.0.{n}.weight"] == f"stages.0.0.{n}.weight", got
        assert got[f"stage1.0.{n}.bias"] == f"stages.0.0.{n}.bias", got
    assert got["down_norm.weight"] == "downsample.1.0.weight", got
    ma, mb = normalise(a, "a"), normalise(b, "b")
    units_a = [[x for x in ma if x.info.module == f"stage1.0.{n}"] for n in ("norm2", "norm1")]
    units_b = [[y for y in mb if y.info.module == f"stages.0.0.{n}"] for n in ("norm1", "norm2")]
    assert _named_alike(units_a, units_b) == units_b[::-1]
    units_b[1] = [y for y in mb if y.info.module == "downsample.1.0"]  # names that do not pair one to one: order stands
    assert _named_alike(units_a, units_b) == units_b


def test_a_fused_linear_holds_three_pointwise_convolutions_of_its_partner_module() -> None:
    """A focal modulation: paddle's one Linear ``f`` (q | ctx | gates, [in, out]) beside a 1x1
    ``h`` and a Linear ``proj``; torch's five 1x1 convolutions ``to_q``, ``to_ctx``, ``to_gates``,
    ``h``, ``proj``. ``h`` and ``proj`` are the only layers of their class with their name in a
    ``modulation`` on each side; with them paired the modules are partners, and the three
    convolutions there are the parts of ``f``."""
    conv = {"Conv2D": ["paddle.nn.layer.conv.Conv2D", "paddle.nn.layer.layers.Layer"]}
    tconv = {"Conv2d": ["torch.nn.modules.conv.Conv2d", "torch.nn.modules.module.Module"]}
    m, n = "blocks.0.modulation", "stages.0.0.modulation"
    pd = [*paddle_linear(f"{m}.f", H, 2 * H + 3), t(f"{m}.h.weight", "Conv2D", (H, H, 1, 1)), t(f"{m}.h.bias", "Conv2D", (H,)),
          *paddle_linear(f"{m}.proj", H, H)]
    th = []
    for name, out in (("to_q", H), ("to_ctx", H), ("to_gates", 3), ("h", H), ("proj", H)):
        th += [t(f"{n}.{name}.weight", "Conv2d", (out, H, 1, 1)), t(f"{n}.{name}.bias", "Conv2d", (out,))]
    wm = match_weights(WeightSide("paddle", tuple(pd), {**PD, **conv}), WeightSide("torch", tuple(th), {**TD, **tconv}))
    assert wm.ok, wm.problem_text("A", "B")
    got = {(p.b, p.a_part): p.a for p in wm.pairs}
    assert got[(f"{n}.h.weight", None)] == f"{m}.h.weight"
    assert got[(f"{n}.proj.weight", None)] == f"{m}.proj.weight"
    for name, part in (("to_q", (0, H)), ("to_ctx", (H, 2 * H)), ("to_gates", (2 * H, 2 * H + 3))):
        assert got[(f"{n}.{name}.weight", part)] == f"{m}.f.weight", got
        assert got[(f"{n}.{name}.bias", part)] == f"{m}.f.bias", got


def test_a_spectral_normed_layer_pairs_its_raw_weight_and_its_power_iteration_state() -> None:
    """paddle's spectral norm keeps the layer's weight as ``weight_orig`` (a Linear's [in, out]),
    its power-iteration vectors as buffers ``weight_u``/``weight_v`` and the normalised weight it
    computes; a port's own spectral norm keeps ``weight`` and buffers ``sn_u``/``sn_v``. The raw
    weight is the layer's weight in the layer's layout; the vectors are the state the model
    carries, each the only one of its shape in its partner layer (``block1.c1`` against
    ``blocks.0.conv1``: no block index in common)."""
    conv = {"Conv2D": ["paddle.nn.layer.conv.Conv2D", "paddle.nn.layer.layers.Layer"]}
    tconv = {"Conv2d": ["torch.nn.modules.conv.Conv2d", "torch.nn.modules.module.Module"],
             "SNLinear": ["port.SNLinear", "torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"]}
    pd, th = [], []
    for p, q in (("block1.c1", "blocks.0.conv1"), ("block1.c2", "blocks.0.conv2")):
        pd += [t(f"{p}.weight_orig", "Conv2D", (F, 3, 3, 3)), t(f"{p}.bias", "Conv2D", (F,)),
               t(f"{p}.weight_u", "Conv2D", (F,), param=False), t(f"{p}.weight_v", "Conv2D", (27,), param=False),
               t(f"{p}.weight", "Conv2D", (F, 3, 3, 3), param=False, persistent=False)]
        th += [t(f"{q}.weight", "Conv2d", (F, 3, 3, 3)), t(f"{q}.bias", "Conv2d", (F,)),
               t(f"{q}.sn_u", "Conv2d", (F,), param=False), t(f"{q}.sn_v", "Conv2d", (27,), param=False)]
    pd += [t("l5.weight_orig", "Linear", (H, 1)), t("l5.bias", "Linear", (1,)),
           t("l5.weight_u", "Linear", (1,), param=False), t("l5.weight_v", "Linear", (H,), param=False)]
    th += [t("linear.weight", "SNLinear", (1, H)), t("linear.bias", "SNLinear", (1,)),
           t("linear.sn_u", "SNLinear", (1,), param=False), t("linear.sn_v", "SNLinear", (H,), param=False)]
    wm = match_weights(WeightSide("paddle", tuple(pd), {**PD, **conv}), WeightSide("torch", tuple(th), {**TD, **tconv}))
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: p.b for p in wm.pairs}
    for p, q in (("block1.c1", "blocks.0.conv1"), ("block1.c2", "blocks.0.conv2")):
        assert (got[f"{p}.weight_orig"], got[f"{p}.weight_u"], got[f"{p}.weight_v"]) == (f"{q}.weight", f"{q}.sn_u", f"{q}.sn_v")
    lin = next(p for p in wm.pairs if p.a == "l5.weight_orig")
    assert (lin.b, lin.relative_perm) == ("linear.weight", (1, 0))
    assert (got["l5.weight_u"], got["l5.weight_v"]) == ("linear.sn_u", "linear.sn_v")


def test_copies_a_model_keeps_of_its_weights_pair_as_the_weights_they_copy() -> None:
    """An EMA kept as root buffers named by hand (``ema_fc1_weight``) against an averaged model's
    frozen parameters (``ema.module.fc1.weight``): nothing in the names pairs them, their values
    before the first step do: each copy holds its weight's statistics. Fresh norms (all ones) are
    told apart by the name the copy ends with; a copy whose weight's partner has no copy, or a
    tensor that copies nothing, stays unpaired. The trained norms are the other side's trained
    ones, the frozen copies aside."""
    rng = np.random.default_rng(0)

    def fp() -> tuple[float, ...]:
        return tuple(float(v) for v in rng.normal(size=8))

    ones = (1.0, 1.0, 1.0, 0.0, 1.0, float(np.sqrt(H)), 0.0, 0.0)
    src = {n: fp() for n in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "norm2.bias", "norm.bias")}
    src["norm.weight"] = src["norm2.weight"] = ones
    pd = paddle_linear("fc1", H, F) + paddle_linear("fc2", F, H) + norm("norm") + norm("norm2")
    pd += [t(f"ema_{n.replace('.', '_')}", "Model", s.shape, param=False) for n, s in
           ((x.name, x) for x in pd if not x.name.startswith("fc2"))]
    pd.append(t("stray", "Model", (H,), param=False))  # copies nothing
    online = torch_linear("online.fc1", H, F) + torch_linear("online.fc2", F, H) + norm("online.norm") + norm("online.norm2")
    th = online + [t(x.name.replace("online.", "ema.module."), x.module_type, x.shape, trainable=False) for x in online]
    fa = {**src, **{f"ema_{n.replace('.', '_')}": v for n, v in src.items()}, "stray": fp()}
    fb = {f"online.{n}": v for n, v in src.items()} | {f"ema.module.{n}": v for n, v in src.items()}
    wm = match_weights(WeightSide("paddle", tuple(pd), PD, fingerprints=fa), WeightSide("torch", tuple(th), TD, fingerprints=fb))
    got = {p.a: (p.b, p.how) for p in wm.pairs}
    # trained norms pair with the trained ones, not with the averaged model's frozen copies
    assert got["norm2.weight"][0] == "online.norm2.weight" and got["norm.bias"][0] == "online.norm.bias"
    assert got["ema_fc1_weight"] == ("ema.module.fc1.weight", "shadow")
    assert got["fc1.weight"][0] == "online.fc1.weight"
    q = next(p for p in wm.pairs if p.a == "ema_fc1_weight")
    assert q.relative_perm == (1, 0)  # the layout its weight's pair has: paddle [in, out], torch [out, in]
    assert got["ema_norm_weight"] == ("ema.module.norm.weight", "shadow")  # all ones: the name it ends with
    assert got["ema_norm2_weight"] == ("ema.module.norm2.weight", "shadow")
    assert "stray" not in got  # copies nothing
    assert got["ema_fc1_bias"] == ("ema.module.fc1.bias", "shadow")
    assert not any(p.b.startswith("ema.module.fc2") for p in wm.pairs)  # fc2's copy is B's only


def test_a_lists_layers_kept_one_after_the_other_in_one_tensor_per_role() -> None:
    """A Res2Net stage's branch convolutions as a list of Conv1D + BatchNorm layers (paddle)
    against one module keeping each role's tensors of all branches concatenated along their first
    axis, sliced per branch in its forward (``kernels [3w, w, k]``, ``kernel_bias``, ``bn_gamma``,
    ``bn_beta`` ``[3w]``, running statistics as buffers): each branch's tensor is its slice, the
    roles the names cannot tell apart in the order both register them. The stack in ``body.0``
    holds the list inside ``stages.0``, never the first branch of every stage."""
    w, k = 4, 3
    conv = {**PD, "Conv1D": ["paddle.nn.layer.conv.Conv1D", "paddle.nn.layer.layers.Layer"],
            "BatchNorm1D": ["paddle.nn.layer.norm.BatchNorm1D", "paddle.nn.layer.layers.Layer"]}
    user = {**TD, "Res2": ["port.Res2", "torch.nn.modules.module.Module"]}
    pd, th = [], []
    for s in range(3):
        for b in range(3):
            m = f"stages.{s}.res2.branches.{b}"
            pd += [t(f"{m}.conv1d.weight", "Conv1D", (w, w, k)), t(f"{m}.conv1d.bias", "Conv1D", (w,)),
                   t(f"{m}.norm.weight", "BatchNorm1D", (w,)), t(f"{m}.norm.bias", "BatchNorm1D", (w,)),
                   t(f"{m}.norm._mean", "BatchNorm1D", (w,), param=False), t(f"{m}.norm._variance", "BatchNorm1D", (w,), param=False)]
        m = f"body.{s}.res2"
        th += [t(f"{m}.kernels", "Res2", (3 * w, w, k)), t(f"{m}.kernel_bias", "Res2", (3 * w,)),
               t(f"{m}.bn_gamma", "Res2", (3 * w,)), t(f"{m}.bn_beta", "Res2", (3 * w,)),
               t(f"{m}.bn_mean", "Res2", (3 * w,), param=False), t(f"{m}.bn_var", "Res2", (3 * w,), param=False)]
    wm = match_weights(WeightSide("paddle", tuple(pd), conv), WeightSide("torch", tuple(th), user))
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: (p.b, p.b_part) for p in wm.pairs}
    for s in range(3):
        for b in range(3):
            m, part = f"stages.{s}.res2.branches.{b}", (b * w, (b + 1) * w)
            assert got[f"{m}.conv1d.weight"] == (f"body.{s}.res2.kernels", part)
            assert got[f"{m}.conv1d.bias"] == (f"body.{s}.res2.kernel_bias", part)
            assert got[f"{m}.norm.weight"] == (f"body.{s}.res2.bn_gamma", part)
            assert got[f"{m}.norm.bias"] == (f"body.{s}.res2.bn_beta", part)
            assert got[f"{m}.norm._variance"] == (f"body.{s}.res2.bn_var", part)
    # a vector of one block is no list of every block's vectors one after the other, nor a vector
    # of a module whose other tensors hold no list so: each stage's norm scale is its block's own
    pd += [t(f"stages.{s}.ln.weight", "LayerNorm", (H,)) for s in range(3)]
    th += [t("body.0.gain", "Res2", (3 * H,))] + [t(f"body.{s}.norm.delta", "DeltaNorm", (H,)) for s in range(3)]
    wm = match_weights(WeightSide("paddle", tuple(pd), conv), WeightSide("torch", tuple(th), user))
    got = {p.a: (p.b, p.b_part) for p in wm.pairs}
    assert [got[f"stages.{s}.ln.weight"] for s in range(3)] == [(f"body.{s}.norm.delta", None) for s in range(3)]


def test_the_last_ones_standing_in_a_place_pair_by_the_roles_their_layers_names_say() -> None:
    """Block-diagonal q, k, v maps as a class of one's own (``blocks [8, 4, 4]``) against grouped
    pointwise convolutions (``[32, 4, 1]``, groups 8): same element count, no name or class in
    common, three candidates each in the block; ``q_map`` is ``wq``, ``k_map`` ``wk``."""
    conv = {**TD, "Conv1d": ["torch.nn.modules.conv.Conv1d", "torch.nn.modules.module.Module"]}
    pd, th = [], []
    for i in range(2):
        pd += [t(f"stack.{i}.{r}_map.blocks", "BlockDiag", (8, 4, 4)) for r in ("q", "k", "v")]
        th += [t(f"layers.{i}.w{r}.weight", "Conv1d", (32, 4, 1)) for r in ("v", "q", "k")]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), conv))
    assert wm.ok, wm.problem_text("A", "B")
    got = pairs(wm)
    assert all(got[f"stack.{i}.{r}_map.blocks"] == f"layers.{i}.w{r}.weight" for i in range(2) for r in ("q", "k", "v"))


class _Counted(dict):  # type: ignore[type-arg]
    """Fingerprints that count what the matcher reads (a live model's are host copies)."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []

    def get(self, key, default=None):  # type: ignore[no-untyped-def]
        self.read.append(key)
        return default


def test_no_statistics_are_read_where_no_side_keeps_copies() -> None:
    """A trained tensor left over is a structural difference, never a copy: with nothing frozen
    or buffered left on a side, the matcher reads no tensor's statistics (on a live model each is
    a copy to the host)."""
    pd = paddle_bert()
    th = torch_bert()
    extra = t("encoder.layers.0.extra_gate.weight", "Linear", (H, H))
    fa, fb = _Counted(), _Counted()
    wm = match_weights(WeightSide("paddle", (*pd.tensors, extra), PD, fingerprints=fa), WeightSide("torch", th.tensors, TD, fingerprints=fb))
    assert extra.name in {x.name for x in wm.unmatched_a}
    assert fa.read == [] and fb.read == []


def test_a_stems_norms_pair_beside_the_convolutions_their_widths_name() -> None:
    """LeViT-like: paddle's stem is ``patch_embed.0`` / ``.2`` (a conv and its BatchNorm each),
    torch's one ``stem`` holding ``conv1, bn1, conv2, bn2``; torch has more 8-wide BatchNorms
    elsewhere (its attention's q and k, which paddle fuses with v into one 24-wide norm). The
    stem's norms are as wide as one convolution each there: they work for those convolutions, so
    each pairs with the norm beside its convolution's partner."""
    conv = {"Conv2D": ["paddle.nn.layer.conv.Conv2D", "paddle.nn.layer.layers.Layer"],
            "BatchNorm2D": ["paddle.nn.layer.norm.BatchNorm2D", "paddle.nn.layer.layers.Layer"],
            "BatchNorm1D": ["paddle.nn.layer.norm.BatchNorm1D", "paddle.nn.layer.layers.Layer"]}
    tconv = {"Conv2d": ["torch.nn.modules.conv.Conv2d", "torch.nn.modules.module.Module"],
             "BatchNorm2d": ["torch.nn.modules.batchnorm.BatchNorm2d", "torch.nn.modules.module.Module"],
             "BatchNorm1d": ["torch.nn.modules.batchnorm.BatchNorm1d", "torch.nn.modules.module.Module"]}

    def bn(prefix: str, mtype: str, n: int) -> list[TensorInfo]:
        return [t(f"{prefix}.weight", mtype, (n,)), t(f"{prefix}.bias", mtype, (n,))]

    pd = [t("patch_embed.0.c.weight", "Conv2D", (8, 3, 3, 3)), *bn("patch_embed.0.bn", "BatchNorm2D", 8),
          t("patch_embed.2.c.weight", "Conv2D", (16, 8, 3, 3)), *bn("patch_embed.2.bn", "BatchNorm2D", 16),
          *paddle_linear("blocks.0.qkv.c", 16, 24), *bn("blocks.0.qkv.bn", "BatchNorm1D", 24),
          *paddle_linear("blocks.0.proj.c", 8, 16), *bn("blocks.0.proj.bn", "BatchNorm1D", 16)]
    th = [t("stem.conv1.weight", "Conv2d", (8, 3, 3, 3)), *bn("stem.bn1", "BatchNorm2d", 8),
          t("stem.conv2.weight", "Conv2d", (16, 8, 3, 3)), *bn("stem.bn2", "BatchNorm2d", 16)]
    for r in ("q", "k"):
        th += [t(f"stage1.attn.{r}.linear.weight", "Linear", (8, 16)), *bn(f"stage1.attn.{r}.bn", "BatchNorm1d", 8)]
    th += [t("stage1.attn.v.linear.weight", "Linear", (8, 16)), *bn("stage1.attn.v.bn", "BatchNorm1d", 8),
           t("stage1.attn.out.linear.weight", "Linear", (16, 8)), *bn("stage1.attn.out.bn", "BatchNorm1d", 16)]
    wm = match_weights(WeightSide("paddle", tuple(pd), {**PD, **conv}), WeightSide("torch", tuple(th), {**TD, **tconv}))
    got = pairs(wm)
    assert got["patch_embed.0.bn.weight"] == "stem.bn1.weight", wm.problem_text("A", "B")
    assert got["patch_embed.0.bn.bias"] == "stem.bn1.bias"
    assert got["patch_embed.2.bn.weight"] == "stem.bn2.weight"


def test_a_detection_heads_class_and_box_convolutions_pair_by_their_branch_names() -> None:
    """PaddleDetection's RetinaNet head registers its class and box convolutions alternately
    (``cls_conv_0``, ``reg_conv_0``, ``cls_conv_1``, ``reg_conv_1``), torchvision's keeps two
    subnets (``classification_head.conv.N.0``, ``regression_head.conv.N.0``): four same-shape
    convolutions. ``cls`` ~ ``classification`` and ``reg`` ~ ``regression`` are one role each
    (``ROLE_SYNONYMS``), so each pairs within its branch, in order, not by registration rank."""
    conv = {"Conv2D": ["paddle.nn.layer.conv.Conv2D", "paddle.nn.layer.layers.Layer"]}
    tconv = {"Conv2d": ["torch.nn.modules.conv.Conv2d", "torch.nn.modules.module.Module"]}

    def c(prefix: str, mtype: str, o: int = 16) -> list[TensorInfo]:
        return [t(f"{prefix}.weight", mtype, (o, 16, 3, 3)), t(f"{prefix}.bias", mtype, (o,))]

    pd = [x for i in range(2) for b in ("cls", "reg") for x in c(f"head.conv_feat.{b}_conv_{i}", "Conv2D")]
    pd += [*c("head.retina_cls", "Conv2D", 12), *c("head.retina_reg", "Conv2D", 36)]
    th = [x for b in ("classification", "regression") for i in range(2) for x in c(f"head.{b}_head.conv.{i}.0", "Conv2d")]
    th += [*c("head.classification_head.cls_logits", "Conv2d", 12), *c("head.regression_head.bbox_reg", "Conv2d", 36)]
    wm = match_weights(WeightSide("paddle", tuple(pd), conv), WeightSide("torch", tuple(th), tconv))
    got = pairs(wm)
    for b, head in (("cls", "classification"), ("reg", "regression")):
        for i in range(2):
            for local in ("weight", "bias"):
                assert got[f"head.conv_feat.{b}_conv_{i}.{local}"] == f"head.{head}_head.conv.{i}.0.{local}", wm.text()


def test_packed_parts_stay_in_the_repeat_their_block_partners_with() -> None:
    """A hierarchical ViT: paddle's blocks in stages (``stages.1.blocks.0``) with a separate ``q``
    beside a packed ``kv``, torch's in one flat list with one ``qkv``; widths double at each
    stage, so a stage-1 ``kv`` [64 rows] has the size of stage 0's ``qkv`` [48] and ``proj`` [16]
    side by side. The blocks' norms pair ``stages.1.blocks.0`` with ``blocks.1``: the parts of
    its ``kv`` are looked for there, never in ``blocks.0``, the repeat before it in the list."""
    def ln(prefix: str, n: int) -> list[TensorInfo]:
        return [t(f"{prefix}.weight", "LayerNorm", (n,)), t(f"{prefix}.bias", "LayerNorm", (n,))]

    pd: list[TensorInfo] = []
    th: list[TensorInfo] = []
    plan = [("stages.0.blocks.0", 16, 16, False), ("stages.1.blocks.0", 16, 32, True),
            ("stages.1.blocks.1", 32, 32, False), ("stages.2.blocks.0", 32, 64, True)]
    for i, (p, d_in, d, pool) in enumerate(plan):
        pd += [*ln(f"{p}.ln1", d_in), *paddle_linear(f"{p}.attn.q", d_in, d), *paddle_linear(f"{p}.attn.kv", d_in, 2 * d),
               *paddle_linear(f"{p}.attn.out", d, d), *ln(f"{p}.ln2", d), *paddle_linear(f"{p}.ffn.linear1", d, 4 * d),
               *paddle_linear(f"{p}.ffn.linear2", 4 * d, d), *(paddle_linear(f"{p}.shortcut_proj", d_in, d) if pool else [])]
        b = f"blocks.{i}"
        th += [*ln(f"{b}.norm1", d_in), *torch_linear(f"{b}.attn.qkv", d_in, 3 * d), *torch_linear(f"{b}.attn.proj", d, d),
               *ln(f"{b}.norm2", d), *torch_linear(f"{b}.mlp.fc1", d, 4 * d), *torch_linear(f"{b}.mlp.fc2", 4 * d, d),
               *(torch_linear(f"{b}.proj", d_in, d) if pool else [])]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    got = {(p.a, p.b, p.b_part) for p in wm.pairs if ".attn." in p.a}
    for i, (p, _, d, _) in enumerate(plan):
        assert (f"{p}.attn.q.weight", f"blocks.{i}.attn.qkv.weight", (0, d)) in got, sorted(got)
        assert (f"{p}.attn.kv.weight", f"blocks.{i}.attn.qkv.weight", (d, 3 * d)) in got, sorted(got)
        assert (f"{p}.attn.out.weight", f"blocks.{i}.attn.proj.weight", None) in got, sorted(got)
    assert not wm.unmatched_a and not wm.unmatched_b, (wm.unmatched_a, wm.unmatched_b)
