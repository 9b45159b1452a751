"""The faults of ``fault_process.py``: one function per kind, ``(ctx, parameters) -> Outcome``,
and ``plan``, which draws each kind's parameters (where to kill, how much space to leave).

Each sets up its fault under ``ctx.scratch``, runs real ``padiff-trace`` processes through the
harness (``fault_process.cli``/``start``/``kill``) and judges what they said and left with its
checks (``judge_error``, ``partial_problem``, ``report_problem``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fault_process import (
    NOBODY,
    PADDLE_SPEC,
    RECORD_ARGS,
    REPORT_FILES,
    SIMPLE_A,
    SIMPLE_B,
    TORCH_SPEC,
    Context,
    Outcome,
    cli,
    dead_pid,
    error_lines,
    finish,
    judge_error,
    kill,
    owner_file,
    partial_problem,
    put_report,
    read_files,
    report_problem,
    shards,
    snapshot,
    staged_dir,
    start,
    temps,
    tree,
)

from padiff_trace import open_trace
from padiff_trace.trace._schema import LOCK_NAME

__all__ = ["Fault", "concurrent_namespaces", "interrupt", "disk_full_record", "disk_full_report", "fill_disk", "foreign_temporaries",
           "kill_compare", "kill_record", "permission", "plan", "read_only", "record_remains", "report_in_the_way",
           "report_sticky", "unlistable_in_catalog"]

Fault = tuple[str, str, Callable[[Context], Outcome]]  # (kind, description, run it)


# ---------------------------------------------------------------------- the faults
def kill_record(ctx: Context, spec: Path, at_shard: int, delay: float) -> Outcome:
    ref, expected, _ = ctx.reference(spec)
    trace = ctx.scratch("kill-record") / "t.trace"
    p = start("record", spec, "--out", trace, *RECORD_ARGS)
    deadline = time.monotonic() + 300
    while p.poll() is None and len(shards(trace)) < at_shard and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(delay)
    ended = p.poll() is not None
    proc = kill(p)
    if ended and proc.rc != 0:
        return Outcome("wrong", f"record ended by itself with exit {proc.rc}: {error_lines(proc.err)[-1:]}")
    if not shards(trace):  # killed before its first flush: nothing to read, and compare must say so
        cmp = cli("compare", trace, ref)
        bad = judge_error(cmp, trace, next_step=False)
        return bad or Outcome("detected", f"killed before the first flush: {error_lines(cmp.err)[0][21:][:120]}")
    bad = partial_problem(trace, expected)
    if bad:
        return bad
    with open_trace(trace) as tr:
        complete = tr.complete
    chk, info, cmp = cli("check", trace), cli("info", trace), cli("compare", trace, ref)
    for name, pr in (("check", chk), ("info", info), ("compare", cmp)):
        if pr.rc is None or pr.rc < 0 or "Traceback" in pr.err:
            what = "hang" if pr.rc is None else "crash" if pr.rc < 0 else "traceback"
            return Outcome(what, f"{name}: exit {pr.rc}: {pr.err[-300:]}")
    if chk.rc != 0:
        return Outcome("wrong", f"check exit {chk.rc} on a killed trace whose shards are whole: {chk.out[-300:]}")
    if complete:
        ok = cmp.rc == 0 and "ALIGNED" in cmp.out and "state      complete" in info.out
        return Outcome("no effect", "finished before the kill") if ok else Outcome("wrong", f"complete trace: compare exit {cmp.rc}")
    if "INCOMPLETE" not in info.out:
        return Outcome("wrong", f"info does not say INCOMPLETE: {info.out[:200]}")
    if cmp.rc != 3 or "INCOMPLETE" not in cmp.out or "ALIGNED" in cmp.out.splitlines()[0]:
        return Outcome("wrong", f"compare on a killed trace: exit {cmp.rc}: {cmp.out.splitlines()[:1]}")
    return Outcome("detected", f"{len(shards(trace))} shard(s), incomplete")


def kill_compare(ctx: Context, when: float | None, delay: float) -> Outcome:
    """``when``: seconds after the start; None: once a temporary report file appears, + ``delay``."""
    a, b = ctx.pair
    d = ctx.scratch("kill-compare") / "report"
    put_report(d, ctx.old)
    p = start("compare", a, b, "--report", d)
    if when is None:
        deadline = time.monotonic() + 120
        while p.poll() is None and not (temps(d) or temps(d.parent)) and time.monotonic() < deadline:
            time.sleep(0.0005)
        time.sleep(delay)
    else:
        time.sleep(when)
    kill(p)
    bad = report_problem(d, [ctx.old, ctx.new])
    if bad:
        return bad
    left = temps(d)
    again = cli("compare", a, b, "--report", d)
    if again.rc != ctx.new_rc or "Traceback" in again.err:
        return Outcome("traceback" if "Traceback" in again.err else "wrong", f"compare after the kill: exit {again.rc}: {again.err[-300:]}")
    if read_files(d) != ctx.new:
        return Outcome("wrong", "the next compare --report did not write the new report")
    if temps(d):
        return Outcome("wrong", f"temporary files stay after the next compare --report: {temps(d)}")
    return Outcome("no effect", f"old or new whole; {len(left)} temporary file(s) left by the kill, removed by the next write")


def fill_disk(where: Path, leave: int) -> None:
    """Fill the file system at ``where`` until about ``leave`` bytes are free."""
    st = os.statvfs(where)
    free = st.f_bavail * st.f_frsize
    with open(where / "filler", "wb") as f:
        f.write(b"\0" * max(0, free - leave))


def disk_full_record(ctx: Context, spec: Path, leave: int) -> Outcome:
    expected = ctx.reference(spec)[1]
    mnt = ctx.tmpfs("size=3m")
    if mnt is None:
        return Outcome("skipped", "cannot mount a tmpfs")
    fill_disk(mnt, leave)
    trace = mnt / "t.trace"
    proc = cli("record", spec, "--out", trace, *RECORD_ARGS)
    if proc.rc == 0:
        return Outcome("wrong", "a trace larger than the disk was recorded without an error")
    line = next((ln for ln in error_lines(proc.err) if ln.startswith("padiff-trace: error: ")), "")
    rest = record_remains(trace, expected, line)
    bad = judge_error(proc, trace, "the disk is full")
    if bad is not None:  # the process failed; say whether what it left is right all the same
        bad.note += f" [remains: {rest.note if rest else 'intact'}]"
    return bad or rest or Outcome("detected", line[len("padiff-trace: error: "):][:160])


def record_remains(trace: Path, expected: dict[int, tuple[Any, ...]], line: str) -> Outcome | None:
    """What a record stopped by a full disk left: no ``*.part``; the flushed records read back
    right, ``check`` finds no damage, and the error line tells how many there are."""
    parts = sorted(p.name for p in trace.glob("*.part")) if trace.is_dir() else []
    if parts:
        return Outcome("wrong", f"unfinished shards stay: {parts}")
    if (trace / LOCK_NAME).exists():
        return Outcome("wrong", f"the writer lock {LOCK_NAME} stays after the recorder ended")
    if not shards(trace):
        if "nothing was flushed" in line or "cannot write the trace here" in line:
            return None
        return Outcome("wrong", f"no shard stays, the line does not say so: {line}")
    lost = partial_problem(trace, expected)
    if lost:
        return lost
    chk = cli("check", trace)
    if chk.rc != 0:
        return Outcome("silent loss", f"check exit {chk.rc}: {chk.out[-300:]}")
    m = re.search(r"the (\d+) record\(s\) flushed", line)
    if m is None or int(m.group(1)) != len(snapshot(trace)):
        return Outcome("wrong", f"the line does not tell how many records stay ({len(snapshot(trace))}): {line}")
    return None


def disk_full_report(ctx: Context, with_old: bool, leave: int) -> Outcome:
    a, b = ctx.pair
    size = 2 * sum(len(v or b"") for v in ctx.old.values()) + (1 << 20)
    mnt = ctx.tmpfs(f"size={size}")
    if mnt is None:
        return Outcome("skipped", "cannot mount a tmpfs")
    d = mnt / "report"
    if with_old:
        put_report(d, ctx.old)
    fill_disk(mnt, leave)
    proc = cli("compare", a, b, "--report", d)
    bad = judge_error(proc, d, "the disk is full")
    bad = bad or report_problem(d, [ctx.old if with_old else dict.fromkeys(REPORT_FILES)])
    if bad is None and temps(d):
        bad = Outcome("wrong", f"temporary files stay: {temps(d)}")
    return bad or Outcome("detected", f"{'old report whole' if with_old else 'no report files'}, no temporary files")


def read_only(ctx: Context, what: str) -> Outcome:
    mnt = ctx.tmpfs("size=4m")
    if mnt is None:
        return Outcome("skipped", "cannot mount a tmpfs")
    a, b = ctx.pair
    d = mnt / "report"
    if what == "report":
        put_report(d, ctx.old)
    subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
    if what == "record":
        target, proc = mnt / "t.trace", cli("record", SIMPLE_B, "--out", mnt / "t.trace")
    elif what == "report":
        target, proc = d, cli("compare", a, b, "--report", d)
    else:
        target, proc = mnt / "run", cli("run", SIMPLE_A, SIMPLE_B, "--out", mnt / "run")
    bad = judge_error(proc, target, "Read-only file system")
    if bad is None and what == "report":
        bad = report_problem(d, [ctx.old])
    return bad or Outcome("detected", error_lines(proc.err)[0][len("padiff-trace: error: "):][:160])


def permission(ctx: Context, what: str) -> Outcome:
    """As nobody: ``unreadable-shard:CMD``, ``unlistable:CMD`` (a trace it may not read);
    ``record``, ``report``, ``run`` (into a directory it may not write); ``spec`` (a spec file
    it may not read); ``inputs-from`` (a replay source with an unreadable shard)."""
    base = ctx.scratch("perm")
    os.chmod(base, 0o755)
    trace = base / "t.trace"
    shutil.copytree(ctx.pair[0], trace)
    writable = base / "w"  # nobody may write here, and not in ``locked`` (root's, 755)
    writable.mkdir(mode=0o777)
    os.chmod(writable, 0o777)
    locked, spec = base / "locked", base / "spec.py"
    locked.mkdir()
    kind, _, cmd = what.partition(":")
    shard = shards(trace)[int(ctx.rng.integers(len(shards(trace))))]
    d = locked / "report"
    if kind in ("unreadable-shard", "inputs-from"):
        os.chmod(shard, 0)
    if kind == "unlistable":
        os.chmod(trace, 0o700)
    if kind == "spec":
        shutil.copyfile(SIMPLE_B, spec)
        os.chmod(spec, 0)
    if kind == "report":
        put_report(d, ctx.old)
    target, args = {
        "unreadable-shard": (shard, {"compare": ("compare", trace, ctx.pair[1])}.get(cmd, (cmd, trace))),
        "unlistable": (trace, {"compare": ("compare", trace, ctx.pair[1])}.get(cmd, (cmd, trace))),
        "record": (locked / "t.trace", ("record", SIMPLE_B, "--out", locked / "t.trace")),
        "report": (d, ("compare", *ctx.pair, "--report", d)),
        "run": (locked / "run", ("run", SIMPLE_A, SIMPLE_B, "--out", locked / "run")),
        "spec": (spec, ("record", spec, "--out", writable / "t.trace")),
        "inputs-from": (shard, ("record", SIMPLE_B, "--out", writable / "t.trace", "--inputs-from", trace)),
    }[kind]
    proc = cli(*args, user=NOBODY)
    bad = judge_error(proc, target, "Permission denied")
    if bad is None and kind == "report":
        bad = report_problem(d, [ctx.old])
    return bad or Outcome("detected", error_lines(proc.err)[0][21:][:160])


def unlistable_in_catalog(ctx: Context) -> Outcome:
    """As nobody, ``ls DIR`` over a trace it may read and one it may not list: both are rows,
    the second marked UNREADABLE with the reason (neither left out nor called damaged)."""
    base = ctx.scratch("catalog")
    os.chmod(base, 0o755)
    for name in ("open.trace", "closed.trace"):
        shutil.copytree(ctx.pair[0], base / name)
    os.chmod(base / "closed.trace", 0o700)
    proc = cli("ls", base, user=NOBODY)
    if proc.rc is None or proc.rc < 0 or "Traceback" in proc.err:
        what = "hang" if proc.rc is None else "crash" if proc.rc < 0 else "traceback"
        return Outcome(what, f"exit {proc.rc}: {proc.err[-300:]}")
    rows = {ln.split()[0]: ln for ln in proc.out.splitlines()[1:] if ln.strip()}
    closed = rows.get("closed.trace", "")
    if proc.rc != 0 or "open.trace" not in rows:
        return Outcome("wrong", f"exit {proc.rc}; rows {sorted(rows)}; stderr: {error_lines(proc.err)[:1]}")
    if not closed:
        return Outcome("silent loss", f"the trace it may not list is left out: {proc.out[-300:]}")
    if "UNREADABLE: " not in closed or "Permission denied" not in closed or "DAMAGED" in closed:
        return Outcome("wrong", f"the row of the trace it may not list: {closed}")
    return Outcome("detected", closed.split("UNREADABLE: ", 1)[1][:160])


# ---------------------------------------------------------------------- a report that cannot be replaced
def report_in_the_way(ctx: Context, name: str) -> Outcome:
    """``compare --report D`` where ``D/name`` is a directory (holding a file of the user's) and
    the rest of D the old report: exit 2, one line naming ``D/name``; D exactly as it was."""
    d = ctx.scratch("in-the-way") / "report"
    put_report(d, {k: v for k, v in ctx.old.items() if k != name})
    (d / name).mkdir()
    (d / name / "mine.txt").write_text("the user's\n")
    before = tree(d)
    proc = cli("compare", *ctx.pair, "--report", d)
    bad = judge_error(proc, d / name, "is a directory")
    if bad is None and tree(d) != before:
        bad = Outcome("wrong", f"{d} changed although the write failed")
    return bad or Outcome("detected", error_lines(proc.err)[0][21:][:160])


def report_sticky(ctx: Context) -> Outcome:
    """As nobody, ``compare --report D`` where D and its parent are sticky, world-writable
    directories (``/tmp``-like) holding root's old report: nobody may create files there but not
    replace root's. Exit 2 with one line, the old report byte for byte, nothing of nobody's left."""
    base = ctx.scratch("sticky")
    os.chmod(base, 0o1777)
    d = base / "report"
    put_report(d, ctx.old)
    os.chmod(d, 0o1777)
    before = tree(d)
    proc = cli("compare", *ctx.pair, "--report", d, user=NOBODY)
    bad = judge_error(proc, d, next_step=False)
    if bad is None and tree(d) != before:
        bad = Outcome("wrong", f"{d} changed although the write failed")
    left = [p.name for p in base.iterdir() if p.name != "report"]
    if bad is None and left:
        bad = Outcome("wrong", f"temporaries left beside the report: {left}")
    return bad or Outcome("detected", error_lines(proc.err)[0][21:][:160])


# ---------------------------------------------------------------------- other writers' temporaries
_OWNERS: dict[str, Callable[[], dict[str, object]]] = {
    # another machine's writer: cannot be checked from here, kept (until a day old)
    "another host": lambda: {"host": "other-host", "boot": "00000000-0000-0000-0000-000000000000", "pid": dead_pid()},
    # same host and boot, another PID namespace (a container): its PID means nothing here, kept
    "another PID namespace": lambda: {"pidns": "pid:[1]", "pid": dead_pid()},
    # this machine and namespace, still running (this harness): kept
    "a live writer": dict,
    # ours, its PID gone: removed
    "a gone writer": lambda: {"pid": dead_pid()},
    # ours, its PID running but started at another time (a reused PID): removed
    "a reused PID": lambda: {"start": "1"},
}


def foreign_temporaries(ctx: Context, who: str) -> Outcome:
    """A staged report directory and an in-place temporary of another writer (``who``), each
    with its owner file, beside and inside D; then ``compare --report D``. The new report is
    written; another host's, namespace's or live writer's temporaries stay, a gone one's go."""
    base = ctx.scratch("owners")
    d = base / "report"
    put_report(d, ctx.old)
    run = f"{abs(hash(who)) % (1 << 64):016x}"
    fields = _OWNERS[who]()
    staged = staged_dir(base, run)
    owner_file(base, run, **fields)
    inside = d / f".report.txt.padiff-{run}.new.tmp"
    inside.write_text("their half")
    owner_file(d, run, **fields)
    proc = cli("compare", *ctx.pair, "--report", d)
    if proc.rc is None or proc.rc < 0 or "Traceback" in proc.err or proc.rc != ctx.new_rc:
        return judge_error(proc, d) or Outcome("wrong", f"exit {proc.rc}: {error_lines(proc.err)[:1]}")
    bad = report_problem(d, [ctx.new])
    keep = who not in ("a gone writer", "a reused PID")
    kept = staged.is_dir() and (base / f".padiff-{run}.owner.tmp").exists()
    kept_inside = (d / inside.name).exists() and (d / inside.name).read_text() == "their half"
    if bad is None and keep and not (kept and kept_inside):
        bad = Outcome("silent loss", f"the temporaries of {who} were removed (beside: {kept}, inside: {kept_inside})")
    if bad is None and not keep and (staged.exists() or (d / inside.name).exists()):
        bad = Outcome("wrong", f"the temporaries of {who} stay")
    return bad or Outcome("detected", f"{'kept' if keep else 'removed'} {who}'s temporaries; new report written")


def concurrent_namespaces(ctx: Context) -> Outcome:
    """Two ``compare --report D`` at once over the old report, one in a PID namespace of its
    own (``unshare --pid``: another container on the same host), three rounds. Each ends with
    the report written (or one line); D is a whole report; no temporaries stay."""
    prefix = ("unshare", "--pid", "--fork", "--mount-proc")
    if subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        return Outcome("skipped", "cannot make a PID namespace here")
    d = ctx.scratch("concurrent") / "report"
    put_report(d, ctx.old)
    for _ in range(3):
        procs = [start("compare", *ctx.pair, "--report", d, prefix=prefix), start("compare", *ctx.pair, "--report", d)]
        for proc in (finish(p) for p in procs):
            if proc.rc != ctx.new_rc:
                return judge_error(proc, d) or Outcome("wrong", f"exit {proc.rc}: {error_lines(proc.err)[:1]}")
        bad = report_problem(d, [ctx.new])
        left = [p.name for p in d.parent.iterdir() if p.name != "report"] + temps(d)
        if bad is None and left:
            bad = Outcome("wrong", f"temporaries stay: {left}")
        if bad is not None:
            return bad
    return Outcome("detected", "both writers finished each round; the report whole; no temporaries")


# ---------------------------------------------------------------------- Ctrl-C
def _interpreter_ready() -> float:
    """Seconds from starting this interpreter to its having imported the command line's module
    (what runs before ``console`` can catch an interrupt), measured now."""
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "import padiff_trace.cli"], check=True)
    return time.monotonic() - t0


def interrupt(ctx: Context, what: str, delay: float) -> Outcome:
    """SIGINT to ``padiff-trace`` ``delay`` s after its start (``what``: info, compare, record):
    exit 130 with one line, or the command's own result when it finished first (-2: the signal
    came as the interpreter was exiting, output all written); never a traceback or a mixed
    report; an interrupted recording exact in what it holds, and ``info`` saying why it stopped."""
    a, b = ctx.pair
    d = ctx.scratch("interrupt")
    report, trace = d / "report", d / "t.trace"
    if what == "compare":
        put_report(report, ctx.old)
    args = {"info": ("info", a), "compare": ("compare", a, b, "--report", report),
            "record": ("record", TORCH_SPEC, "--out", trace, *RECORD_ARGS)}[what]
    # ``delay`` counts from when the interpreter can run padiff-trace's code: before that Python
    # itself is starting (site, encodings), and an interrupt there is its traceback, not the
    # tool's. That moment moves with the machine's load, so it is measured now, each time.
    ready = _interpreter_ready()
    p = start(*args)
    time.sleep(ready + delay)
    try:
        os.killpg(p.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    proc = finish(p, 120.0)
    lines = error_lines(proc.err)
    if proc.rc is None or (proc.rc < 0 and proc.rc != -signal.SIGINT):
        return Outcome("hang" if proc.rc is None else "crash", f"exit {proc.rc}: {lines[:1]}")
    if "Traceback (most recent call last)" in proc.err or "Exception ignored" in proc.err:
        return Outcome("traceback", proc.err.strip().splitlines()[-1][:300])
    if proc.rc == 130 and lines != ["padiff-trace: interrupted"]:
        return Outcome("wrong", f"exit 130 with {len(lines)} line(s): {' | '.join(lines)[:300]}")
    if proc.rc not in (130, -signal.SIGINT, 0, 1):
        return Outcome("wrong", f"exit {proc.rc}: {lines[:1]}")
    bad = None
    if what == "compare":
        bad = report_problem(report, [ctx.old, ctx.new])
    if what == "record" and shards(trace):
        bad = partial_problem(trace, ctx.reference(TORCH_SPEC)[1])
        if bad is None and proc.rc == 130:  # complete when the interrupt came after the last write
            info = cli("info", trace)
            if "INCOMPLETE" in info.out and "interrupted (Ctrl-C)" not in info.out:
                bad = Outcome("wrong", f"{trace}: info does not say it was interrupted: {info.out[:300]}")
    return bad or Outcome("detected" if proc.rc == 130 else "no effect", f"exit {proc.rc} after {delay:.2f} s")


# ---------------------------------------------------------------------- the plan
def plan(ctx: Context, quick: bool, nobody: bool) -> Iterator[Fault]:
    rng = ctx.rng
    specs = [TORCH_SPEC] if quick else [TORCH_SPEC, PADDLE_SPEC]
    for spec in specs:
        shards_ref = ctx.reference(spec)[2]
        for _ in range(2 if quick else 6 if spec == TORCH_SPEC else 3):
            k, delay = int(rng.integers(1, shards_ref)), float(rng.uniform(0, 0.03))
            yield "kill-record", f"{spec.name}: SIGKILL after shard {k} + {delay * 1e3:.0f} ms", \
                lambda c, s=spec, k=k, d=delay: kill_record(c, s, k, d)
    for i in range(3 if quick else 10):
        when = None if i % 2 else float(rng.uniform(0.05, 1.5))
        delay = float(rng.uniform(0, 0.02))
        text = f"{when:.2f} s after the start" if when is not None else f"{delay * 1e3:.0f} ms into writing"
        yield "kill-compare", f"SIGKILL compare --report {text}", lambda c, w=when, d=delay: kill_compare(c, w, d)
    yield "disk-full", f"record {specs[0].name} on a 3 MB tmpfs with nothing free", \
        lambda c, s=specs[0]: disk_full_record(c, s, 0)
    for spec in specs:
        for _ in range(1 if quick else 3):
            leave = int(rng.integers(0, 3 << 20))
            yield "disk-full", f"record {spec.name} on a 3 MB tmpfs, {leave >> 10} KB free", \
                lambda c, s=spec, n=leave: disk_full_record(c, s, n)
    for with_old in (True, False):
        for _ in range(1 if quick else 2):
            leave = int(rng.integers(0, 1 << 19))
            yield "disk-full", f"compare --report on a full tmpfs ({leave >> 10} KB free, old report: {with_old})", \
                lambda c, o=with_old, n=leave: disk_full_report(c, o, n)
    for what in ("record", "report", "run"):
        yield "read-only", f"{what} into a read-only mount", lambda c, w=what: read_only(c, w)
    for what, span in (("info", 0.6), ("compare", 1.5), ("record", 6.0)):
        for _ in range(2 if quick else 8):
            delay = float(rng.uniform(0.05, span))
            yield "interrupt", f"SIGINT {what} {delay:.2f} s after its start", \
                lambda c, w=what, t=delay: interrupt(c, w, t)
    for name in REPORT_FILES[:1] if quick else REPORT_FILES:
        yield "report-rename", f"compare --report, {name} a directory", lambda c, n=name: report_in_the_way(c, n)
    for who in ("another host", "a gone writer") if quick else _OWNERS:
        yield "namespaces", f"compare --report beside temporaries of {who}", lambda c, w=who: foreign_temporaries(c, w)
    if not quick:
        yield "namespaces", "two compares at once, one in its own PID namespace", concurrent_namespaces
    if nobody:
        yield "report-rename", "compare --report as nobody over root's report in sticky directories", report_sticky
    if not nobody:
        return
    for cmd in ("info", "ls", "check", "compare"):
        yield "permission", f"{cmd} as nobody, a shard unreadable", lambda c, x=cmd: permission(c, f"unreadable-shard:{x}")
    for cmd in ("info", "ls"):
        yield "permission", f"{cmd} as nobody, the trace directory unlistable", lambda c, x=cmd: permission(c, f"unlistable:{x}")
    for what in ("record", "report", "run"):
        yield "permission", f"{what} as nobody into a directory it may not write", lambda c, w=what: permission(c, w)
    yield "permission", "ls DIR as nobody, a trace directory in it unlistable", unlistable_in_catalog
    yield "permission", "record as nobody, a spec file it may not read", lambda c: permission(c, "spec")
    if not quick:
        yield "permission", "record --inputs-from as nobody, a shard unreadable", lambda c: permission(c, "inputs-from")
