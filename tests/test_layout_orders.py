"""Values in another order across two correct ports (fast, no framework).

* Features concatenated in another order (Swin's patch merging takes four neighbours as
  ``[x0, x1, x2, x3]`` in one port and ``[x0, x2, x1, x3]`` in the other): ``chunk_order`` finds
  the order from the recorded values, ``regroup_orders`` reads a norm's input and output, and a
  Linear's input, in the other side's order where the weights were paired chunk by chunk.
* A value read in the layout of the call around it (viewed in that shape, axes permuted):
  ``channel_order`` says which element of one side's per-element vectors is which of the other's.
* A kernel over pixel phases stacked as channels is the strided kernel it equals, in every known
  order of the phases; a mapping file says so with ``*_depth``.
* Module anchors: a tensor paired in parts with one tensor only is matched whole (its modules
  anchor the call alignment); a root holding a position table is no partner of a
  position-embedding module.
"""

from __future__ import annotations

import numpy as np
import pytest
from padiff_trace.analyzer.alignment._slices import regroup_orders
from padiff_trace.analyzer.reporting._channels import channel_order
from padiff_trace.analyzer.reporting._layouts import chunk_order

from padiff_trace import MappingError
from padiff_trace.arrays import SPACE_TO_DEPTH_ORDERS, depth_fits, depth_from_kernel, kernel_from_depth, newest_axis, space_to_depth
from padiff_trace.matching import WeightMap, WeightPair, parse_mapping
from padiff_trace.matching._anchors import module_anchors


def _chunked(a: np.ndarray, order: list[int]) -> np.ndarray:
    c = a.shape[-1] // len(order)
    return np.concatenate([a[..., i * c:(i + 1) * c] for i in order], axis=-1)


def test_chunk_order_finds_features_concatenated_in_another_order() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 16, 64)).astype(np.float32)
    b = _chunked(a, [0, 2, 1, 3]).reshape(2, 4, 4, 64)  # another token layout, the same rows in order
    b = b + rng.standard_normal(b.shape).astype(np.float32) * 1e-7  # fp32 rounding of another library
    assert chunk_order(a, b) == [0, 2, 1, 3]
    assert chunk_order(a, _chunked(a, [1, 0])) == [1, 0]  # the fewest chunks that explain it
    assert chunk_order(a, a.copy()) is None  # the same order: nothing to reorder
    assert chunk_order(a, rng.standard_normal(a.shape)) is None  # other values
    assert chunk_order(a, b[..., :32]) is None  # another width


def _pieces(a: str, b: str, order: list[int], width: int, axis: int) -> list[WeightPair]:
    c = width // len(order)
    return [WeightPair(a, b, None, None, "mapping", (i * c, (i + 1) * c), (j * c, (j + 1) * c), axis)
            for j, i in enumerate(order)]


def test_regroup_orders_read_a_norms_values_and_a_linears_input_in_the_other_order() -> None:
    wm = WeightMap("paddle", "torch")
    wm.pairs += _pieces("down.norm.weight", "down.norm.weight", [0, 2, 1, 3], 8, 0)
    wm.pairs += _pieces("down.norm.bias", "down.norm.bias", [0, 2, 1, 3], 8, 0)
    wm.pairs += _pieces("down.reduction.weight", "down.reduction.weight", [0, 2, 1, 3], 8, 1)
    wm.pairs.append(WeightPair("down.reduction.bias", "down.reduction.bias", None, None, "structure"))
    shapes = {"down.norm.weight": (8,), "down.norm.bias": (8,), "down.reduction.weight": (8, 8), "down.reduction.bias": (8,)}
    outs, ins = regroup_orders(wm, shapes)
    want = np.array([0, 1, 4, 5, 2, 3, 6, 7])  # B's element j is A's element want[j]
    assert np.array_equal(outs[("down.norm", "down.norm")], want) and np.array_equal(ins[("down.norm", "down.norm")], want)
    assert np.array_equal(ins[("down.reduction", "down.reduction")], want)
    assert ("down.reduction", "down.reduction") not in outs  # its outputs are in one order on both sides
    # pieces in the same order on both sides: nothing to read otherwise
    same = WeightMap("paddle", "torch", pairs=_pieces("n.weight", "n.weight", [0, 1], 8, 0))
    assert regroup_orders(same, {"n.weight": (8,)}) == ({}, {})


def test_a_tensor_paired_in_parts_with_one_tensor_only_anchors_its_module() -> None:
    wm = WeightMap("paddle", "torch")
    wm.pairs += _pieces("down.norm.weight", "merge.ln.weight", [0, 2, 1, 3], 8, 0)
    # q|k|v packed in one tensor: its parts pair with three modules, no anchor
    for k, n in enumerate(("q", "k", "v")):
        wm.pairs.append(WeightPair(f"attn.{n}.weight", "attn.qkv.weight", None, None, "packed", None, (4 * k, 4 * k + 4)))
    anchors = module_anchors(wm)
    assert anchors["down.norm"] == "merge.ln"
    assert not any(b == "attn.qkv" for b in anchors.values())


def test_a_root_holding_a_position_table_is_no_partner_of_a_position_module() -> None:
    """One port keeps a raw position table on the model itself, the other an Embedding module:
    the tensors pair, but the module holding every other module is not the embedding's call."""
    wm = WeightMap("paddle", "torch")
    wm.pairs += [WeightPair("embed_positions.weight", "pos_emb", None, None, "shape+order"),
                 WeightPair("layers.0.fc.weight", "blocks.0.fc.weight", None, None, "structure"),
                 WeightPair("layers.1.fc.weight", "blocks.1.fc.weight", None, None, "structure")]
    anchors = module_anchors(wm)
    assert "embed_positions" not in anchors
    assert anchors["layers.0.fc"] == "blocks.0.fc" and anchors["layers.1.fc"] == "blocks.1.fc"

