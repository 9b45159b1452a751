"""The numerics environment of a recording: what can change the numbers, never a dump of the
environment (trace meta ``numerics``, a flat ``{key: value}`` of str/int/float/bool).

What is recorded is curated, as data, in ``padiff_trace.matching.NUMERICS_EFFECTS`` (one
table, shared with the analyzer, which explains each difference): the framework's own settings
come from its adapter (``Adapter.numerics``: TF32, threads, oneDNN, determinism flags), the
machine's from here (CPU model and instruction sets), and of the environment variables only
those whose ``env.<NAME>`` is a key of that table, or matches one ending in ``*``
(``env.FLAGS_*``). Values longer than ``MAX_VALUE`` characters are dropped. Probing never fails
a recording: a probe that raises is left out, with a debug log line.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from padiff_trace.matching import NUMERICS_EFFECTS

if TYPE_CHECKING:
    from ._adapter import Adapter

__all__ = ["MAX_VALUE", "autocast_policy", "cpu_settings", "env_settings", "numerics"]

logger = logging.getLogger(__name__)

MAX_VALUE = 200  # characters: a longer environment value is not a setting (and may be a secret)
_CPUINFO = "/proc/cpuinfo"
_ISA_FLAGS = {"avx2": "avx2", "avx512f": "avx512f", "amx": "amx_tile"}  # recorded key -> cpuinfo flag


def env_settings(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env.<NAME>`` -> value for the curated environment variables that are set."""
    env = os.environ if environ is None else environ
    names = {k[4:] for k in NUMERICS_EFFECTS if k.startswith("env.") and not k.endswith("*")}
    prefixes = tuple(k[4:-1] for k in NUMERICS_EFFECTS if k.startswith("env.") and k.endswith("*"))
    out = {}
    for name in sorted(env):
        if (name in names or name.startswith(prefixes)) and len(env[name]) <= MAX_VALUE:
            out[f"env.{name}"] = env[name]
    return out


def cpu_settings(path: str = _CPUINFO) -> dict[str, Any]:
    """``cpu.model`` and whether the CPU has AVX2, AVX-512F, AMX (Linux; empty elsewhere)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        return {}
    model, flags = None, None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model is None:
            model = value.strip()[:MAX_VALUE]
        elif key in ("flags", "Features") and flags is None:  # x86, arm
            flags = set(value.split())
        if not line.strip() and model is not None and flags is not None:
            break  # the first processor's block is enough
    out: dict[str, Any] = {}
    if model:
        out["cpu.model"] = model
    if flags is not None:
        out.update({f"cpu.{k}": flag in flags for k, flag in _ISA_FLAGS.items()})
    return out


def numerics(adapter: Adapter) -> dict[str, Any]:
    """The numerics environment of this process: machine, curated environment variables, and
    the framework's settings as they are now (after the spec built the model)."""
    out: dict[str, Any] = {}
    for probe in (cpu_settings, env_settings, adapter.numerics):
        try:
            found = probe()
        except Exception as exc:  # a probe must never fail a recording
            logger.debug("numerics probe %s failed: %s", getattr(probe, "__name__", probe), exc)
            continue
        out.update({k: v for k, v in found.items() if v is not None and (not isinstance(v, str) or len(v) <= MAX_VALUE)})
    return out


def autocast_policy(adapter: Adapter, dtype: str, device: str) -> dict[str, Any]:
    """The ``autocast`` meta: dtype, level, and whether the framework's autocast acted on this
    device (asked once, inside it: a framework may turn it off where its AMP does not run)."""
    with adapter.autocast(dtype, device):
        effective = adapter.autocast_active(device)
    if effective is False:
        logger.warning("autocast %s: %s's autocast has no effect on %s; this model computes as without autocast",
                       dtype, adapter.name, device)
    return {"dtype": dtype, "level": "O1", "backward": "outside", "effective": effective}
