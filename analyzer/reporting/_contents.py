"""What a report holds, for everything that reads one: the diagnosis and each renderer.

``Finding`` is one sentence of the diagnosis. ``ReportData`` names what a ``Report`` carries
(a Protocol): the diagnosis (``_diagnosis``) and the renderers (``_text``, ``_html``,
``_formats``) read a report through it and never import ``Report``, which builds its
diagnosis and writes its files through them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from padiff_trace import Record
    from padiff_trace.matching import WeightMap

    from ..alignment._calls import TraceView
    from ..alignment._pairing import Alignment
    from ..judging._amplifiers import Amplifier
    from ..judging._divergence import Divergence
    from ..judging._environment import EnvDifference
    from ..judging._optimizer import OptimizerDiff
    from ..judging._pairtable import PairSubset, PairTable
    from ..judging._precision import PrecisionDiff
    from ..judging._randomness import RandomDraws

__all__ = ["Finding", "ReportData"]


@dataclass(frozen=True)
class Finding:
    code: str  # stable identifier: error_starts_inside, inputs_differed, type_difference, ...
    text: str  # one sentence
    topic: str = "first_divergence"  # or "comparison"
    hint: bool = False  # a conclusion to act on, rather than a fact

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class ReportData(Protocol):
    """A comparison's result as the diagnosis and the renderers read it (``Report`` is one)."""

    a: TraceView
    b: TraceView  # the reference
    alignment: Alignment
    pairs: PairTable  # every pair, in execution order
    failed: PairSubset
    mode: str
    unpaired: dict[str, list[str]]
    referees: dict[str, Any] | None
    weight_map: WeightMap | None
    missing: list[str]  # why the comparison does not cover both runs whole
    allow_partial: bool
    same_trace: bool
    conventions: list[dict[str, Any]]
    randomness: tuple[RandomDraws, RandomDraws] | None
    optimizer: OptimizerDiff | None
    environment: list[EnvDifference]
    first_divergence: Divergence | None
    amplifiers: list[Amplifier]
    first_nonfinite: dict[str, Record | None]
    steps: list[dict[str, Any]]  # the per-step view (``_steps``)
    precision: PrecisionDiff
    diagnosis: list[Finding]

    @property
    def verdict(self) -> str: ...

    def tolerance_text(self) -> str: ...

    def to_dict(self, pairs: bool = True) -> dict[str, Any]: ...

    def alignment_rows(self) -> Iterator[dict[str, Any]]: ...
