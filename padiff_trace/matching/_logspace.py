"""A parameter one side keeps as the logarithm of the other's: ``log_temp`` used as
``exp(log_temp)`` against a plain ``temperature``, a flow's ``log_scale`` against ``scale``, a
learned ``log_alpha`` against ``alpha``. Positive quantities are often trained in log space by
one author and as they are by the other; both compute the same function when the one side holds
the log of the other's values.

The names say it: a pair of whole tensors where the local name of exactly one side has a word
``log`` (``log_temp``, ``temp_log``, ``logs``, ``logsigma``), never ``logit``. CLIP's ``logit_scale`` holds
a logarithm by that library's convention (``exp(logit_scale)`` scales the logits) without the word:
against ``log_inv_tau`` both sides keep the log (``LOG_NAMES``). The pair is marked (``WeightPair.logged``: the side
that keeps the log); a transfer writes the log (or the exp) of the values, and a comparison
sets ``exp`` of the log side against the other (the gradients: the log side's against the
other's times its value, ``dL/dlog t = t dL/dt``).
"""

from __future__ import annotations

import dataclasses
import re

from ._weightmap import SUMMED, WeightPair

__all__ = ["LOG_NAMES", "LOG_WORDS", "mark_logged"]

LOG_WORDS = frozenset({"log", "logs"})  # words of a local name that say it holds a logarithm
LOG_NAMES = frozenset({"logit_scale"})  # local names that hold a logarithm by a library's convention (CLIP)
_WORD = re.compile(r"[A-Za-z]+")


def _logged(local: str) -> bool:
    """Whether a local name says a logarithm: a word ``log``/``logs``, or one that runs it into
    the quantity (``logsigma``, ``logvar``, ``logstd``: an author writing ``slots_logsigma`` keeps
    the log as much as one writing ``slots_log_sigma``), never ``logit``/``logistic``."""
    if local.lower() in LOG_NAMES:
        return True
    words = [w.lower() for w in _WORD.findall(local.replace("_", " "))]
    return any(w in LOG_WORDS or (len(w) >= 6 and w.startswith("log") and not w.startswith("logi")) for w in words)


def mark_logged(pairs: list[WeightPair]) -> list[WeightPair]:
    """``pairs`` with each whole pair whose names say one side keeps the log marked (see the
    module docstring)."""
    out = []
    for p in pairs:
        la, lb = _logged(p.a.rpartition(".")[2]), _logged(p.b.rpartition(".")[2])
        whole = p.a_part is None and p.b_part is None and p.how not in (SUMMED, "derived") and p.transfer
        out.append(dataclasses.replace(p, logged="a" if la else "b") if la != lb and whole else p)
    return out
