"""Run a spec file under the recorder (what ``padiff-trace record SPEC.py`` does).

What a spec file must define (its contract) and how it is imported are in ``_specfile``; this
module runs the steps: seeds, inputs, forward, loss, backward, optimizer, and the record job a
subprocess is handed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import random
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from padiff_trace import Kind, SpecError, TraceWriteError, UserError, open_trace
from padiff_trace.matching import WEIGHT_MAP_FILE, WeightMap, load_mapping

from ._adapter import Adapter, detect, get_adapter
from ._distributed import detect_distributed, rank_source
from ._inputreplay import replay_inputs
from ._nest import flatten, flatten_call, rebuild
from ._optim import describe_optimizer, intercept_clipping, step_values
from ._options import RecordOptions, build_options, option, option_fields
from ._replay import transfer_weights
from ._session import Recorder
from ._single_step import SingleStep
from ._specfile import load_spec, split_inputs

__all__ = ["RecordJob", "run_spec", "run_steps", "wait_for_replay_source"]

logger = logging.getLogger(__name__)


def _default_loss(adapter: Adapter, out: Any, where: Path) -> Any:
    for _, leaf in flatten(out, "out", adapter.is_tensor):
        if adapter.is_tensor(leaf) and adapter.is_floating(leaf):
            return leaf.mean()
    raise SpecError(f"{where}: the model output has no float tensor; define loss(output) in the spec")


def _cast_inputs(adapter: Adapter, args: tuple[Any, ...], kwargs: dict[str, Any], dtype: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Floating tensor leaves of the inputs converted to ``dtype`` (ints, bools stay)."""
    replace = {
        pos: adapter.cast_tensor(leaf, dtype)
        for pos, leaf in flatten_call(args, kwargs, adapter.is_tensor)
        if adapter.is_tensor(leaf) and adapter.is_floating(leaf)
    }
    new_args = rebuild(tuple(args), "args", replace, adapter.is_tensor)
    return tuple(new_args), {k: rebuild(v, f'kwargs["{k}"]', replace, adapter.is_tensor, 1) for k, v in kwargs.items()}


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    for fw in ("torch", "paddle"):
        if fw in sys.modules:
            get_adapter(fw).seed(seed)


