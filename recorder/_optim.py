"""The optimizer as part of the trace: its type, hyperparameters per parameter, clipping and
learning rate per step, in one vocabulary for both frameworks.

Static settings go into the trace metadata (``meta["optimizer"]``); what changes per step
(each group's learning rate, gradient clipping as applied) is written as ``Kind.OPTIMIZER``
records, one number each, named ``lr/<group>`` or ``clip:<how>/<setting>``. Where each
framework keeps a setting is data: ``OPTIMIZER_TYPES``, ``HYPER_FIELDS``, ``CLIP_TYPES``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from ._adapter import Adapter
from ._patch import patched

__all__ = ["OPTIMIZER_TYPES", "HYPER_FIELDS", "CLIP_TYPES", "describe_optimizer", "step_values", "intercept_clipping"]

logger = logging.getLogger(__name__)

# framework class name -> the algorithm (SGD with momentum and paddle's Momentum are one)
OPTIMIZER_TYPES: dict[str, dict[str, str]] = {
    "torch": {"AdamW": "adamw", "Adam": "adam", "SGD": "sgd", "Adamax": "adamax", "RMSprop": "rmsprop",
              "Adagrad": "adagrad", "Adadelta": "adadelta", "NAdam": "nadam", "RAdam": "radam", "ASGD": "asgd",
              "Rprop": "rprop", "LBFGS": "lbfgs", "SparseAdam": "sparseadam"},
    "paddle": {"AdamW": "adamw", "Adam": "adam", "SGD": "sgd", "Momentum": "sgd", "Adamax": "adamax",
               "RMSProp": "rmsprop", "Adagrad": "adagrad", "Adadelta": "adadelta", "NAdam": "nadam", "RAdam": "radam",
               "ASGD": "asgd", "Rprop": "rprop", "LBFGS": "lbfgs", "Lamb": "lamb"},
}

# canonical hyperparameter -> where the framework keeps it: torch in each param group (a key,
# "key[i]" for a tuple element), paddle on the optimizer (attribute paths, the first present wins)
HYPER_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    "torch": {
        "beta1": ("betas[0]",), "beta2": ("betas[1]",), "eps": ("eps",), "weight_decay": ("weight_decay",),
        "momentum": ("momentum",), "dampening": ("dampening",), "nesterov": ("nesterov",), "amsgrad": ("amsgrad",),
        "rho": ("alpha", "rho"), "centered": ("centered",), "initial_accumulator": ("initial_accumulator_value",),
        "lr_decay": ("lr_decay",), "decoupled_weight_decay": ("decoupled_weight_decay",), "maximize": ("maximize",),
    },
    "paddle": {
        "beta1": ("_beta1",), "beta2": ("_beta2",), "eps": ("_epsilon",),
        "weight_decay": ("_weight_decay", "_regularization_coeff", "regularization._coeff"),
        "momentum": ("_momentum",), "nesterov": ("_use_nesterov",), "amsgrad": ("_amsgrad",), "rho": ("_rho",),
        "centered": ("_centered",), "initial_accumulator": ("initial_accumulator_value", "_initial_accumulator_value"),
    },
}
# paddle's regularizer classes -> the setting they are in the shared vocabulary (both add their
# term to the gradient inside the optimizer step: ``c * p`` for L2, ``c * sign(p)`` for L1)
REGULARIZERS: dict[str, str] = {"L2Decay": "weight_decay", "L1Decay": "l1_decay"}
# algorithms whose weight decay is decoupled from the gradient (p -= lr * wd * p)
DECOUPLED = frozenset({"adamw"})

# gradient clipping: torch functions called by the training loop, paddle's grad_clip objects
# -> (how, {setting: attribute or argument, or "=value" where the framework fixes it})
CLIP_TYPES: dict[str, dict[str, tuple[str, dict[str, str]]]] = {
    "torch": {"clip_grad_norm_": ("global_norm", {"max_norm": "max_norm", "norm_type": "norm_type"}),
              "clip_grad_value_": ("value", {"max": "clip_value"})},
    "paddle": {"ClipGradByGlobalNorm": ("global_norm", {"max_norm": "clip_norm", "norm_type": "=2"}),
               "ClipGradByNorm": ("norm_each", {"max_norm": "clip_norm", "norm_type": "=2"}),
               "ClipGradByValue": ("value", {"max": "max", "min": "min"})},
}


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if part.endswith("]"):
            name, _, idx = part[:-1].partition("[")
            obj = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
            obj = obj[int(idx)] if isinstance(obj, (tuple, list)) and len(obj) > int(idx) else None
        else:
            obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _plain(v: Any) -> float | bool | None:
    if isinstance(v, bool):
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _groups(fw: str, opt: Any) -> list[tuple[dict[str, Any], list[Any]]]:
    """(settings holder, params) per parameter group."""
    if fw == "torch":
        return [(g, list(g["params"])) for g in getattr(opt, "param_groups", [])]
    groups = getattr(opt, "_param_groups", None) or getattr(opt, "_parameter_list", None) or []
    if groups and isinstance(groups[0], dict):
        return [(g, list(g["params"])) for g in groups]
    return [({}, list(groups))]


def describe_optimizer(adapter: Adapter, model: Any, opt: Any, scheduler: Any = None) -> dict[str, Any] | None:
    """The optimizer's settings in the shared vocabulary, per parameter group, with the
    model's parameter names; None when ``opt`` is not an optimizer (a plain callable)."""
    fw = adapter.name
    cls = type(opt).__name__
    if not hasattr(opt, "step"):
        return None
    names = {id(t): n for n, t, is_param in adapter.named_state(model) if is_param}
    kind = OPTIMIZER_TYPES.get(fw, {}).get(cls, cls.lower())
    fields = HYPER_FIELDS.get(fw, {})
    decay_fun = getattr(opt, "_apply_decay_param_fun", None) if fw == "paddle" else None
    groups = []
    for holder, params in _groups(fw, opt):
        hyper: dict[str, Any] = {}
        for key, paths in fields.items():
            for path in paths:
                # paddle: a group dict holds its own values under the name without "_"
                local = path.lstrip("_")
                source = holder if fw == "torch" else (holder if local in holder else opt)
                v = _plain(_get(source, path if source is not holder or fw == "torch" else local))
                if v is not None:
                    hyper[key] = v
                    break
        if fw == "paddle" and "weight_decay" in holder:  # a group's own decay overrides the optimizer's
            v = _plain(_get(holder, "weight_decay")) if not hasattr(holder["weight_decay"], "_coeff") else _plain(holder["weight_decay"]._coeff)
            if v is not None:
                hyper["weight_decay"] = v
        reg = (holder.get("weight_decay") if fw == "paddle" and isinstance(holder, dict) and "weight_decay" in holder
               else getattr(opt, "regularization", None))
        key = REGULARIZERS.get(type(reg).__name__, "weight_decay")
        if key != "weight_decay" and "weight_decay" in hyper:  # an L1 regularizer's coefficient is no L2 decay
            hyper[key] = hyper.pop("weight_decay")
        decoupled = kind in DECOUPLED or bool(hyper.pop("decoupled_weight_decay", False))
        hyper["decoupled"] = decoupled
        # a parameter's own regularizer (paddle's ``ParamAttr(regularizer=L2Decay(c))``) replaces
        # the optimizer's decay for it: such parameters form groups of their own (decay added to
        # the gradient, ``c * p``)
        named = [(names.get(id(p), getattr(p, "name", "?")), p) for p in params]
        own: dict[tuple[str, float], list[str]] = {}
        for n, p in named:
            carried = _own_decay(p)
            if carried is not None:
                own.setdefault(carried, []).append(n)
        taken = {n for ns in own.values() for n in ns}
        kept = [(n, p) for n, p in named if n not in taken]
        pnames = [n for n, _ in kept]
        wd = float(hyper.get("weight_decay", 0.0) or 0.0)
        if wd and decay_fun is not None:
            decay = [n for n, p in kept if decay_fun(getattr(p, "name", n))]
        else:
            decay = pnames if wd else []
        if pnames or not own:
            groups.append({"hyper": hyper, "params": pnames, "decay": decay})
        for (key, coeff), ns in own.items():
            base = {k: v for k, v in hyper.items() if k not in REGULARIZERS.values()}
            groups.append({"hyper": {**base, "weight_decay": 0.0, key: coeff, "decoupled": False}, "params": ns,
                           "decay": ns if coeff and key == "weight_decay" else []})
    return {"class": cls, "type": kind, "groups": groups,
            "scheduler": type(scheduler).__name__ if scheduler is not None else _scheduler_of(opt)}


