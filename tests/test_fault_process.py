"""Process-level faults (issue 15), the fast subset of ``tests/fault_process.py``: real CLI
processes killed, on read-only and full file systems, and run as another user. Each failure of
the environment is one line naming the path and what to do (exit 2), never "the model raised";
what was written before stays whole."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import fault_actions as fa
import fault_process as fp
import numpy as np
import pytest

from padiff_trace import Frame, Kind, Phase, RecordHeader, TraceWriter, WriterOptions

ERR = "padiff-trace: error: "
H5PY_CRASH = ("died by a signal after the right message: h5py crashes collecting the objects of a shard whose "
              "close failed on the full disk (padiff_trace/trace/_shardwriter.py, being fixed separately)")


# the CLI with a disk that fills up at the first gradient record: inside a framework's autograd
# hook (paddle re-raises a hook's exception as a bare OSError, so its origin must not be lost)
FULL_IN_BACKWARD = """
import errno, sys
from padiff_trace import Phase, TraceWriter
from padiff_trace.cli import main
append = TraceWriter.append
def full_in_backward(self, header, *args, **kwargs):
    if header.phase == Phase.BACKWARD and self._error is None:
        self._error = OSError(errno.ENOSPC, "No space left on device")  # what the writer thread records
    return append(self, header, *args, **kwargs)
TraceWriter.append = full_in_backward
sys.exit(main(sys.argv[1:]))
"""


def synthetic(path: Path, noise: float) -> Path:
    """A small trace (weights, an input, six layers) in four shards; ``noise`` perturbs B."""
    rng = np.random.default_rng(0)
    with TraceWriter(path, meta={"framework": "synthetic"}, options=WriterOptions(flush_records=4)) as w:
        for i in range(6):
            w.append(RecordHeader(0, Phase.OTHER, Kind.PARAM, f"layers.{i}", "Linear", position="weight"),
                     rng.standard_normal((64, 64)).astype(np.float32))
        x = rng.standard_normal((16, 64)).astype(np.float32)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", call=0, position="args[0]"), x)
        for i in range(6):
            x = np.tanh(x @ rng.standard_normal((64, 64)).astype(np.float32) / 8)
            stack = (Frame("model.py", 10 + i, "forward", f"x = self.layers[{i}](x)"),)
            h = RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, f"layers.{i}", "Linear", call=i + 1, parent=0,
                             position="out", stack=stack)
            w.append(h, x + np.float32(noise * i) * rng.standard_normal(x.shape).astype(np.float32))
    return path


@pytest.fixture(scope="module")
def ctx() -> Iterator[fp.Context]:
    """Two synthetic traces, the old report (compare B A) and the new one (compare A B); in a
    directory of its own under the system's temporary directory (user nobody reaches it there)."""
    root = Path(tempfile.mkdtemp(prefix="padiff-test-process-faults-"))
    c = fp.Context(root, np.random.default_rng(0))
    try:
        c.reports(synthetic(c.scratch("a") / "a.trace", 0.0), synthetic(c.scratch("b") / "b.trace", 1e-3))
        yield c
    finally:
        c.close()
        shutil.rmtree(root, ignore_errors=True)


def mounted(ctx: fp.Context, opts: str) -> Path:
    where = ctx.tmpfs(opts)
    if where is None:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    return where


def only_line(proc: fp.Proc) -> str:
    lines = fp.error_lines(proc.err)
    assert len(lines) == 1 and "Traceback" not in proc.err and "the model raised" not in proc.err, proc.err[-3000:]
    return lines[0]


def test_record_on_a_read_only_mount_is_the_tools_error_not_the_models(ctx: fp.Context) -> None:
    """The reported bug: the model was said to have raised TraceWriteError."""
    ro = mounted(ctx, "ro,size=1m")
    proc = fp.cli("record", fp.SIMPLE_B, "--out", ro / "t.trace")
    assert proc.rc == 2
    assert only_line(proc) == f"{ERR}{ro / 't.trace'}: cannot write the trace here: Read-only file system; choose another output directory"


def test_report_on_a_read_only_mount_and_a_full_disk_keeps_the_old_report(ctx: fp.Context) -> None:
    a, b = ctx.pair
    mnt = mounted(ctx, "size=4m")
    d = mnt / "report"
    fp.put_report(d, ctx.old)
    subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
    proc = fp.cli("compare", a, b, "--report", d)
    assert proc.rc == 2 and fp.read_files(d) == ctx.old
    assert only_line(proc) == f"{ERR}{d}: cannot write the report: Read-only file system; choose another --report"

    full = mounted(ctx, "size=1m")
    d = full / "report"
    fp.put_report(d, ctx.old)
    fa.fill_disk(full, 4096)
    proc = fp.cli("compare", a, b, "--report", d)
    assert proc.rc == 2 and fp.read_files(d) == ctx.old and not fp.temps(d)
    assert only_line(proc) == (f"{ERR}{d}: cannot write the report: No space left on device: the disk is full; "
                               "free space or choose another --report")


