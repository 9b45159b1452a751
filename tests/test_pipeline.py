"""``padiff_trace.pipeline``: the library call behind ``padiff-trace run``, options declared
once (flags, job files), job files for children, and children that never outlive ``run``.

Real processes throughout: ``run`` is started as a subprocess and killed for real.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from padiff_trace.recorder import RecordJob, RecordOptions, option

from padiff_trace import RecordingFailedError, UserError, open_trace, pipeline
from padiff_trace.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SIMPLE_A, SIMPLE_B = EXAMPLES / "simple_paddle.py", EXAMPLES / "simple_torch.py"

# a spec that never gets to build a model: it notes its pid and sleeps (no framework import)
SLEEPER = """
import os, pathlib, time

def model():
    pathlib.Path(os.environ["PADIFF_TEST_PIDS"], str(os.getpid())).write_text("")
    time.sleep(120)

def inputs():
    return ()
"""


def cli(*argv: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "padiff_trace", *map(str, argv)], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)


def error_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip() and "ccache" not in ln and "warnings.warn" not in ln]


def alive(pid: int) -> bool:
    """Running (a zombie nobody has reaped yet counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


# ------------------------------------------------------------------ one declaration per option
@dataclass(frozen=True)
class ExtraOptions(RecordOptions):
    novel_knob: int = option(3, metavar="N", help="a knob only this test declares")


def _help(parser: object, command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        parser.parse_args([command, "--help"])  # type: ignore[attr-defined]
    return capsys.readouterr().out


def test_one_field_is_a_flag_of_record_and_run_and_reaches_the_child(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    parser = build_parser(record_options=ExtraOptions)
    for command in ("record", "run"):
        text = _help(parser, command, capfd)
        assert "--novel-knob N" in text and "a knob only this test declares" in text, command
    assert "--novel-knob" not in _help(build_parser(), "record", capfd)

    # record: the flag becomes the option
    args = parser.parse_args(["record", "spec.py", "--out", "o", "--novel-knob", "7", "--tag", "k=v", "--only-step", "2"])
    from padiff_trace.cli._record import option_values

    opts = ExtraOptions.from_dict(option_values(ExtraOptions, args))
    assert (opts.novel_knob, opts.tags, opts.steps) == (7, {"k": "v"}, (2,))

    # run: the option travels in the job file each child receives, and the child parses it
    out = tmp_path / "run"
    args = parser.parse_args(["run", str(SIMPLE_A), str(SIMPLE_B), "--out", str(out), "--novel-knob", "5"])
    with pytest.raises(RecordingFailedError) as failed:
        args.handler(args)
    assert failed.value.exit_code == 2  # the real child knows only RecordOptions: it refused the unknown option
    assert "novel_knob" in str(failed.value) and "novel_knob" not in capfd.readouterr().err  # one line: the child's, in ours
    job_file = out / "jobs" / "simple_paddle.json"
    assert json.loads(job_file.read_text())["job"]["options"]["novel_knob"] == 5
    job = pipeline.read_job(job_file, options=ExtraOptions)
    assert isinstance(job.options, ExtraOptions) and job.options.novel_knob == 5 and job.spec == str(SIMPLE_A)
    with pytest.raises(UserError, match="novel_knob"):
        pipeline.read_job(job_file)


def test_options_round_trip_through_json() -> None:
    opts = RecordOptions(include=("a.*",), phases=("forward",), tags={"m": "x"}, max_tensor_bytes=1 << 20, seed=3)
    job = RecordJob("s.py", "o.trace", opts, steps=2, dtype="float64", inputs_from="p.trace")
    assert RecordJob.from_dict(json.loads(json.dumps(job.to_dict()))) == job
    with pytest.raises(UserError, match="unknown recording option"):
        RecordOptions.from_dict({"stats_only": True, "no_such": 1})
    with pytest.raises(TypeError):  # recorder.record(**options): an unknown keyword stays a TypeError
        RecordOptions.from_kwargs({"no_such": 1})
    with pytest.raises(UserError, match="compression"):
        RecordOptions(compression="zip")


# ------------------------------------------------------------------ job files
def test_record_job_file(tmp_path: Path) -> None:
    job = RecordJob(str(SIMPLE_B), str(tmp_path / "t.trace"), RecordOptions(stats_only=True, tags={"model": "simple"}))
    path = pipeline.write_job(tmp_path / "job.json", job)
    proc = cli("record", "--job", path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open_trace(tmp_path / "t.trace") as tr:
        assert tr.complete and tr.meta["tags"] == {"model": "simple"} and tr.meta["options"]["stats_only"]
    # the job says what to record: other recording arguments are an error, not silently ignored
    proc = cli("record", "--job", path, "--stats-only", "--force")
    assert proc.returncode == 2 and len(error_lines(proc.stderr)) == 1 and "--stats-only" in proc.stderr
    doc = json.loads(path.read_text())
    doc["job"]["options"]["every_other"] = 2
    path.write_text(json.dumps(doc))
    proc = cli("record", "--job", path)
    assert proc.returncode == 2 and len(error_lines(proc.stderr)) == 1 and "every_other" in proc.stderr, proc.stderr
    proc = cli("record", "--out", tmp_path / "x")
    assert proc.returncode == 2 and "spec file and --out" in proc.stderr


# ------------------------------------------------------------------ the library call
def test_pipeline_run_is_the_library_call(tmp_path: Path) -> None:
    lines: list[str] = []
    result = pipeline.run(SIMPLE_A, SIMPLE_B, tmp_path, record=RecordOptions(tags={"model": "simple"}), progress=lines.append)
    assert result.exit_code == 0 and result.report.passed
    assert result.traces.a == tmp_path / "simple_paddle.trace" and result.traces.reference_a is None
    assert (result.report_dir / "report.json").is_file()
    assert lines == [f"recording {SIMPLE_A} -> {result.traces.a}", f"recording {SIMPLE_B} -> {result.traces.b}"]
    with open_trace(result.traces.a) as a, open_trace(result.traces.b) as b:
        assert a.meta["tags"] == b.meta["tags"] == {"model": "simple"}
        assert a.meta["run_id"] == b.meta["run_id"]  # one run
        assert b.meta["replayed_weights"]
    # the existing report is not overwritten without force, and nothing is recorded first
    with pytest.raises(UserError, match="already exists"):
        pipeline.run(SIMPLE_A, SIMPLE_B, tmp_path)


def test_run_without_force_keeps_an_existing_report(tmp_path: Path) -> None:
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "report.txt").write_text("an earlier verdict\n")
    proc = cli("run", SIMPLE_A, SIMPLE_B, "--out", tmp_path)
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = error_lines(proc.stderr)
    assert len(lines) == 1 and "report" in lines[0] and "already exists" in lines[0] and "--force" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # nothing recorded
    assert (tmp_path / "report" / "report.txt").read_text() == "an earlier verdict\n"


def test_concurrent_force_never_replays_the_previous_a(tmp_path: Path) -> None:
    for _ in range(2):
        proc = cli("run", SIMPLE_A, SIMPLE_B, "--out", tmp_path, "--concurrent", "--force")
        assert proc.returncode == 0, proc.stderr[-3000:]
    with open_trace(tmp_path / "simple_paddle.trace") as a, open_trace(tmp_path / "simple_torch.trace") as b:
        assert a.complete and b.complete and a.meta["run_id"] == b.meta["run_id"]


def test_record_single_step_from_writes_only_out(tmp_path: Path) -> None:
    a = tmp_path / "a" / "p.trace"
    assert cli("record", SIMPLE_A, "--out", a).returncode == 0
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    out = tmp_path / "b" / "t.trace"
    proc = cli("record", SIMPLE_B, "--out", out, "--single-step-from", a, "--inputs-from", a, "--weights-from", a, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [p.name for p in out.parent.iterdir()] == ["t.trace"]  # no .structure trace or plan beside OUT
    assert not [p for p in tmp.iterdir() if p.name.startswith("padiff")]  # the structural pass's temporary directory is gone
    assert sorted(p.name for p in a.parent.iterdir()) == ["p.trace"]
    with open_trace(out) as tr:
        assert tr.complete and tr.meta["single_step"]


# ------------------------------------------------------------------ no orphans
@pytest.mark.parametrize(
    ("flags", "sig"),
    [(("--concurrent",), signal.SIGKILL), ((), signal.SIGKILL), ((), signal.SIGTERM), ((), signal.SIGINT)],
    ids=["concurrent-sigkill", "sigkill", "sigterm", "sigint"],
)
def test_killing_run_leaves_no_recorder_running(tmp_path: Path, flags: tuple[str, ...], sig: signal.Signals) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    (tmp_path / "sleep_a.py").write_text(SLEEPER)
    (tmp_path / "sleep_b.py").write_text(SLEEPER)
    env = {**os.environ, "PADIFF_TEST_PIDS": str(pids)}
    argv = [sys.executable, "-m", "padiff_trace", "run", str(tmp_path / "sleep_a.py"), str(tmp_path / "sleep_b.py"),
            "--out", str(tmp_path / "run"), *flags]
    # a test runner started in the background by a shell ignores SIGINT, and a child inherits
    # that: run with the default action, as from a terminal
    old = signal.signal(signal.SIGINT, signal.default_int_handler)  # a handler is not inherited: the child gets SIG_DFL
    try:
        parent = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        signal.signal(signal.SIGINT, old)
    try:
        want = 2 if flags else 1
        deadline = time.monotonic() + 60
        while len(list(pids.iterdir())) < want and time.monotonic() < deadline:
            time.sleep(0.05)
        children = [int(p.name) for p in pids.iterdir()]
        assert len(children) == want and all(alive(c) for c in children)
        parent.send_signal(sig)
        parent.wait(60)  # stopping takes up to ~6 s (SIGTERM grace, stderr relay); more on a loaded machine
        deadline = time.monotonic() + 5
        while any(alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [c for c in children if alive(c)], f"recorder children outlived run ({sig.name})"
        if sig == signal.SIGINT:
            assert parent.returncode == 130  # interrupted; the children were stopped by run itself
    finally:
        if parent.poll() is None:
            parent.kill()
        for p in pids.iterdir():
            if alive(int(p.name)):
                os.kill(int(p.name), signal.SIGKILL)