def _own_decay(p: Any) -> tuple[str, float] | None:
    """The decay a parameter carries itself (paddle's ``ParamAttr`` regularizer, which overrides
    the optimizer's), as (setting, coefficient) (``REGULARIZERS``), or None."""
    reg = getattr(p, "regularizer", None)
    key = REGULARIZERS.get(type(reg).__name__) if reg is not None else None
    coeff = getattr(reg, "_coeff", None) if key is not None else None
    return (key, float(coeff)) if key is not None and isinstance(coeff, (int, float)) else None


def _scheduler_of(opt: Any) -> str | None:
    lr = getattr(opt, "_learning_rate", None)
    return type(lr).__name__ if lr is not None and not isinstance(lr, (int, float)) else None


def step_values(adapter: Adapter, opt: Any) -> dict[str, float]:
    """What the optimizer will use in the step about to be taken: each group's learning rate,
    and (paddle) its gradient clipping."""
    out: dict[str, float] = {}
    if adapter.name == "torch":
        for i, g in enumerate(getattr(opt, "param_groups", [])):
            v = _plain(g.get("lr"))
            if v is not None:
                out[f"lr/{i}"] = float(v)
        return out
    get_lr = getattr(opt, "get_lr", None)
    if callable(get_lr):
        base = float(get_lr())
        for i, (holder, _) in enumerate(_groups("paddle", opt)):
            scale = _plain(holder.get("learning_rate", 1.0)) if isinstance(holder, dict) else 1.0
            out[f"lr/{i}"] = base * float(scale if isinstance(scale, float) else 1.0)
    clip = getattr(opt, "_grad_clip", None)
    if clip is not None:
        out.update(_clip_values("paddle", type(clip).__name__, lambda attr: _get(clip, attr)))
    return out


