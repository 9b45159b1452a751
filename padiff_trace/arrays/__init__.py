"""Tensor data as the trace stores it: storage dtypes, statistics, layouts, native kernels.

The public face of these helpers for the recorder and the analyzer, which import from here,
never from the private modules behind it.
"""

from __future__ import annotations

from ._dtypes import UNCAPTURED, decode, dtype_name, is_number, storage_dtype, to_float64, to_storage, value_kind
from ._layout import (
    axes_between,
    axes_candidates,
    axis_permutation,
    blocks_in_order,
    inversions,
    newest_axis,
    packed_part,
    packed_rows,
    put_packed_part,
    same_order_reshape,
    squeezed,
    stable_permutation,
    transposed_rows,
)
from ._native import kernel, kind_of
from ._recent import Recent
from ._spacedepth import SPACE_TO_DEPTH_ORDERS, depth_fits, depth_from_kernel, kernel_from_depth, space_to_depth
from ._stats import CHUNK_ELEMS, copy_with_stats, stats_tuple

__all__ = [
    "Recent",
    "SPACE_TO_DEPTH_ORDERS",
    "depth_fits",
    "depth_from_kernel",
    "kernel_from_depth",
    "space_to_depth",
    "axes_between",
    "axes_candidates",
    "inversions",
    "is_number",
    "newest_axis",
    "squeezed",
    "blocks_in_order",
    "packed_part",
    "packed_rows",
    "put_packed_part",
    "same_order_reshape",
    "axis_permutation",
    "stable_permutation",
    "UNCAPTURED",
    "CHUNK_ELEMS",
    "copy_with_stats",
    "decode",
    "dtype_name",
    "kernel",
    "kind_of",
    "stats_tuple",
    "storage_dtype",
    "to_float64",
    "to_storage",
    "value_kind",
    "transposed_rows",
]
