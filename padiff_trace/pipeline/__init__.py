"""The pipeline: record A, record B replaying A, compare — one library call.

    from padiff_trace import pipeline
    from padiff_trace.recorder import RecordOptions

    result = pipeline.run("paddle_spec.py", "torch_spec.py", "runs/v1",
                          record=RecordOptions(stats_only=True), referee=True)
    summary = result.report.summary_text()  # also written to result.report_dir
    result.traces.a, result.traces.b, result.exit_code

Each recording runs in a child process of its own (``padiff-trace record --job``), which
receives a JSON job file (``recorder.RecordJob``); children run in process groups of their
own and exit when the pipeline's process dies. ``record_launched`` records one spec with N
processes under the framework's own launcher; ``compare_ranks`` compares two such multi-rank
traces rank by rank. The layer order is record -> trace ->
analyze: this package imports the recorder and the analyzer, the CLI imports this one.
"""

from __future__ import annotations

from padiff_trace import RecordingFailedError

from ._autodiff import AutoDiffResult, LayerMap, auto_diff, divergence_arrays
from ._children import Children, read_job, watch_parent, write_job
from ._join import JOIN_FILE, JoinedRecord, JoinResult, join_ranks
from ._joincompare import JoinedComparison, SliceError, compare_joined
from ._launch import LaunchResult, record_launched, spec_framework
from ._rankcompare import (
    DivergenceSite,
    NonFinite,
    RankComparison,
    RankDivergence,
    RankResult,
    check_rank_sides,
    compare_ranks,
    first_nonfinite,
    option_items,
)
from ._ranks import RankedTrace, RankState, is_multirank, open_ranks
from ._record import record
from ._run import RunResult, RunTraces, run
from ._runranks import RankRunResult, run_ranks

__all__ = ["AutoDiffResult", "LayerMap", "auto_diff", "divergence_arrays", "Children", "RecordingFailedError", "RunResult", "RunTraces", "read_job", "record", "run", "watch_parent", "write_job",
           # models that need more than one process (docs/distributed.md)
           "LaunchResult", "record_launched", "spec_framework", "RankedTrace", "RankState", "is_multirank", "open_ranks",
           "DivergenceSite", "RankComparison", "RankDivergence", "RankResult", "check_rank_sides", "compare_ranks", "option_items",
           "RankRunResult", "run_ranks", "JOIN_FILE", "NonFinite", "first_nonfinite", "JoinedRecord", "JoinResult", "join_ranks", "JoinedComparison", "SliceError", "compare_joined"]
