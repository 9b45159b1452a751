"""How two models' tensors and modules correspond: the public face of the matching core.

Shared by the recorder (``--weights-from`` transfers weights by it) and the analyzer
(weights, gradients and module calls are paired by it); both import from here, never from
the private modules behind it. What is known about frameworks and libraries (type
equivalences, layouts, packed parameters, derived state) is data in ``_knowledge.py``.
"""

from __future__ import annotations

from ._anchors import module_homes
from ._depth import depth_as_b, depth_note, depth_order, mark_depths
from ._knowledge import (
    CALL_CONTAINERS,
    CONVENTIONS,
    LOCAL_ALIASES,
    LOOKUP_TABLES,
    OPTIMIZER_CONVENTIONS,
    OPTIMIZER_LR_FACTORS,
    OPTIMIZER_UPDATE_RULES,
    PARAMETRIZED_UNDER,
    PLACEHOLDERS,
    POINTWISE_AS,
    QKV_PACKING,
    RANDOM_LAYERS,
    RNN_CELL_LAYERS,
    RNN_GATE_LOCALS,
    RNN_GATES,
    ROLE_SYNONYMS,
    ROTARY_ROLES,
    ROTARY_TABLES,
    Convention,
)
from ._mapping import (
    MAPPING_COLUMNS,
    Mapping,
    MappingEntry,
    SidedEntry,
    SidedMapping,
    SidedWeight,
    WeightEntry,
    load_mapping,
    mapping_swapped,
    module_pattern,
    orient,
    parse_mapping,
    resolve,
)
from ._match import TypeResolver, align, canonical_type, group_key, is_known_type, types_equivalent
from ._numerics_effects import NUMERICS_EFFECTS, NumericsEffect, numerics_effect
from ._observed import observed_layouts, with_observed_layouts
from ._offsets import mark_offsets, offset_note, own_offset, traced_offset
from ._reparam import norm_like, set_from_weight, weight_from, weight_grad_from
from ._rolenames import role_words
from ._shadows import SHADOW
from ._weightmap import CANNOT_MATCH, SUMMED, WEIGHT_MAP_FILE, TensorInfo, WeightMap, WeightPair, inverse_perm, summed_groups
from ._weightmatch import WeightPin, WeightSide, mapping_pins, match_weights, module_anchors, module_splits, side_from_records
from ._weightsides import in_call_order, is_integer, is_pattern

__all__ = [
    "CANNOT_MATCH",
    "QKV_PACKING",
    "LOOKUP_TABLES",
    "RANDOM_LAYERS",
    # mapping files (docs/analyzer.md#mapping-files)
    "Mapping",
    "MappingEntry",
    "WeightEntry",
    "load_mapping",
    "parse_mapping",
    # a mapping applied to two traces: sides A and B, no framework names
    "SidedMapping",
    "SidedEntry",
    "SidedWeight",
    "orient",
    "resolve",
    "MAPPING_COLUMNS",
    "mapping_swapped",
    "module_pattern",
    # module types
    "TypeResolver",
    "canonical_type",
    "CALL_CONTAINERS",
    "PLACEHOLDERS",
    "group_key",
    "is_known_type",
    # framework conventions (values that differ by definition)
    "CONVENTIONS",
    "OPTIMIZER_CONVENTIONS",
    "OPTIMIZER_LR_FACTORS",
    "OPTIMIZER_UPDATE_RULES",
    "Convention",
    # the numerics environment of a recording (trace meta "numerics"): what each setting does
    "NUMERICS_EFFECTS",
    "NumericsEffect",
    "numerics_effect",
    "LOCAL_ALIASES",
    "types_equivalent",
    "align",
    # weight maps
    "WEIGHT_MAP_FILE",
    "TensorInfo",
    "WeightMap",
    "WeightPair",
    "SUMMED",
    "summed_groups",
    "WeightPin",
    "WeightSide",
    "inverse_perm",
    "mapping_pins",
    "match_weights",
    "module_anchors",
    "module_splits",
    "module_homes",
    "side_from_records",
    "is_integer",
    "is_pattern",
    "PARAMETRIZED_UNDER",
    "POINTWISE_AS",
    "ROLE_SYNONYMS",
    "role_words",
    # copies a model keeps of its weights (an EMA), paired as their weights
    "SHADOW",
    "ROTARY_ROLES",
    "ROTARY_TABLES",
    "RNN_CELL_LAYERS",
    "RNN_GATES",
    "RNN_GATE_LOCALS",
    "in_call_order",
    "observed_layouts",
    "with_observed_layouts",
    # a kernel over pixel phases against the strided one it equals
    "depth_as_b",
    "depth_note",
    "depth_order",
    "mark_depths",
    # a norm's scale kept as w on one side, 1 + w on the other
    "mark_offsets",
    "offset_note",
    "own_offset",
    "traced_offset",
    # weights a layer computes from others (weight normalisation)
    "norm_like",
    "set_from_weight",
    "weight_from",
    "weight_grad_from",
]
