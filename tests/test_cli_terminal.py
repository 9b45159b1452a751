"""Terminal output: 80 columns, colour on a TTY only."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from padiff_trace import Frame, Kind, Phase, RecordHeader, TraceWriter


def _trace(path: Path, framework: str, bug: bool) -> None:
    x = np.random.default_rng(1).standard_normal((4, 32)).astype(np.float32)
    long = "encoder.layers.11.attention.self.very_long_projection_name_for_wrapping"
    with TraceWriter(path, {"framework": framework}) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]"), x)
        for i in range(3):
            name = f"{long}.{i}"
            st = (Frame("models/a/really/deep/path/modeling_transformer.py", 120 + i, "forward", "hidden = self.proj(hidden) * self.scale + residual_branch"),)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, name, "Linear", i + 1, 0, 0, "args[0]", stack=st), x)
            x = np.tanh(x).astype(np.float32) + np.float32(0.1 if bug and i == 1 else 0)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, name, "Linear", i + 1, 0, 0, "out", stack=st), x)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out"), x)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("term")
    _trace(d / "a.trace", "paddle", True)
    _trace(d / "b.trace", "torch", False)
    return d / "a.trace", d / "b.trace"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "padiff_trace", *args]


def test_piped_output_has_no_colour_and_fits_80_columns(pair: tuple[Path, Path]) -> None:
    r = subprocess.run(_cli("compare", str(pair[0]), str(pair[1])), capture_output=True, text=True)
    assert r.returncode == 1
    assert "\033[" not in r.stdout
    assert "First divergence" in r.stdout and "very_long" in r.stdout
    too_long = [line for line in r.stdout.splitlines() if len(line) > 80]
    assert not too_long, too_long


def test_tty_output_is_coloured(pair: tuple[Path, Path]) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen(_cli("compare", str(pair[0]), str(pair[1]), "--quiet"), stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait()
    os.close(master)
    out = b"".join(chunks).decode()
    assert proc.returncode == 1
    assert "\033[1;31mDIVERGED\033[0m" in out


def test_ctrl_c_at_any_moment_of_start_up_is_one_line(pair: tuple[Path, Path]) -> None:
    """SIGINT at any moment of a short ``compare`` - most of it spent importing numpy, h5py and
    the analyzer - ends with one line and exit 130, never a traceback."""
    import signal
    import time

    script = Path(sys.executable).with_name("padiff-trace")
    argv = [str(script)] if script.exists() else _cli()
    argv += ["compare", str(pair[0]), str(pair[1])]
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import padiff_trace.cli"], timeout=60)
    bare = time.perf_counter() - t0  # the interpreter's start-up and the entry module: before any of our code runs
    t0 = time.perf_counter()
    subprocess.run(argv, capture_output=True, timeout=120)
    whole = time.perf_counter() - t0
    old = signal.signal(signal.SIGINT, signal.default_int_handler)  # the child gets SIG_DFL, as from a terminal
    interrupted = 0
    try:
        for k in range(12):
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.5 * bare + (whole - 1.5 * bare) * 0.9 * k / 12)  # from our first statement to the end
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=120)
            if "Traceback" in err and not _our_frames(err):
                # under load the interpreter's own start-up (site, before our first statement) can
                # still be running at any of the moments: a signal there is Python's, not ours
                continue
            assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
            if p.returncode == 130:
                interrupted += 1
                assert err.strip().splitlines() == ["padiff-trace: interrupted"], err
            else:  # it had finished, or the signal came before Python could raise it
                assert p.returncode in (0, 1, -signal.SIGINT), (p.returncode, err)
    finally:
        signal.signal(signal.SIGINT, old)
    assert interrupted >= 4, f"only {interrupted} of 12 runs were interrupted while running ({whole:.2f} s each)"


def _our_frames(err: str) -> list[str]:
    """The traceback lines of ``err`` that are frames of padiff-trace's own code."""
    return [line for line in err.splitlines() if line.lstrip().startswith("File ") and "padiff_trace" in line]


def test_paths_with_control_characters_are_shown_as_escapes(pair: tuple[Path, Path], tmp_path: Path) -> None:
    """An escape sequence or an undecodable byte in a path argument or a directory name never
    reaches the terminal raw: error lines, ``ls DIR``, ``history DIR`` and ``check`` show escapes."""
    odd = os.fsdecode(b"v\x1b[31m1\xff")
    missing = tmp_path / odd / "none.trace"
    archive = tmp_path / "archive"
    for i in range(2):
        (archive / f"{odd}{i}").mkdir(parents=True)
        _trace(archive / f"{odd}{i}" / "t.trace", "paddle" if i == 0 else "torch", bug=i == 0)
    runs = {
        "info": subprocess.run(_cli("info", str(missing)), capture_output=True),
        "ls": subprocess.run(_cli("ls", str(archive)), capture_output=True),
        "history": subprocess.run(_cli("history", str(archive)), capture_output=True),
        "check": subprocess.run(_cli("check", str(archive / f"{odd}0" / "t.trace")), capture_output=True),
    }
    for name, r in runs.items():
        text = r.stdout + r.stderr
        assert b"\x1b" not in text and b"\xff" not in text, (name, text)
        assert b"v\\x1b[31m1\\udcff" in text, (name, text)
    assert runs["info"].returncode == 2 and runs["info"].stderr.count(b"\n") == 1
    assert runs["history"].returncode in (0, 1) and runs["ls"].returncode == 0 and runs["check"].returncode == 0


def test_an_interrupt_during_class_creation_is_an_interrupt() -> None:
    """Ctrl-C while an import creates a dataclass reaches us as RuntimeError("Error calling
    __set_name__ ...") caused by the KeyboardInterrupt (a SIGINT 0.1 s into ``compare`` once
    printed that traceback): it is an interrupt, other errors are not."""
    from padiff_trace import interrupted as _interrupt

    class Interrupting:
        def __set_name__(self, owner: type, name: str) -> None:
            raise KeyboardInterrupt

    caught: BaseException | None = None
    try:
        type("Made", (), {"field": Interrupting()})
    except BaseException as exc:  # RuntimeError on 3.11, the KeyboardInterrupt itself on later Pythons
        caught = exc
    assert caught is not None and _interrupt(caught)
    assert not _interrupt(RuntimeError("a bug"))
    try:
        try:
            raise ValueError("first")
        except ValueError:
            raise RuntimeError("second") from None
    except RuntimeError as exc:
        assert not _interrupt(exc)


def test_an_interrupt_while_the_spec_imports_is_an_interrupt_not_the_models_error(tmp_path: Path) -> None:
    """Ctrl-C landing while a spec imports its framework (a SIGINT 1.1 s into ``record`` in the
    fault suite) came out of the class being created as RuntimeError("Error calling __set_name__
    ...") and was reported as the spec's error, exit 2. It is an interrupt: one line, exit 130."""
    spec = tmp_path / "spec.py"
    spec.write_text(
        "class Interrupting:\n"
        "    def __set_name__(self, owner, name):\n"
        "        raise KeyboardInterrupt\n\n"
        "Made = type('Made', (), {'field': Interrupting()})\n"
    )
    proc = subprocess.run(_cli("record", str(spec), "--out", str(tmp_path / "t.trace")), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "padiff-trace: interrupted", proc.stderr
    assert "raised" not in proc.stderr, proc.stderr

