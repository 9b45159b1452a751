"""Recording models the caller holds (``auto_diff``), one after the other, in this process.

What ``padiff-trace run`` does with two spec files in two child processes, done here with
two live objects: record A; copy A's step-0 weights into B (``auto_weights``) and feed B
A's recorded inputs — the recorder's own ``transfer_weights`` and ``replay_inputs``, the
code behind ``record --weights-from/--inputs-from`` — then record B. Single-step: a
statistics-only structural pass of B, the analyzer's plan, then B replaying A's per-module
inputs and output gradients.

Frameworks are never imported here: every tensor operation goes through the recorder's
adapter for the model's framework.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from padiff_trace import UserError
from padiff_trace.analyzer import single_step_plan
from padiff_trace.matching import Mapping, mapping_swapped
from padiff_trace.recorder import (
    Recorder,
    RecordOptions,
    SingleStep,
    detect,
    get_adapter,
    replay_inputs,
    run_steps,
    transfer_weights,
)

# The live-model replay has no public name in the recorder yet (its public API runs spec
# files); these are the functions behind `record --weights-from/--inputs-from/--single-step-plan`.

__all__ = ["Side", "default_loss", "make_sides", "record_side", "replay_into", "single_step_replay"]

logger = logging.getLogger(__name__)


@dataclass
class Side:
    """One model of an ``auto_diff`` call: what it is fed and how it trains."""

    label: str  # "A" (recorded first, the weight and input source) or "B"
    model: Any
    framework: str
    adapter: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    loss_fn: Callable[[Any], Any] | None = None
    optimizer: Any | None = None  # an optimizer, or PaDiff's callable that steps and clears grads

    @property
    def title(self) -> str:
        return self.framework.capitalize()


def make_sides(
    models: tuple[Any, Any],
    example_inp: Any,
    losses: tuple[tuple[Any, Any] | None, bool],
    optimizers: tuple[tuple[Any, Any] | None, bool],
) -> tuple[Side, Side]:
    """Sides A and B. ``example_inp`` is PaDiff's pair of inputs, assigned by the framework of
    their tensors (either order); ``losses``/``optimizers`` are (pair or None, by_framework):
    a pair in (paddle, torch) order when ``by_framework`` (PaDiff 0.1/0.2), else in model order."""
    fws = (detect(models[0]), detect(models[1]))
    adapters = (get_adapter(fws[0]), get_adapter(fws[1]))
    inputs = _assign_inputs(example_inp, fws, adapters)
    extra = [_assign(pair, fws, by_fw, what) for (pair, by_fw), what in ((losses, "loss_fn"), (optimizers, "optimizer"))]
    sides = []
    for i, label in enumerate("AB"):
        args, kwargs = _bind(models[i], *_call_form(inputs[i]))
        sides.append(Side(label, models[i], fws[i], adapters[i], args, kwargs, extra[0][i], extra[1][i]))
    return sides[0], sides[1]


def _leaves(obj: Any) -> Iterator[Any]:
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _leaves(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _leaves(v)
    else:
        yield obj


def _framework_of(obj: Any, fws: tuple[str, str], adapters: tuple[Any, Any]) -> str | None:
    for leaf in _leaves(obj):
        for fw, ad in zip(fws, adapters):
            if ad.is_tensor(leaf):
                return fw
    return None


def _assign_inputs(example_inp: Any, fws: tuple[str, str], adapters: tuple[Any, Any]) -> tuple[Any, Any]:
    if not (isinstance(example_inp, (tuple, list)) and len(example_inp) == 2):
        raise UserError(
            "example_inp must be PaDiff's pair of inputs, e.g. ({'x': paddle_tensor}, {'x': torch_tensor}); "
            f"got {type(example_inp).__name__}" + (f" of length {len(example_inp)}" if isinstance(example_inp, (tuple, list)) else "")
        )
    first, second = example_inp
    if any(type(leaf).__module__ == "numpy" and hasattr(leaf, "shape") for leaf in _leaves(example_inp)):
        raise UserError("example_inp holds numpy arrays; give each model its framework's tensors, as PaDiff does: "
                        "({'x': paddle.to_tensor(x)}, {'x': torch.as_tensor(x)})")
    if fws[0] == fws[1]:
        return first, second
    got = (_framework_of(first, fws, adapters), _framework_of(second, fws, adapters))
    if got == (fws[1], fws[0]) or (got[0] == fws[1] and got[1] is None) or (got[1] == fws[0] and got[0] is None):
        return second, first
    if got[0] == got[1] and got[0] is not None:
        raise UserError(f"example_inp holds {got[0]} tensors on both sides; give one input per model: ({fws[0]} inputs, {fws[1]} inputs)")
    return first, second


def _assign(pair: Any, fws: tuple[str, str], by_framework: bool, what: str) -> tuple[Any, Any]:
    if pair is None:
        return None, None
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
        raise UserError(f"{what} must be a pair (one per model), as in PaDiff: [paddle_{what}, torch_{what}]")
    for x in pair:
        if not callable(x) and not hasattr(x, "step"):
            raise UserError(f"{what}: {type(x).__name__} is neither callable nor an optimizer")
    if by_framework and mapping_swapped(*fws):  # PaDiff gives pairs as (paddle, torch); A is the torch model
        return pair[1], pair[0]
    return pair[0], pair[1]


def _call_form(obj: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """PaDiff's dict of keyword inputs; also a tuple/list of positional ones, or one value."""
    if isinstance(obj, dict):
        return (), dict(obj)
    if isinstance(obj, (tuple, list)):
        return tuple(obj), {}
    return (obj,), {}


