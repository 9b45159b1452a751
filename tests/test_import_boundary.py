"""padiff_trace and analyzer import (and the CLI parses) with paddle and torch unavailable."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BLOCKER = textwrap.dedent(
    """
    import importlib.abc, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("paddle", "torch"):
                raise ImportError(f"blocked by the test: {name}")
            return None

    sys.meta_path.insert(0, Block())
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        raise SystemExit("blocker does not work")
    """
)


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCKER + textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_packages_and_all_submodules_import_without_frameworks() -> None:
    out = run(
        """
        import importlib, pkgutil, sys
        names = []
        for pkg in ("padiff_trace", "padiff_trace.cli", "padiff_trace.analyzer"):
            mod = importlib.import_module(pkg)
            names.append(pkg)
            for info in pkgutil.walk_packages(mod.__path__, pkg + "."):
                if info.name.endswith("__main__"):
                    continue
                importlib.import_module(info.name)
                names.append(info.name)
        bad = sorted(m for m in sys.modules if m.split(".")[0] in ("paddle", "torch"))
        assert not bad, bad
        print("\\n".join(names))
        """
    )
    assert out.returncode == 0, out.stderr
    imported = out.stdout.split()
    for must in ("padiff_trace", "padiff_trace.trace._reader", "padiff_trace.trace._writer", "padiff_trace.cli", "padiff_trace.analyzer"):
        assert must in imported


def test_cli_help_and_info_without_frameworks(tmp_path: Path) -> None:
    import numpy as np

    from padiff_trace import Kind, Phase, RecordHeader, TraceWriter

    with TraceWriter(tmp_path / "t") as w:
        w.append(RecordHeader(step=0, phase=Phase.FORWARD, kind=Kind.MODEL_INPUT), np.zeros(3))
    out = run(
        f"""
        import contextlib, io, sys
        from padiff_trace.cli import main
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                main(["--help"])
            except SystemExit as e:
                assert e.code == 0
            assert main(["info", {str(tmp_path / "t")!r}]) == 0
            assert main(["ls", {str(tmp_path / "t")!r}]) == 0
        bad = sorted(m for m in sys.modules if m.split(".")[0] in ("paddle", "torch"))
        assert not bad, bad
        print(buf.getvalue())
        """
    )
    assert out.returncode == 0, out.stderr
    assert "usage: padiff-trace" in out.stdout and "complete" in out.stdout and "model_input" in out.stdout


def test_importing_does_not_change_environment_or_logging() -> None:
    out = run(
        """
        import logging, os
        before = dict(os.environ); handlers = list(logging.getLogger().handlers)
        import padiff_trace, padiff_trace.cli, padiff_trace.analyzer  # noqa: F401
        assert dict(os.environ) == before
        assert logging.getLogger().handlers == handlers
        print(sorted(padiff_trace.__all__) == sorted(set(padiff_trace.__all__)))
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
