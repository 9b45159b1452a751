"""Which tensors and module calls correspond where two ports split, fuse, nest or register
their parts differently (session 23): rules found on held-out set 13 and tested here on
tensor lists of our own shapes (fast), plus the call alignment they feed.

- two towers registered in another order (text first on one side): the group order is read
  within each tower (``assign``), and a packed projection goes to its own tower's run;
- the same full name with shapes that differ by size-1 axes only (a 0-d scale against [1]);
- a multi-layer RNN against k one-layer RNNs: ``weight_ih_l{k}`` is a block index;
- one module's tensors kept in several modules on the other side: neither is its partner
  (``module_splits``);
- modules whose subtrees hold exactly each other's tensors anchor each other (a hand-written
  attention with fused ``qkv`` and ``proj`` against ``nn.MultiheadAttention``).
"""

from __future__ import annotations

from padiff_trace.matching import module_splits
from padiff_trace.matching._weightmap import TensorInfo
from padiff_trace.matching._weightmatch import WeightSide, match_weights, module_anchors

H, F = 8, 32
PD = {"Linear": ["paddle.nn.layer.common.Linear", "paddle.nn.layer.layers.Layer"],
      "LayerNorm": ["paddle.nn.layer.norm.LayerNorm", "paddle.nn.layer.layers.Layer"],
      "LSTM": ["paddle.nn.layer.rnn.LSTM", "paddle.nn.layer.layers.Layer"],
      "MultiHeadAttention": ["paddle.nn.layer.transformer.MultiHeadAttention", "paddle.nn.layer.layers.Layer"],
      "Dual": ["port.Dual", "paddle.nn.layer.layers.Layer"],
      "SelfAttention": ["port.SelfAttention", "paddle.nn.layer.layers.Layer"]}
TD = {"Linear": ["torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"],
      "LayerNorm": ["torch.nn.modules.normalization.LayerNorm", "torch.nn.modules.module.Module"],
      "LSTM": ["torch.nn.modules.rnn.LSTM", "torch.nn.modules.module.Module"],
      "MultiheadAttention": ["torch.nn.modules.activation.MultiheadAttention", "torch.nn.modules.module.Module"],
      "NonDynamicallyQuantizableLinear": ["torch.nn.modules.linear.NonDynamicallyQuantizableLinear",
                                          "torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"],
      "Towers": ["port.Towers", "torch.nn.modules.module.Module"]}


def t(name: str, mtype: str, shape: tuple[int, ...]) -> TensorInfo:
    mod, _, local = name.rpartition(".")
    return TensorInfo(name, mod, local, mtype, shape, True, True, True)


def norm(prefix: str) -> list[TensorInfo]:
    return [t(f"{prefix}.weight", "LayerNorm", (H,)), t(f"{prefix}.bias", "LayerNorm", (H,))]


def paddle_block(prefix: str) -> list[TensorInfo]:
    """A pre-norm block on paddle's built-in attention: q/k/v/out_proj without bias, [in, out]."""
    ts = norm(f"{prefix}.norm1")
    ts += [t(f"{prefix}.attn.{n}.weight", "Linear", (H, H)) for n in ("q_proj", "k_proj", "v_proj", "out_proj")]
    return ts + norm(f"{prefix}.norm2") + [t(f"{prefix}.fc1.weight", "Linear", (H, F)), t(f"{prefix}.fc2.weight", "Linear", (F, H))]


def torch_block(prefix: str) -> list[TensorInfo]:
    """The same block on torch's ``nn.MultiheadAttention`` (packed in_proj) with its own names."""
    return (norm(f"{prefix}.ln_1")
            + [t(f"{prefix}.attn.in_proj_weight", "MultiheadAttention", (3 * H, H)),
               t(f"{prefix}.attn.out_proj.weight", "NonDynamicallyQuantizableLinear", (H, H))]
            + norm(f"{prefix}.ln_2")
            + [t(f"{prefix}.mlp.c_fc.weight", "Linear", (F, H)), t(f"{prefix}.mlp.c_proj.weight", "Linear", (H, F))])


