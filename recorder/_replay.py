"""Replay across processes: feed a model the inputs or weights recorded in another trace.

Weights are matched automatically (module order, type, local name, shape modulo a
known layout) with the same global alignment the analyzer uses, then streamed one
tensor at a time. Known layouts: Linear weights are [in, out] in paddle and
[out, in] in torch; torch MultiheadAttention packs q/k/v into ``in_proj_*`` (split
into virtual ``q_proj``/``k_proj``/``v_proj`` entries); BatchNorm statistics are
``_mean``/``_variance`` in paddle and ``running_mean``/``running_var`` in torch.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from padiff_trace import Kind, UserError, WeightTransferError, open_trace
from padiff_trace._layout import transposed_rows
from padiff_trace._match import align, canonical_type, types_equivalent

from ._adapter import Adapter
from ._nest import flatten_call, rebuild

__all__ = ["replay_inputs", "transfer_weights"]

logger = logging.getLogger(__name__)

_LOCAL_ALIASES = {"_mean": "running_mean", "_variance": "running_var"}
_IGNORABLE = {"num_batches_tracked"}
_LINEAR = {"linear", "nondynamicallyquantizablelinear"}


@dataclass
class _Entry:
    module: str
    mtype: str
    local: str  # canonical local name
    shape: tuple[int, ...]  # shape in this side's own layout
    ref: Any  # Record (trace side) or tensor (model side)
    rows: slice | None = None  # virtual entry: rows of a packed tensor

    @property
    def name(self) -> str:
        return f"{self.module}.{self.local}" if self.module else self.local

    @property
    def is_linear_weight(self) -> bool:
        return canonical_type(self.mtype) in _LINEAR and self.local == "weight" and len(self.shape) == 2


def _entries(items: list[tuple[str, str, str, tuple[int, ...], Any]], framework: str) -> list[_Entry]:
    """Build entries from (module, type, local, shape, ref); expand torch MHA packing."""
    out: list[_Entry] = []
    packed: dict[str, dict[str, _Entry]] = {}
    for module, mtype, local, shape, ref in items:
        local = _LOCAL_ALIASES.get(local, local)
        if local in _IGNORABLE:
            continue
        if framework == "torch" and canonical_type(mtype) == "multiheadattention" and local.startswith("in_proj_"):
            e = shape[0] // 3
            for i, proj in enumerate(("q_proj", "k_proj", "v_proj")):
                what = local.removeprefix("in_proj_")
                packed.setdefault(proj, {})[what] = _Entry(
                    f"{module}.{proj}" if module else proj, "Linear", what, (e,) + tuple(shape[1:]), ref, slice(i * e, (i + 1) * e)
                )
            if local == "in_proj_bias" or not any(n == "in_proj_bias" for _, _, n, _, _ in items):
                for proj in ("q_proj", "k_proj", "v_proj"):  # paddle order: q.w, q.b, k.w, k.b, ...
                    out.extend(packed[proj].values())
                packed.clear()
            continue
        out.append(_Entry(module, mtype, local, tuple(shape), ref))
    return out


def _convert(arr: np.ndarray, src: _Entry, src_fw: str, dst: _Entry, dst_fw: str) -> np.ndarray:
    if src_fw != dst_fw and src.is_linear_weight and dst.is_linear_weight:
        return transposed_rows(arr)
    return arr


def _converted_shape(src: _Entry, src_fw: str, dst: _Entry, dst_fw: str) -> tuple[int, ...]:
    if src_fw != dst_fw and src.is_linear_weight and dst.is_linear_weight:
        return tuple(reversed(src.shape))
    return src.shape


def _score(a: _Entry, a_fw: str, b: _Entry, b_fw: str) -> float:
    if a.local != b.local or _converted_shape(a, a_fw, b, b_fw) != b.shape:
        return 0.0
    eq = types_equivalent(a.mtype, b.mtype)
    if eq is False and not (canonical_type(a.mtype) in _LINEAR and canonical_type(b.mtype) in _LINEAR):
        return 0.0
    score = 3.0 if eq or canonical_type(a.mtype) == canonical_type(b.mtype) else 1.0
    if a.module == b.module:
        score += 1.0
    elif a.module.rsplit(".", 1)[-1] == b.module.rsplit(".", 1)[-1]:
        score += 0.5
    return score


def _match(src: list[_Entry], src_fw: str, dst: list[_Entry], dst_fw: str) -> list[tuple[_Entry, _Entry]]:
    if not src or not dst:
        return []
    score = np.array([[_score(a, src_fw, b, dst_fw) for b in dst] for a in src])
    return [(src[i], dst[j]) for i, j in align(score)]


def transfer_weights(adapter: Adapter, model: Any, trace_path: str | os.PathLike[str]) -> int:
    """Copy the weights recorded at step 0 of ``trace_path`` into ``model``; returns the count.

    Raises WeightTransferError listing every unmatched tensor (both sides) before any
    weight is written.
    """
    dst_fw = adapter.name
    with open_trace(trace_path) as tr:
        src_fw = str(tr.meta.get("framework"))
        recs = [r for r in tr.select(kind=[Kind.PARAM, Kind.BUFFER], step=0)]
        if not recs:
            raise WeightTransferError(f"{trace_path}: has no weights recorded at step 0 (recorded with weights='none'?)")
        nodata = [r for r in recs if not r.has_data]
        if nodata:
            raise WeightTransferError(
                f"{trace_path}: weights were recorded without tensor data (stats-only or size cap), e.g. "
                f"{nodata[0].module}.{nodata[0].position}"
            )
        types = {path: type(m).__name__ for path, m in adapter.named_modules(model)}
        pairs: list[tuple[_Entry, _Entry]] = []
        unmatched_src: list[_Entry] = []
        unmatched_dst: list[_Entry] = []
        for want_param in (True, False):
            src = _entries([(r.module, r.module_type, r.position, r.shape, r) for r in recs if (r.kind == Kind.PARAM) == want_param], src_fw)
            dst_items = []
            for name, t, is_param in adapter.named_state(model):
                if is_param == want_param:
                    mod, _, local = name.rpartition(".")
                    dst_items.append((mod, types.get(mod, ""), local, tuple(t.shape), t))
            dst = _entries(dst_items, dst_fw)
            got = _match(src, src_fw, dst, dst_fw)
            pairs += got
            ids_s = {id(a) for a, _ in got}
            ids_d = {id(b) for _, b in got}
            unmatched_src += [e for e in src if id(e) not in ids_s]
            unmatched_dst += [e for e in dst if id(e) not in ids_d]
        if unmatched_src or unmatched_dst:
            raise WeightTransferError(
                f"{trace_path} -> model: cannot match {len(unmatched_src)} recorded and {len(unmatched_dst)} model "
                f"tensor(s); trace: {_list(unmatched_src)}; model: {_list(unmatched_dst)}"
            )
        for a, b in tqdm(pairs, desc="weights", unit="tensor", disable=len(pairs) < 200, leave=False):
            arr = tr.read(a.ref.seq)
            if a.rows is not None:
                arr = arr[a.rows]
            adapter.assign(b.ref, _convert(arr, a, src_fw, b, dst_fw), b.rows)
            del arr
    logger.info("copied %d weight tensors from %s", len(pairs), trace_path)
    return len(pairs)


def _list(entries: list[_Entry], limit: int = 8) -> str:
    if not entries:
        return "-"
    text = ", ".join(f"{e.name} {list(e.shape)} ({e.mtype})" for e in entries[:limit])
    return text + (f" and {len(entries) - limit} more" if len(entries) > limit else "")


def replay_inputs(
    adapter: Adapter, args: tuple[Any, ...], kwargs: dict[str, Any], trace_path: str | os.PathLike[str]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Replace the tensor leaves of (args, kwargs) with the model inputs recorded at step 0.

    Leaves are matched by position (``args[0]``, ``kwargs["mask"]``) when both sides
    have the same positions, otherwise by order. Dtype and shape come from the trace;
    device and requires-grad from the local tensor.
    """
    with open_trace(trace_path) as tr:
        recs = [r for r in tr.select(kind=Kind.MODEL_INPUT, step=0) if r.is_tensor and r.device != "python"]
        if recs:
            first_call = recs[0].call
            recs = [r for r in recs if r.call == first_call]
        local = [(pos, leaf) for pos, leaf in flatten_call(args, kwargs, adapter.is_tensor) if adapter.is_tensor(leaf)]
        if len(recs) != len(local):
            raise UserError(
                f"{trace_path}: recorded {len(recs)} input tensor(s) ({', '.join(r.position for r in recs) or '-'}) "
                f"but the spec's inputs() has {len(local)} ({', '.join(p for p, _ in local) or '-'})"
            )
        if {r.position for r in recs} == {p for p, _ in local}:
            by_pos = {r.position: r for r in recs}
            order = [by_pos[p] for p, _ in local]
        else:
            order = recs
        replace: dict[str, Any] = {}
        for (pos, leaf), rec in zip(local, order):
            if tuple(rec.shape) != tuple(leaf.shape):
                raise UserError(
                    f"{trace_path}: recorded input {rec.position} has shape {list(rec.shape)}, "
                    f"the spec's {pos} has {list(leaf.shape)}"
                )
            if not rec.has_data:
                raise UserError(f"{trace_path}: input {rec.position} was recorded without data (stats-only)")
            replace[pos] = adapter.tensor_like(rec.read(), rec.dtype, leaf)
    new_args = rebuild(tuple(args), "args", replace, adapter.is_tensor)
    new_kwargs = {k: rebuild(v, f'kwargs["{k}"]', replace, adapter.is_tensor, 1) for k, v in kwargs.items()}
    return tuple(new_args), new_kwargs