def _bind(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The inputs as given when ``forward`` accepts them; else, when the names do not fit but
    the values do by position (PaDiff's README passes ``{'y': t}`` to ``forward(self, x)``),
    the dict's values in order, with a warning."""
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return args, kwargs
    try:
        sig.bind(*args, **kwargs)
        return args, kwargs
    except TypeError:
        pass
    try:
        sig.bind(*args, *kwargs.values())
    except TypeError:
        return args, kwargs  # let the model say what is wrong
    logger.warning(
        "example_inp: %s.forward%s takes no keyword(s) %s; passing the values by position, in the dict's order",
        type(model).__name__, sig, ", ".join(kwargs),
    )
    return (*args, *kwargs.values()), {}


def default_loss(side: Side, out: Any) -> Any:
    """PaDiff's fake loss: the mean of the (first floating) output tensor."""
    ad = side.adapter
    for leaf in _leaves(out):
        if ad.is_tensor(leaf) and ad.is_floating(leaf):
            return leaf.mean()
    raise UserError(f"the output of {type(side.model).__name__} has no floating tensor; pass loss_fn=[paddle_loss, torch_loss]")


def record_side(
    side: Side, path: Path, options: RecordOptions, *, steps: int, backward: bool, meta: dict[str, Any],
    single: Any | None = None, train: bool = True,
) -> Path:
    """Run ``steps`` training steps of ``side``'s model under a recorder writing ``path``.
    ``train=False``: the optimizer is left alone (a structural pass must not move weights)."""
    opt = side.optimizer if train and backward else None
    if opt is None and options.weights == "steps":
        options = dataclasses.replace(options, weights="start")  # nothing changes them
    ad, model = side.adapter, side.model
    loss_of = side.loss_fn or (lambda out: default_loss(side, out))
    with Recorder(model, path, ad, options, meta=meta, single_step=single) as rec:
        run_steps(rec, ad, model, (side.args, side.kwargs), steps, loss_of, opt, backward=backward)
    return path


def replay_into(side: Side, source: Path, mapping: Mapping | None, *, weights: bool, weight_map_file: Path) -> Path | None:
    """Feed ``side`` the inputs of trace ``source`` (replacing its own) and, with ``weights``,
    copy the trace's step-0 weights into its model; the map used is written to
    ``weight_map_file`` (a mapping file, as ``record --weights-from`` writes). Returns that path or None."""
    side.args, side.kwargs = replay_inputs(side.adapter, side.args, side.kwargs, source)
    if not weights:
        return None
    wm = transfer_weights(side.adapter, side.model, source, mapping)
    weight_map_file.write_text(wm.dumps(generated_by="padiff_trace.auto_diff (auto_weights)", source_trace=source.name) + "\n")
    return weight_map_file


def single_step_replay(
    side: Side, trace_a: Path, directory: Path, mapping_path: Path | None, options: RecordOptions, meta: dict[str, Any],
    name: str, backward: bool,
) -> Path:
    """Record ``side`` single-step against ``trace_a``: a stats-only structural pass, the
    analyzer's plan, then the replaying recording. Returns the single-step trace."""
    structure = directory / f"{name}.structure.trace"
    quick = dataclasses.replace(options, stats_only=True, weights="none")
    record_side(side, structure, quick, steps=1, backward=backward, meta={**meta, "structure_pass": True}, train=False)
    plan = single_step_plan(structure, trace_a, mapping_path)
    plan_path = directory / "single-step-plan.json"
    plan_path.write_text(json.dumps(plan))
    single = SingleStep(plan_path, side.adapter)
    out = directory / f"{name}-single-step.trace"
    try:
        record_side(side, out, options, steps=1, backward=backward, meta={**meta, "single_step": True}, single=single, train=False)
    finally:
        single.close()
    logger.info("single-step: %d inputs and %d gradients replaced", single.replaced_inputs, single.replaced_grads)
    return out