def _clip_values(fw: str, name: str, read: Callable[[str], Any]) -> dict[str, float]:
    how, settings = CLIP_TYPES.get(fw, {}).get(name, (name, {}))
    out = {}
    for key, attr in settings.items():
        v = _plain(attr[1:]) if attr.startswith("=") else _plain(read(attr))
        if v is not None and not isinstance(v, bool):
            out[f"clip:{how}/{key}"] = float(v)
    return out or {f"clip:{how}/on": 1.0}


def intercept_clipping(adapter: Adapter, seen: dict[str, float]) -> AbstractContextManager[None]:
    """While active, gradient clipping done by the training loop (torch's ``clip_grad_*_``
    functions) is noted in ``seen`` (emptied by the caller once per step)."""
    if adapter.name != "torch":
        return contextlib.nullcontext()
    owner = importlib.import_module("torch.nn.utils")

    def wrap(name: str, original: Any) -> Callable[..., Any]:
        sig = inspect.signature(original)

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                b = sig.bind(*args, **kwargs)
            except TypeError:
                return original(*args, **kwargs)  # the framework raises its own error
            b.apply_defaults()
            seen.update(_clip_values("torch", name, b.arguments.get))
            return original(*args, **kwargs)

        return wrapper

    return patched((owner, name, functools.partial(wrap, name)) for name in CLIP_TYPES["torch"])
