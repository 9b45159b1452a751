"""What the distributed tests share: the launchers' environment variables (read from the
recorder's own table, so a new launcher row is cleared too), and an environment without them
for a launcher the test starts itself."""

from __future__ import annotations

import os
from pathlib import Path

from padiff_trace.recorder import LAUNCHERS

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "distributed_models"
TIMEOUT = 300
LAUNCH_VARS = tuple(dict.fromkeys(
    v for row in LAUNCHERS.values() for v in (row.rank, row.world_size, row.local_rank, row.launch_id, row.backend) if v
))


def env(**extra: str) -> dict[str, str]:
    """This process's environment without any launcher's variables or the test models' switches."""
    e = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARS and not k.startswith("PADIFF_TEST_")}
    return e | extra
