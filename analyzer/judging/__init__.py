"""Judging: the numbers of each pair and what they mean.

One pair is measured in pieces (``_metrics``, ``_accumulate``: sums declared in ``_sums``, ULP
distance in ``_ulp``, metrics as formulas in ``_metric_table``) and given a verdict
(``_tolerance``); gradients of broadcast tensors are summed first (``_reduce``). The verdicts
go into a table (``_pairtable``, read through ``_pairview``). Passes over the table tell rounding
from bugs: noise floor (``_noise``), float64 referee (``_referee``), differences that do not
propagate (``_boundary``, ``_masks``), conventions (``_conventions``, ``_optreplay``), rounding
carried by calls and updates (``_carried``, ``_updates``). What it all says: the first
divergence (``_divergence``, located by ``_culprit``), amplifiers (``_amplifiers``), and the
causes outside the model: precision, environment, optimizer, data, randomness.
"""
