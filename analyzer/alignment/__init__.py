"""Alignment: which record of trace A is compared with which record of trace B.

Module calls rebuilt from the records (``_calls``, kept as columns: ``_lazy``), paired
hierarchically (``_align``, ``_carriers``, ``_pairing``); weights paired through the weight map
(``_weights``, a packed tensor's share: ``_slices``); ops inside paired calls (``_ops``, their
arguments' meanings: ``_opsig``). ``_plan`` lists every pair to measure; ``_traces`` is
``align()``; ``_single_step`` the replay plan built on it. Nothing here measures a value.
"""
