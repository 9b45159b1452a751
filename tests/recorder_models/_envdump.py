"""Spec helper: write the environment this spec's process started with (before any framework import)."""

import json
import os


def dump(tag: str) -> None:
    target = os.environ.get("PADIFF_TEST_ENV_DUMP")
    if target:
        with open(f"{target}.{tag}.json", "w") as f:
            json.dump({k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "PADIFF_TEST_MARKER")}, f)