def towers() -> tuple[WeightSide, WeightSide]:
    """A dual encoder: paddle registers the image tower first, torch the text tower first (at its
    root), each tower one block; a 0-d logit scale on paddle's root, a [1] one on torch's."""
    pd = paddle_block("visual.block") + norm("visual.ln_post") + paddle_block("text.block") + norm("text.ln_final")
    pd.append(t("logit_scale", "Dual", ()))
    th = torch_block("transformer.resblocks.0") + norm("ln_final")
    th += torch_block("visual.transformer.resblocks.0") + norm("visual.ln_post") + [t("logit_scale", "Towers", (1,))]
    return WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD)


def test_two_towers_registered_in_another_order_pair_within_each_tower() -> None:
    wm = match_weights(*towers())
    assert wm.ok, wm.problem_text("A", "B")
    by_a = {p.a: p for p in wm.pairs}
    # the LayerNorms of one tower, in the tower's own order (not shifted by the other tower)
    assert by_a["visual.block.norm1.weight"].b == "visual.transformer.resblocks.0.ln_1.weight"
    assert by_a["visual.block.norm2.weight"].b == "visual.transformer.resblocks.0.ln_2.weight"
    assert by_a["text.block.norm1.weight"].b == "transformer.resblocks.0.ln_1.weight"
    assert by_a["text.block.norm2.weight"].b == "transformer.resblocks.0.ln_2.weight"
    # each tower's q/k/v in its own tower's packed projection
    assert by_a["visual.block.attn.q_proj.weight"].b == "visual.transformer.resblocks.0.attn.in_proj_weight"
    assert by_a["text.block.attn.v_proj.weight"].b == "transformer.resblocks.0.attn.in_proj_weight"
    assert by_a["text.block.attn.v_proj.weight"].b_part == (2 * H, 3 * H)


def test_the_same_name_with_size_one_axes_apart_is_one_tensor_reshaped() -> None:
    wm = match_weights(*towers())
    p = next(p for p in wm.pairs if p.a == "logit_scale")
    assert (p.b, p.how) == ("logit_scale", "reshape")
    assert not wm.unmatched_a and not wm.unmatched_b


def test_a_two_layer_lstm_pairs_with_two_one_layer_lstms_in_layer_order() -> None:
    g = 4 * H
    pd = [t(f"lstm.{k}_l{i}", "LSTM", s) for i in range(2)
          for k, s in (("weight_ih", (g, H)), ("weight_hh", (g, H)), ("bias_ih", (g,)), ("bias_hh", (g,)))]
    th = [t(f"rnns.{i}.{k}_l0", "LSTM", s) for i in range(2)
          for k, s in (("weight_ih", (g, H)), ("weight_hh", (g, H)), ("bias_ih", (g,)), ("bias_hh", (g,)))]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    assert wm.ok, wm.problem_text("A", "B")
    got = {p.a: p.b for p in wm.pairs}
    assert got["lstm.weight_ih_l1"] == "rnns.1.weight_ih_l0" and got["lstm.bias_hh_l0"] == "rnns.0.bias_hh_l0"
    # the one paddle LSTM holds both torch LSTMs' tensors: it is the call partner of neither
    assert module_splits(wm) == {"lstm": frozenset({"rnns.0", "rnns.1"})}
    assert "lstm" not in module_anchors(wm)  # one module's tensors against two modules': no container