def test_unreadable_shard_and_unwritable_output_as_another_user(ctx: fp.Context) -> None:
    if not fp.nobody_can_run():
        pytest.skip("cannot run commands as user nobody here")
    base = ctx.scratch("perm")
    base.chmod(0o755)
    trace = base / "t.trace"
    shutil.copytree(ctx.pair[0], trace)
    shard = fp.shards(trace)[1]
    shard.chmod(0)
    for args in (("info", trace), ("check", trace), ("compare", trace, ctx.pair[1])):
        proc = fp.cli(*args, user=fp.NOBODY)
        assert proc.rc == 2, args
        assert only_line(proc).startswith(f"{ERR}{shard}: cannot read this shard: Permission denied; ask its owner for read access")
    proc = fp.cli("ls", base, user=fp.NOBODY)  # a catalog lists it, and does not call it damaged
    assert proc.rc == 0 and "UNREADABLE" in proc.out and "DAMAGED" not in proc.out, proc.out
    d = base / "report"  # root's directory: nobody may not write there
    fp.put_report(d, ctx.old)
    proc = fp.cli("compare", *ctx.pair, "--report", d, user=fp.NOBODY)
    assert proc.rc == 2 and fp.read_files(d) == ctx.old
    assert only_line(proc) == f"{ERR}{d}: cannot write the report: Permission denied; choose another --report or ask for access"


def test_a_trace_it_may_not_list_is_an_unreadable_row_of_the_catalog(ctx: fp.Context) -> None:
    """``ls DIR`` as nobody: a trace directory nobody may not list is a row marked UNREADABLE
    with the reason, not left out, and not called damaged."""
    if not fp.nobody_can_run():
        pytest.skip("cannot run commands as user nobody here")
    out = fa.unlistable_in_catalog(ctx)
    assert out.kind == "detected", out.note
    assert "closed.trace: cannot list the trace: Permission denied; ask its owner for read access" in out.note, out.note


BROKEN_SPEC = "def model():\n    return None\n"  # no inputs(): the recorder refuses it (exit 2)


@pytest.mark.parametrize("mode", [(), ("--concurrent",)], ids=["sequential", "concurrent"])
def test_run_shows_a_childs_error_once(ctx: fp.Context, mode: tuple[str, ...]) -> None:
    """The child's reason in one line, not followed by a second one ("recording X failed (exit 2)")."""
    d = ctx.scratch("run-child")
    spec = d / "broken.py"
    spec.write_text(BROKEN_SPEC)
    proc = fp.cli("run", spec, fp.SIMPLE_B, "--out", d / "run", *mode)
    assert proc.rc == 2
    assert only_line(proc) == f"{ERR}recording {spec} failed: {spec}: spec must define inputs() (see README: spec files)"


def test_run_whose_child_fills_the_disk_says_so_once(ctx: fp.Context) -> None:
    """The environment's error in a child (its trace fills the disk): the child's line, once, exit 2."""
    mnt = mounted(ctx, "size=3m")
    fa.fill_disk(mnt, 1 << 20)
    out = mnt / "run"
    proc = fp.cli("run", fp.TORCH_SPEC, fp.SIMPLE_B, "--out", out, *fp.RECORD_ARGS)
    assert only_line(proc).startswith(f"{ERR}recording {fp.TORCH_SPEC} failed: {out / 'transformer_torch.trace'}: writing "
                                      "the trace failed: No space left on device: the disk is full; free space or choose "
                                      "another output directory; the ")
    if proc.rc == 1:  # the child died by a signal after its line: run cannot tell it from the model raising
        pytest.xfail(H5PY_CRASH)
    assert proc.rc == 2


def test_killed_compare_leaves_the_old_or_the_new_report(ctx: fp.Context) -> None:
    for when in (0.3, None, None):
        out = fa.kill_compare(ctx, when, 0.0)
        assert out.kind == "no effect", out.note


def test_killed_record_reads_back_and_compares_incomplete(ctx: fp.Context) -> None:
    out = fa.kill_record(ctx, fp.TORCH_SPEC, at_shard=4, delay=0.0)
    assert out.kind == "detected", out.note
    assert "incomplete" in out.note or "before the first flush" in out.note