def wait_for_replay_source(path: str | os.PathLike[str], timeout: float, run_id: str | None = None) -> None:
    """Block until the trace at ``path`` has a shard with model inputs (or is complete).
    With ``run_id``: a trace of that run only (meta ``run_id``), never one left by an earlier run."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open_trace(path) as tr:
                ours = run_id is None or tr.meta.get("run_id") == run_id
                if ours and (tr.complete or tr.select(kind=Kind.MODEL_INPUT, step=0)):
                    return
        except (UserError, OSError):
            pass  # its recorder has not created the directory or a shard yet, or is replacing an old trace
        if time.monotonic() >= deadline:
            raise UserError(f"{path}: no model inputs were written there within {timeout:g} s (is its recorder running?)")
        time.sleep(0.05)


def _write_weight_map(out: Path, wm: WeightMap | None, source: str | None) -> None:
    """``OUT/weightmap.json``: the map the transfer used (a mapping file: editable, reusable).
    Written beside the shards once the writer owns the directory; an older one is removed."""
    path = out / WEIGHT_MAP_FILE
    tmp = path.with_name(path.name + ".tmp")
    try:
        if wm is None:
            path.unlink(missing_ok=True)
            return
        tmp.write_text(wm.dumps(generated_by="padiff-trace record --weights-from", source_trace=Path(str(source)).name) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise TraceWriteError.from_os(path, "write the weight map", exc) from exc
    logger.info("weight map written to %s", path)


def run_spec(
    spec_path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    options: RecordOptions,
    *,
    steps: int = 1,
    inputs_from: str | None = None,
    weights_from: str | None = None,
    dtype: str | None = None,
    overwrite: bool = False,
    single_step_plan: str | None = None,
    wait_source: float = 0.0,
    mapping: str | os.PathLike[str] | None = None,
    run_id: str | None = None,
    source_run_id: str | None = None,
    random_from: str | None = None,
    progress: bool | None = None,
    command: str | None = None,
) -> Path:
    """Record ``steps`` training steps of the spec's model into ``out`` (under a launcher: ``out/rank-NNNNN``,
    the directory returned).

    ``wait_source``: seconds to wait for the ``inputs_from``/``weights_from`` trace while another
    process is still writing it (``run --concurrent``): it is ready once a shard holds its model
    inputs, which a recorder flushes right after the step-0 weights.
    ``mapping``: a mapping file whose ``weights``/``modules`` entries pin what the weight
    matcher cannot guess; the map used is written to ``OUT/weightmap.json``.
    ``run_id`` is stored in the trace metadata; ``source_run_id``: wait for a source trace
    carrying that run id (``run --concurrent``: never replay an earlier run's trace).
    ``random_from``: a trace whose random draws inside forward (dropout masks) this model
    replays at its matching calls (``recorder._random``). ``progress``: a progress bar over the
    steps (None: when stderr is a terminal). ``command``: the command line the user typed, when
    another process records for them (meta ``user_command``; meta ``command`` is this process's)."""
    spec = load_spec(spec_path)
    if options.seed is not None:
        _seed_everything(options.seed)
    model = spec.model()
    adapter = get_adapter(detect(model))
    if options.seed is not None:
        adapter.seed(options.seed)
    dist = detect_distributed(adapter)  # under a launcher a rank replays the same rank of a multi-rank source
    inputs_from, weights_from, random_from = (rank_source(s, dist) for s in (inputs_from, weights_from, random_from))
    if dtype:
        adapter.cast_model(model, dtype)
    args, kwargs = split_inputs(spec.inputs_at(0), adapter.is_tensor, spec.path)
    if inputs_from and spec.per_step_inputs:
        logger.info("%s: inputs(step) gives each step's data: not replayed from %s", spec.path.name, inputs_from)
        inputs_from = None
    source = weights_from or inputs_from
    if source and wait_source > 0:
        wait_for_replay_source(source, wait_source, source_run_id)
    weight_map = None
    if weights_from:
        weight_map = transfer_weights(adapter, model, weights_from, load_mapping(Path(mapping)) if mapping else None)
    if inputs_from:
        args, kwargs = replay_inputs(adapter, args, kwargs, inputs_from)
    if dtype:
        args, kwargs = _cast_inputs(adapter, args, kwargs, dtype)
    optimizer = spec.optimizer(model) if spec.optimizer else None
    scheduler = None
    if isinstance(optimizer, tuple) and len(optimizer) == 2:
        optimizer, scheduler = optimizer
    if optimizer is None and options.weights == "steps":
        options = dataclasses.replace(options, weights="start")  # nothing changes them
    meta: dict[str, Any] = {"spec": spec.path.name, "cast_dtype": dtype, "steps": steps, "replayed_inputs": bool(inputs_from),
                            "inputs_per_step": spec.per_step_inputs,
                            "replayed_weights": bool(weights_from), "replayed_random": bool(random_from)}
    if run_id is not None:
        meta["run_id"] = run_id
    if command is not None:
        meta["user_command"] = command
    described = describe_optimizer(adapter, model, optimizer, scheduler) if optimizer is not None else None
    if described is not None:
        meta["optimizer"] = described
    single = SingleStep(single_step_plan, adapter) if single_step_plan else None
    if single is not None:
        meta["single_step"] = True
    if weight_map is not None:
        meta["weight_map"] = {"file": WEIGHT_MAP_FILE, "pairs": len(weight_map.pairs), "copied": sum(p.transfer for p in weight_map.pairs)}
    with contextlib.ExitStack() as cleanup:
        if single is not None:
            cleanup.callback(single.close)
        rec = cleanup.enter_context(Recorder(model, out, adapter, options, meta=meta, overwrite=overwrite, single_step=single,
                                             random_from=random_from, random_wait=wait_source))
        _write_weight_map(rec.path, weight_map, weights_from)
        if steps == 0:  # export only: weights (recorded on entry) and the inputs, for replay elsewhere
            rec.model_inputs(args, kwargs)
        loss_of = spec.loss or (lambda output: _default_loss(adapter, output, spec.path))
        clip_grad = spec.clip_grad
        clip = (lambda: clip_grad(model)) if clip_grad is not None else None

        def inputs_at(step: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
            a, kw = split_inputs(spec.inputs_at(step), adapter.is_tensor, spec.path)
            return _cast_inputs(adapter, a, kw, dtype) if dtype else (a, kw)

        run_steps(rec, adapter, model, (args, kwargs), steps, loss_of, optimizer, desc=f"record {spec.path.name}",
                  scheduler=scheduler, clip=clip, inputs_at=inputs_at if spec.per_step_inputs else None, progress=progress)
    adapter.end_process_group()  # the trace is written; under a launcher the spec's group is closed before exit
    return rec.path  # OUT, or OUT/rank-NNNNN under a launcher


def run_steps(
    rec: Recorder,
    adapter: Adapter,
    model: Any,
    inputs: tuple[tuple[Any, ...], dict[str, Any]],
    steps: int,
    loss_of: Callable[[Any], Any],
    optimizer: Any = None,
    *,
    backward: bool = True,
    desc: str = "",
    scheduler: Any = None,
    clip: Callable[[], Any] | None = None,
    inputs_at: Callable[[int], tuple[tuple[Any, ...], dict[str, Any]]] | None = None,
    progress: bool | None = None,
) -> None:
    """The loop every recording runs: forward, loss, backward, (``clip``), optimizer step,
    (``scheduler.step()``), ``rec.step()``. ``optimizer``: an object with ``step()``, or a
    callable that steps and clears the gradients (PaDiff's form); ``backward=False``: forward
    only. What the optimizer uses in each step (learning rates, clipping) is recorded.
    ``inputs_at(k)``: the inputs of step k >= 1 (``inputs`` are step 0's); without it every
    step runs on ``inputs``. ``progress``: a bar labelled ``desc`` over two or more steps (None:
    only when stderr is a terminal, never ``\r`` redraws in a log file)."""
    args, kwargs = inputs
    show = sys.stderr.isatty() if progress is None else progress
    stepper = getattr(optimizer, "step", optimizer)
    clipped: dict[str, float] = {}
    with intercept_clipping(adapter, clipped):
        for k in tqdm(range(steps), desc=desc, unit="step", disable=steps < 2 or not desc or not show, leave=False, file=sys.stderr):
            if inputs_at is not None and k:
                args, kwargs = inputs_at(k)
            with rec.autocast():  # the precision policy (``--autocast``): forward and loss, never backward
                loss = rec.loss(loss_of(model(*args, **kwargs)))
            if backward and adapter.is_tensor(loss) and adapter.requires_grad(loss):
                if stepper is None and not _backward_ran(loss, rec):
                    backward = False  # a model only compared forward: its values still are
                    rec.step()
                    continue
                if stepper is not None:
                    loss.backward()
                rec.backward_done()
                if clip is not None:
                    clip()
                if stepper is not None:
                    if hasattr(optimizer, "step"):
                        rec.optimizer_values(step_values(adapter, optimizer) | clipped)
                    clipped.clear()
                    stepper()
                    if scheduler is not None:
                        scheduler.step()
            rec.step()
            adapter.zero_grad(model, optimizer if hasattr(optimizer, "step") else None)


def _backward_ran(loss: Any, rec: Recorder) -> bool:
    """Run the backward pass of a model that is not trained; when the framework cannot (paddle's
    RNN layers have no backward in eval mode), say so in the trace's summary and in the log, and
    go on without gradients: the forward values are recorded and compared all the same."""
    try:
        loss.backward()
    except Exception as exc:  # any framework error: the forward recording stands
        line = next((x.strip() for x in str(exc).splitlines() if x.strip()), type(exc).__name__)
        text = f"the backward pass failed ({type(exc).__name__}: {line[:300]}); no gradient was recorded after it"
        logger.warning("%s", text)
        rec.note("backward", text)
        return False
    return True


@dataclass(frozen=True)
class RecordJob:
    """One recording of a spec file: what ``padiff-trace record`` runs, and what ``run`` hands
    each child process as a JSON job file (``to_dict``/``from_dict``). ``steps`` and
    ``dtype`` are declared as options (flags of ``record`` and ``run``), like ``RecordOptions``."""

    spec: str
    out: str
    options: RecordOptions = field(default_factory=RecordOptions)
    steps: int = option(1, help="training steps to run (default 1; 0: export weights and inputs only)")
    dtype: str | None = option(None, choices=("float64", "float32"), help="cast the model to this dtype")
    inputs_from: str | None = None
    weights_from: str | None = None
    mapping: str | None = None
    wait_source: float = 0.0
    single_step_plan: str | None = None
    overwrite: bool = False
    run_id: str | None = None
    source_run_id: str | None = None
    random_from: str | None = None
    progress: bool | None = None  # a bar over the steps; None: when stderr is a terminal (``run_spec``)
    command: str | None = None  # the command line the user typed when a parent (``run``) records for them

    def to_dict(self) -> dict[str, Any]:
        """JSON-able; ``options`` as a dict of its fields."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["options"] = self.options.to_dict()
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], options: type[RecordOptions] = RecordOptions) -> RecordJob:
        """A job from its JSON form; unknown keys (also unknown options) are a ``UserError``."""
        if not isinstance(data, Mapping) or not isinstance(data.get("options", {}), Mapping):
            raise UserError(f"not a recording job: {str(data)[:80]}")
        values = dict(data)
        values["options"] = options.from_dict(values.get("options", {}))
        for name in ("spec", "out"):
            if not isinstance(values.get(name), str):
                raise UserError(f"recording job: {name!r} must be a path, got {values.get(name)!r}")
        job = build_options(cls, values, what="recording")
        for o in option_fields(cls):
            value = getattr(job, o.name)
            if o.choices is not None and value is not None and value not in o.choices:
                raise UserError(f"recording job: {o.name}={value!r}; expected one of {', '.join(o.choices)}")
        return job

    def run(self) -> Path:
        """Record in this process (``run_spec``); returns the trace directory."""
        return run_spec(
            self.spec,
            self.out,
            self.options,
            steps=self.steps,
            inputs_from=self.inputs_from,
            weights_from=self.weights_from,
            dtype=self.dtype,
            overwrite=self.overwrite,
            single_step_plan=self.single_step_plan,
            wait_source=self.wait_source,
            mapping=self.mapping,
            run_id=self.run_id,
            source_run_id=self.source_run_id,
            random_from=self.random_from,
            progress=self.progress,
            command=self.command,
        )