def test_a_hand_written_attention_anchors_torch_multihead_attention_by_its_whole_subtree() -> None:
    pd = norm("blocks.0.norm1") + [t("blocks.0.attn.qkv.weight", "Linear", (H, 3 * H)),
                                   t("blocks.0.attn.qkv.bias", "Linear", (3 * H,)),
                                   t("blocks.0.attn.proj.weight", "Linear", (H, H)),
                                   t("blocks.0.attn.proj.bias", "Linear", (H,))]
    th = norm("layers.0.ln1") + [t("layers.0.self_attn.in_proj_weight", "MultiheadAttention", (3 * H, H)),
                                 t("layers.0.self_attn.in_proj_bias", "MultiheadAttention", (3 * H,)),
                                 t("layers.0.self_attn.out_proj.weight", "NonDynamicallyQuantizableLinear", (H, H)),
                                 t("layers.0.self_attn.out_proj.bias", "NonDynamicallyQuantizableLinear", (H,))]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    assert wm.ok, wm.problem_text("A", "B")
    anchors = module_anchors(wm)
    # the fused qkv Linear is not the whole attention (torch's out_proj sits inside it)...
    assert anchors.get("blocks.0.attn.qkv") != "layers.0.self_attn"
    # ...the attention is: the subtrees hold exactly each other's tensors
    assert anchors["blocks.0.attn"] == "layers.0.self_attn"
    assert anchors["blocks.0.attn.proj"] == "layers.0.self_attn.out_proj"
    assert anchors["blocks.0.norm1"] == "layers.0.ln1"
    # the root holds what blocks.0 holds: which of the two nested modules is layers.0 the weights
    # do not say (a DenseNet transition's BN+conv layer inside a transition with a pool)
    assert "blocks.0" not in anchors


def test_packed_self_and_cross_attention_take_their_own_projections_whatever_the_order() -> None:
    """A decoder layer: paddle's ``self_attn`` and ``multihead_attn`` (q/k/v/out_proj each)
    against torch's ``self_attn`` and ``cross_attn`` (packed ``in_proj_weight``):
    each packed tensor takes the run whose path says its attention, not the first registered."""
    pd: list[TensorInfo] = []
    for a in ("self_attn", "multihead_attn"):
        pd += [t(f"transformer.decoder.layers.0.{a}.{n}.weight", "Linear", (H, H)) for n in ("q_proj", "k_proj", "v_proj", "out_proj")]
    th: list[TensorInfo] = []
    for a in ("self_attn", "cross_attn"):
        th += [t(f"decoder_layers.0.{a}.in_proj_weight", "MultiheadAttention", (3 * H, H)),
               t(f"decoder_layers.0.{a}.out_proj.weight", "NonDynamicallyQuantizableLinear", (H, H))]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    assert wm.ok, wm.problem_text("A", "B")
    by_a = {p.a: p.b for p in wm.pairs}
    assert by_a["transformer.decoder.layers.0.self_attn.k_proj.weight"] == "decoder_layers.0.self_attn.in_proj_weight"
    assert by_a["transformer.decoder.layers.0.multihead_attn.q_proj.weight"] == "decoder_layers.0.cross_attn.in_proj_weight"


def test_a_two_layer_bidirectional_lstm_named_another_way_keeps_each_layer_and_direction() -> None:
    """``lstm.weight_hh_l1_reverse`` against ``rnn.weight_hh_l1_reverse``: the module's other
    tensors follow its weight layer by layer (same shapes in layers 0 and 1), never crosswise."""
    g = 4 * H
    names = [(f"{k}_l{i}{d}", s) for i in range(2) for d in ("", "_reverse")
             for k, s in (("weight_ih", (g, H if i == 0 else 2 * H)), ("weight_hh", (g, H)), ("bias_ih", (g,)), ("bias_hh", (g,)))]
    pd = [t(f"lstm.{n}", "LSTM", s) for n, s in names]
    th = [t(f"rnn.{n}", "LSTM", s) for n, s in names]
    wm = match_weights(WeightSide("paddle", tuple(pd), PD), WeightSide("torch", tuple(th), TD))
    assert {p.a: p.b for p in wm.pairs} == {f"lstm.{n}": f"rnn.{n}" for n, _ in names}