class _Shaped:
    """A record as a reconciler reads it: shape and size."""

    def __init__(self, *shape: int) -> None:
        self.shape = shape
        self.numel = int(np.prod(shape))
        self.is_tensor = True


def test_a_mask_broadcast_over_another_axis_is_not_a_layout() -> None:
    """[b, 1, s, 1] against [b, 1, 1, s] hold the same numbers broadcast along another axis (a
    padding mask over the queries instead of the keys: electra's planted bug): no permutation
    reconciles them, while [b, s, h, d] against [b, h, s, d] is a layout."""
    from padiff_trace.analyzer.alignment._item import PlanItem
    from padiff_trace.analyzer.judging._reconcile import permuted_axes

    mask = PlanItem("input", _Shaped(2, 1, 12, 1), _Shaped(2, 1, 1, 12), None, None)  # type: ignore[arg-type]
    assert permuted_axes(mask) is None
    heads = PlanItem("output", _Shaped(2, 12, 4, 8), _Shaped(2, 4, 12, 8), None, None)  # type: ignore[arg-type]
    got = permuted_axes(heads)
    assert got is not None and got.perm == (0, 2, 1, 3)


def test_newest_axis_is_the_sequence_axis_of_a_cached_decoding_step_only() -> None:
    """A decoder stepping with a key/value cache sees ``[b, 1]`` ids, ``[b, 1, d]`` states and
    ``[b, 1]`` positions where a port without a cache sees ``[b, s]``, ``[b, s, d]``, ``[s]``.
    A batch axis (a value computed once, ``[1, s]``, against one per item), the feature axis and
    a 4-D mask are not a sequence of newest positions: every item is compared there."""
    assert newest_axis((2, 1), (2, 7)) == 1
    assert newest_axis((2, 1, 32), (2, 7, 32)) == 1
    assert newest_axis((2, 1), (7,)) == 0  # positions shared by the batch: big's only axis
    assert newest_axis((2, 1, 32), (7, 32)) == 0
    assert newest_axis((1, 7), (2, 7)) is None  # a batch axis
    assert newest_axis((2, 7, 1), (2, 7, 32)) is None  # the feature axis
    assert newest_axis((1,), (7,)) is None
    assert newest_axis((2, 1, 1, 7), (2, 1, 7, 7)) is None  # a mask: broadcast
    assert newest_axis((2, 1, 32), (3, 7, 32)) is None  # the batch differs too


def test_channel_order_maps_each_elements_place_under_the_reading() -> None:
    """A ``[b, 3, 4]`` plane read permuted ``(0, 2, 1)``: B's element j of an item is A's
    ``order[j]``, checked on values; the batch axis moving, or nothing moving, gives no order."""
    a = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    b = a.transpose(0, 2, 1).reshape(2, 12)  # the other side flattens its own layout
    order = channel_order((2, 3, 4), (0, 2, 1))
    assert order is not None and sorted(order) == list(range(12))
    assert np.array_equal(a.reshape(2, 12)[:, order], b)
    assert channel_order((2, 3, 4), (0, 1, 2)) is None
    assert channel_order((2, 3, 4), (1, 0, 2)) is None


def _conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = w.shape[2]
    n = (x.shape[2] - k) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], n, n))
    for i in range(n):
        for j in range(n):
            out[:, :, i, j] = np.einsum("nchw,ochw->no", x[:, :, i * stride:i * stride + k, j * stride:j * stride + k], w)
    return out


def test_a_kernel_over_pixel_phases_is_the_strided_kernel_it_equals_in_every_known_order() -> None:
    """A 3x3 convolution (padding 1) over the stacked 2x2 phases equals a 6x6 stride-2 one
    (padding 2) whose kernel ``kernel_from_depth`` builds, for each known order; the inverse
    gives the kernel back; ``depth_fits`` reads ``r`` from the shapes and nothing else fits."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 8, 8)), rng.standard_normal((5, 12, 3, 3))
    for order in SPACE_TO_DEPTH_ORDERS:
        big = kernel_from_depth(w, 2, order)
        assert np.allclose(_conv(space_to_depth(x, 2, order), w, 1, 1), _conv(x, big, 2, 2), atol=1e-12), order
        assert np.array_equal(depth_from_kernel(big, 2, order), w)
    orders = list(SPACE_TO_DEPTH_ORDERS)
    assert not np.array_equal(space_to_depth(x, 2, orders[0]), space_to_depth(x, 2, orders[1]))  # orders differ
    assert depth_fits((8, 12, 3, 3), (8, 3, 6, 6)) == 2 and depth_fits((8, 27, 1, 1), (8, 3, 3, 3)) == 3
    assert depth_fits((8, 12, 3, 3), (8, 3, 6, 5)) is None and depth_fits((8, 3, 6, 6), (8, 12, 3, 3)) is None


def test_a_mapping_files_depth_entry_is_read_and_a_wrong_one_refused_in_one_line() -> None:
    m = parse_mapping({"weights": [{"paddle": "stem.conv.weight", "torch": "stem.0.weight",
                                    "paddle_depth": {"block": 2, "order": "Focus (YOLOv5)"}}]}, "m.json")
    (w,) = m.weights
    assert w.depths == {"paddle": (2, "Focus (YOLOv5)")}
    sided = m.oriented("torch", "paddle")
    assert sided.weights[0].depth == ("b", 2, "Focus (YOLOv5)")
    with pytest.raises(MappingError, match=r"paddle_depth must be like .*got \{'block': 2, 'order': 'zigzag'\}"):
        parse_mapping({"weights": [{"paddle": "a", "torch": "b", "paddle_depth": {"block": 2, "order": "zigzag"}}]}, "m.json")
