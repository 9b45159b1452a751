"""Mapping files live in the trace core (``padiff_trace.matching``): the recorder's weight
transfer reads them too. Re-exported here for the analyzer's modules."""

from padiff_trace.matching import Mapping, MappingEntry, WeightEntry, load_mapping, parse_mapping, resolve, weight_pins

__all__ = ["Mapping", "MappingEntry", "WeightEntry", "load_mapping", "parse_mapping", "resolve", "weight_pins"]
