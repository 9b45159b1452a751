"""Record ONE Paddle or PyTorch model into a padiff-trace trace.

    with recorder.record(model, "traces/paddle.trace", tags={"model": "bert"}) as rec:
        out = model(x)
        loss = rec.loss(out.mean())
        loss.backward()
        opt.step()
        rec.step()          # ends the step: parameter grads, weights after the update

``recorder.probe(name, tensor)`` records any tensor from inside user code and is a
no-op when no recorder is active. Importing this package imports no framework;
the adapter for the model's framework is loaded when ``record`` is called.

``RecordJob`` runs a spec file (what ``padiff-trace record SPEC`` does); its JSON form is
the job file ``padiff-trace run`` hands each child. Each option is declared once, as a
field of ``RecordOptions`` (or ``RecordJob``) made with ``option(...)``; ``option_fields``
is how the command line reads those declarations.

Under a framework's launcher (``torchrun``, ``python -m paddle.distributed.launch``) every
process records its own trace, ``PATH/rank-NNNNN``, with meta ``distributed`` (rank, world
size, local rank, backend, launcher); ``LAUNCHERS`` says how each framework's launcher names
them (docs/distributed.md).
"""

from __future__ import annotations

import os
from typing import Any, TypeVar

from ._adapter import detect, get_adapter
from ._collectives import COLLECTIVE_OPS, COLLECTIVES
from ._distributed import (
    LAUNCHERS,
    RANKS_FILE,
    RANKS_FORMAT,
    Distributed,
    Launcher,
    detect_distributed,
    is_multirank,
    rank_dir,
    rank_of_dir,
    split_info,
)
from ._inputreplay import replay_inputs
from ._options import OptionField, RecordOptions, option, option_fields
from ._replay import transfer_weights
from ._session import Recorder, active_recorder
from ._single_step import SingleStep
from ._spec import RecordJob, run_steps

__all__ = [
    "COLLECTIVES",
    "COLLECTIVE_OPS",
    "LAUNCHERS",
    "RANKS_FILE",
    "RANKS_FORMAT",
    "Distributed",
    "Launcher",
    "detect_distributed",
    "is_multirank",
    "rank_dir",
    "rank_of_dir",
    "split_info",
    "OptionField",
    "RecordJob",
    "RecordOptions",
    "Recorder",
    "SingleStep",
    "detect",
    "get_adapter",
    "option",
    "option_fields",
    "probe",
    "record",
    "replay_inputs",
    "run_steps",
    "transfer_weights",
]

T = TypeVar("T")


def record(
    model: Any,
    path: str | os.PathLike[str],
    *,
    tags: dict[str, str] | None = None,
    overwrite: bool = False,
    meta: dict[str, Any] | None = None,
    **options: Any,
) -> Recorder:
    """A context manager recording ``model`` into the trace directory ``path``.

    Keyword options are the fields of ``RecordOptions`` (each also a ``padiff-trace record``
    flag): include, exclude, phases, kinds, steps, every, input_grads, weights, stats_only,
    max_tensor_bytes, full_stack, ops, ops_include, ops_internal, collectives, compression,
    flush_records, flush_seconds, queue_bytes, seed, autocast (forward and loss then run inside
    ``rec.autocast()``). Unknown options are a ``TypeError``.
    """
    if tags:
        options["tags"] = {str(k): str(v) for k, v in tags.items()}
    opts = RecordOptions.from_kwargs(options)
    adapter = get_adapter(detect(model))
    return Recorder(model, path, adapter, opts, meta=meta, overwrite=overwrite)


def probe(name: str, value: T) -> T:
    """Record ``value`` (a tensor or nested tensors) as ``name``; returns it unchanged."""
    rec = active_recorder()
    if rec is not None:
        rec.probe(name, value)
    return value