def test_record_on_a_full_disk_keeps_what_was_flushed(ctx: fp.Context) -> None:
    expected = ctx.reference(fp.TORCH_SPEC)[1]
    mnt = mounted(ctx, "size=3m")
    fa.fill_disk(mnt, 1 << 20)
    trace = mnt / "t.trace"
    proc = fp.cli("record", fp.TORCH_SPEC, "--out", trace, *fp.RECORD_ARGS)
    lines = fp.error_lines(proc.err)
    assert len(lines) == 1 and "the model raised" not in proc.err, proc.err[-3000:]
    assert lines[0].startswith(f"{ERR}{trace}: writing the trace failed: No space left on device: the disk is full; "
                               "free space or choose another output directory; the ")
    assert fa.record_remains(trace, expected, lines[0]) is None  # flushed records right, no *.part, the count told
    if proc.rc is not None and proc.rc < 0:
        pytest.xfail(H5PY_CRASH)
    assert proc.rc == 2 and "Traceback" not in proc.err


def test_record_on_a_disk_with_nothing_free_leaves_no_lock_file(ctx: fp.Context) -> None:
    mnt = mounted(ctx, "size=3m")
    fa.fill_disk(mnt, 0)
    trace = mnt / "t.trace"
    proc = fp.cli("record", fp.TORCH_SPEC, "--out", trace, *fp.RECORD_ARGS)
    lines = fp.error_lines(proc.err)
    assert proc.rc == 2 and len(lines) == 1 and "Traceback" not in proc.err, proc.err[-3000:]
    assert "No space left on device" in lines[0] and "the model raised" not in lines[0]
    left = sorted(p.name for p in trace.iterdir()) if trace.is_dir() else []
    assert left == [], f"files left in the trace directory: {left}"


@pytest.mark.parametrize("spec", [fp.TORCH_SPEC, fp.PADDLE_SPEC], ids=["torch", "paddle"])
def test_disk_full_inside_a_gradient_hook_is_not_blamed_on_the_model(ctx: fp.Context, spec: Path) -> None:
    out = ctx.scratch("hook") / "t.trace"
    proc = subprocess.run([sys.executable, "-c", FULL_IN_BACKWARD, "record", str(spec), "--out", str(out)],
                             capture_output=True, text=True, cwd=fp.ROOT, timeout=300)
    line = only_line(fp.Proc(proc.returncode, proc.stdout, proc.stderr))
    assert proc.returncode == 2
    assert line.startswith(f"{ERR}{out}: writing the trace failed: No space left on device: the disk is full; free space")
    # whether a shard was flushed before the disk filled depends on timing; the line says which
    assert "record(s) flushed before stay readable" in line or line.endswith("nothing was flushed before")


@pytest.mark.slow
def test_quick_fault_suite() -> None:
    """``fault_process.py --quick``: every kind of fault, real torch models (40 to 80 s)."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="padiff-test-process-faults-") as tmp:
        counts, _, bad = fp.run(Path(tmp), quick=True)
    assert sum(counts.values()) >= 10, counts
    known = [b for b in bad if b[0] == "disk-full" and b[2].kind == "crash" and "[remains: intact]" in b[2].note]
    assert [b for b in bad if b not in known] == [], bad
    if known:
        pytest.xfail(f"{H5PY_CRASH} ({len(known)} case(s), {time.monotonic() - t0:.0f} s)")


def test_a_lock_of_another_user_names_the_lock_file_and_its_owner(ctx: fp.Context) -> None:
    """A trace directory whose writer lock belongs to root (left by a killed recording): nobody's
    ``record`` into it says whose lock it is and where, in one line."""
    if not fp.nobody_can_run():
        pytest.skip("cannot run commands as user nobody here")
    from padiff_trace.trace._tracedir import LOCK_NAME

    base = ctx.scratch("foreign-lock")
    base.chmod(0o1777)  # anyone may write here; the lock file stays root's
    trace = base / "t.trace"
    trace.mkdir()
    trace.chmod(0o777)
    lock = trace / LOCK_NAME
    lock.write_text('{"pid": 999999, "host": "elsewhere"}')
    lock.chmod(0o644)
    proc = fp.cli("record", fp.SIMPLE_B, "--out", trace, user=fp.NOBODY)
    line = only_line(proc)
    assert proc.rc == 2 and str(lock) in line and "belongs to user root" in line and "999999" in line, line
