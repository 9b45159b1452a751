"""Process-level fault injection (issue 15): real ``padiff-trace`` processes, real torch and
paddle models, real signals, full and read-only file systems and forbidden paths.

Run: ``.venv/bin/python tests/fault_process.py [--quick] [--seed N]`` (as root: it mounts
tmpfs file systems and runs some commands as user nobody; kinds it cannot set up are skipped).
``tests/fault_inject.py`` damages trace bytes; this one damages the processes around them:

* ``kill-record``  SIGKILL ``record`` at random moments; then ``check``, ``info``, ``compare``
  on the remains: every record present reads back exactly, the trace says incomplete,
  compare says INCOMPLETE (exit 3), never ALIGNED;
* ``kill-compare`` SIGKILL ``compare --report DIR`` over an old report: each file is the old
  or the new version whole, and the next ``compare --report DIR`` succeeds with no ``.*.tmp``;
* ``disk-full``    a small tmpfs as ``record --out`` (a trace larger than it; failing at
  random points) and as ``--report``: exit 2, one line naming the path and the full disk,
  the flushed records readable, no ``*.part``, the old report whole;
* ``read-only``    ``record --out``, ``compare --report``, ``run --out`` on a read-only mount;
* ``report-rename`` a report file that cannot be replaced: a directory in its place (each
  file), root's report in sticky world-writable directories written as nobody: exit 2, one
  line, the old report and its directory byte for byte, no temporaries;
* ``namespaces``   temporaries of other report writers beside and inside the report (another
  host, another PID namespace, a live writer: kept; a gone writer, a reused PID: removed), and
  two compares at once, one in its own PID namespace (``unshare --pid``);
* ``interrupt``    SIGINT (Ctrl-C) to ``info``, ``compare --report`` and ``record`` at random
  moments from start-up on (counted from when the interpreter, started alike, has imported
  the command line: before that it is Python's own start-up, timed each time): exit 130 with the one line ``padiff-trace: interrupted`` (or the
  command's own result when it finished first), never a traceback; a report whole, old or new;
  an interrupted recording readable, incomplete, with what it holds exact;
* ``permission``   as nobody: an unreadable shard (``info``/``ls``/``check``/``compare``), an
  unlistable trace (alone, and as a row of ``ls DIR``: UNREADABLE, never left out), outputs in
  a directory nobody may not write, a spec file it may not read.

Outcomes: ``detected`` (reported, the rest intact), ``no effect``, or a failure:
``traceback``, ``wrong``, ``crash`` (died by a signal), ``hang``, ``silent loss``,
``wrong blame`` (the tool's own I/O error reported as "the model raised").

This module is the harness: running the CLI (as another user, with a time limit), judging
what a process said and left (``judge_error``, ``partial_problem``, ``report_problem``), the
set-up one run shares (``Context``: reference traces, reports, tmpfs mounts) and the run
itself. The fault kinds and their plan are in ``tests/fault_actions.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from padiff_trace import open_trace

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TORCH_SPEC, PADDLE_SPEC = EXAMPLES / "transformer_torch.py", EXAMPLES / "transformer_paddle.py"
SIMPLE_A, SIMPLE_B = EXAMPLES / "simple_paddle.py", EXAMPLES / "simple_torch.py"
RECORD_ARGS = ("--steps", "2", "--seed", "0", "--flush-records", "40")  # ~3.7 MB, ~14 shards
REPORT_FILES = ("report.txt", "report.json", "pairs.csv", "report.html")
FAILURES = ("traceback", "wrong", "crash", "hang", "silent loss", "wrong blame")
NOBODY = 65534
_NOISE = re.compile(r"\d+%\|.*\| \d|ccache|warnings\.warn\(warning_message\)|^\s*$")  # tqdm bars, paddle's import warning


@dataclass
class Outcome:
    kind: str  # detected | no effect | skipped | one of FAILURES
    note: str = ""


@dataclass
class Proc:
    rc: int | None  # None: it hung and was killed
    out: str
    err: str


# ---------------------------------------------------------------------- processes
def _argv(args: tuple[Any, ...], user: int | None = None, prefix: tuple[str, ...] = ()) -> list[str]:
    # setpriv rather than Popen(user=): it can start this interpreter where the interpreter's
    # own directories are closed to the user (Popen's exec then fails)
    become = [] if user is None else ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"]
    return [*prefix, *become, sys.executable, "-m", "padiff_trace", *map(str, args)]


def start(*args: Any, user: int | None = None, prefix: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    """``padiff-trace ARGS`` as ``user``, behind ``prefix`` (``unshare ...``: in another namespace).
    It gets SIGINT's default action, as from a terminal: a harness started in the background by
    a shell ignores SIGINT, and a child would inherit that (a Python handler is not inherited)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(_argv(args, user, prefix), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, old)


def finish(p: subprocess.Popen[str], timeout: float = 300.0) -> Proc:
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return Proc(None, out, err)
    return Proc(p.returncode, out, err)


def cli(*args: Any, user: int | None = None, timeout: float = 300.0) -> Proc:
    return finish(start(*args, user=user), timeout)


def kill(p: subprocess.Popen[str]) -> Proc:
    """SIGKILL ``p`` (if still running) and collect it."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return finish(p, 60.0)


def error_lines(err: str) -> list[str]:
    return [ln for ln in re.split(r"[\r\n]+", err) if not _NOISE.search(ln)]


def judge_error(proc: Proc, path: Path, *words: str, next_step: bool = True) -> Outcome | None:
    """None when ``proc`` failed as it should: exit 2, one line naming ``path`` with ``words``
    and (``next_step``) what to do, no traceback, not blamed on the model; else the failure."""
    lines = error_lines(proc.err)
    first = lines[0][:300] if lines else ""
    if proc.rc is None:
        return Outcome("hang", first)
    if proc.rc < 0:
        return Outcome("crash", f"died by {signal.Signals(-proc.rc).name}; stderr: {first}")
    if "the model raised" in proc.err:
        return Outcome("wrong blame", first)
    if "Traceback (most recent call last)" in proc.err or "Exception ignored" in proc.err:
        return Outcome("traceback", proc.err.strip().splitlines()[-1][:300])
    if proc.rc != 2:
        return Outcome("wrong", f"exit {proc.rc}, expected 2; stderr: {first}")
    if len(lines) != 1 or not first.startswith("padiff-trace: error: "):
        return Outcome("wrong", f"{len(lines)} error lines: {' | '.join(lines)[:300]}")
    missing = [w for w in (str(path), *words) if w not in first]
    if missing:
        return Outcome("wrong", f"the line lacks {missing}: {first}")
    if next_step and not any(step in first for step in ("choose", "free space", "ask")):
        return Outcome("wrong", f"no next step: {first}")
    return None


# ---------------------------------------------------------------------- traces and reports
def snapshot(path: Path) -> dict[int, tuple[Any, ...]]:
    """What a reader returns for each record: names, kind, dtype, shape, stack, data bytes."""
    with open_trace(path) as tr:
        return {r.seq: (r.step, int(r.phase), int(r.kind), r.module, r.position, r.dtype, r.shape, tuple(r.stack),
                        tr.read(r.seq).tobytes() if r.has_data else None) for r in tr.records()}


def shards(trace: Path) -> list[Path]:
    return sorted(trace.glob("shard-*.h5")) if trace.is_dir() else []


def partial_problem(trace: Path, expected: dict[int, tuple[Any, ...]]) -> Outcome | None:
    """Every record of the (partial) trace equals the reference's record of the same seq."""
    got = snapshot(trace)
    wrong = [s for s, v in got.items() if expected.get(s) != v]
    if wrong:
        return Outcome("wrong", f"{trace}: records {wrong[:5]} differ from the reference")
    if set(got) and max(got) + 1 != len(got):
        return Outcome("silent loss", f"{trace}: holes in the records present: {len(got)} of 0..{max(got)}")
    return None


def read_files(d: Path) -> dict[str, bytes | None]:
    return {f: (d / f).read_bytes() if (d / f).is_file() else None for f in REPORT_FILES}


def temps(d: Path) -> list[str]:
    try:  # a compare may swap the directory away while this looks (Path.glob raises then)
        return sorted(e.name for e in os.scandir(d) if e.name.startswith(".") and e.name.endswith(".tmp"))
    except (FileNotFoundError, NotADirectoryError):
        return []


def report_problem(d: Path, allowed: list[dict[str, bytes | None]]) -> Outcome | None:
    """Each report file in ``d`` is one of the ``allowed`` versions, whole."""
    now = read_files(d)
    for name, data in now.items():
        if all(data != v[name] for v in allowed):
            what = "missing" if data is None else f"{len(data)} bytes, neither the old nor the new version"
            return Outcome("silent loss" if data is None else "wrong", f"{d / name}: {what}")
    if now["report.json"] is not None:
        try:
            json.loads(now["report.json"])
        except ValueError as exc:
            return Outcome("wrong", f"{d / 'report.json'}: not JSON ({exc})")
    if now["report.html"] is not None and not now["report.html"].rstrip().endswith(b"</html>"):
        return Outcome("wrong", f"{d / 'report.html'}: does not end with </html>")
    return None


def tree(d: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every entry under ``d`` (hidden ones too): permissions and, for files, the bytes."""
    out: dict[str, tuple[int, bytes | None]] = {".": (os.lstat(d).st_mode, None)}
    for p in sorted(d.rglob("*")):
        st = os.lstat(p)
        out[str(p.relative_to(d))] = (st.st_mode, p.read_bytes() if p.is_file() and not p.is_symlink() else None)
    return out


# ---------------------------------------------------------------------- report temporaries and their owners
def here() -> dict[str, object]:
    """This process as an owner file names it (read here, not through the code under test)."""
    stat = Path("/proc/self/stat").read_text()
    return {"host": socket.gethostname(), "boot": Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
            "pidns": os.readlink("/proc/self/ns/pid"), "pid": os.getpid(), "start": stat[stat.rindex(")") + 2 :].split()[19]}


def owner_file(directory: Path, run: str, **fields: object) -> Path:
    """The owner file of report writer ``run`` in ``directory``: this process, but for ``fields``."""
    data = {"run": run, **here(), **fields}
    path = directory / f".padiff-{run}.owner.tmp"
    path.write_text(json.dumps(data))
    return path


def dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    return int(proc.stdout)  # that process has exited and was reaped


def staged_dir(parent: Path, run: str) -> Path:
    """A report directory writer ``run`` was staging beside ``parent/rep``."""
    d = parent / f".rep.padiff-{run}.new.tmp"
    d.mkdir()
    (d / "report.txt").write_text("half written")
    return d


def put_report(d: Path, files: dict[str, bytes | None]) -> None:
    d.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        if data is not None:
            (d / name).write_bytes(data)


# ---------------------------------------------------------------------- the set-up of one run
@dataclass
class Context:
    root: Path
    rng: np.random.Generator
    ref: dict[Path, tuple[Path, dict[int, tuple[Any, ...]], int]] = field(default_factory=dict)  # spec -> (trace, records, shards)
    pair: tuple[Path, Path] = (Path(), Path())  # compare A B: the new report
    old: dict[str, bytes | None] = field(default_factory=dict)  # the report of compare B A
    new: dict[str, bytes | None] = field(default_factory=dict)
    new_rc: int = 0
    mounts: list[Path] = field(default_factory=list)
    _n: int = 0

    def scratch(self, name: str) -> Path:
        self._n += 1
        d = self.root / f"{self._n:03d}-{name}"
        d.mkdir()
        return d

    def tmpfs(self, opts: str) -> Path | None:
        where = self.scratch("mnt")
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True, text=True)
        if res.returncode != 0:
            return None
        self.mounts.append(where)
        return where

    def reference(self, spec: Path) -> tuple[Path, dict[int, tuple[Any, ...]], int]:
        if spec not in self.ref:
            trace = self.scratch("ref") / f"{spec.stem}.trace"
            proc = cli("record", spec, "--out", trace, *RECORD_ARGS)
            if proc.rc != 0:
                raise RuntimeError(f"recording the reference {trace} failed: {proc.err[-2000:]}")
            self.ref[spec] = (trace, snapshot(trace), len(shards(trace)))
        return self.ref[spec]

    def reports(self, a: Path, b: Path) -> None:
        """The old report (compare B A) and the new one (compare A B) every report fault uses."""
        self.pair = (a, b)
        for (x, y), attr in (((b, a), "old"), ((a, b), "new")):
            d = self.scratch("report") / "report"
            proc = cli("compare", x, y, "--report", d)
            if proc.rc not in (0, 1):
                raise RuntimeError(f"compare {x} {y} failed: {proc.err[-2000:]}")
            setattr(self, attr, read_files(d))
            self.new_rc = proc.rc
        os.chmod(self.root, 0o755)  # nobody reads the traces too

    def close(self) -> None:
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", str(m)], check=False)


def nobody_can_run() -> bool:
    try:
        return subprocess.run(_argv(("--help",), NOBODY), cwd=ROOT, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


# ---------------------------------------------------------------------- the run
def run(root: Path, quick: bool = False, seed: int = 0, progress: bool = False,
        only: tuple[str, ...] = ()) -> tuple[Counter[str], dict[str, Counter[str]], list[tuple[str, str, Outcome]]]:
    """Run the faults under ``root``; returns (counts by outcome, counts by fault kind and
    outcome, the failures as (kind, description, outcome)). ``only``: these fault kinds."""
    from fault_actions import plan  # here, not at the top: the fault kinds build on this harness

    ctx = Context(root, np.random.default_rng(seed))
    counts: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    bad: list[tuple[str, str, Outcome]] = []
    try:
        os.chmod(root, 0o755)
        a = ctx.reference(TORCH_SPEC)[0]
        b = ctx.reference(PADDLE_SPEC)[0] if not quick else _second_torch(ctx)
        ctx.reports(a, b)
        for kind, text, fault in plan(ctx, quick, nobody_can_run()):
            if only and kind not in only:
                continue
            t0 = time.perf_counter()
            try:
                out = fault(ctx)
            except Exception as exc:  # the harness itself, or an exception a check did not expect
                out = Outcome("traceback", f"{type(exc).__name__}: {exc}"[:300])
            counts[out.kind] += 1
            by_kind.setdefault(kind, Counter())[out.kind] += 1
            if out.kind in FAILURES:
                bad.append((kind, text, out))
            if progress:
                print(f"  {kind:<12} {out.kind:<11} {time.perf_counter() - t0:5.1f} s  {text}: {out.note}", file=sys.stderr, flush=True)
    finally:
        ctx.close()
    return counts, by_kind, bad


def _second_torch(ctx: Context) -> Path:
    """B of the quick run's report pair: the torch spec with another seed (no paddle needed)."""
    trace = ctx.scratch("ref") / "torch-seed1.trace"
    args = [a if a != "0" else "1" for a in RECORD_ARGS]
    proc = cli("record", TORCH_SPEC, "--out", trace, *args)
    if proc.rc != 0:
        raise RuntimeError(f"recording {trace} failed: {proc.err[-2000:]}")
    return trace


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer faults, torch only")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", action="append", default=[], help="only this fault kind (repeatable)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="padiff-process-faults-") as tmp:
        counts, by_kind, bad = run(Path(tmp), args.quick, args.seed, progress=True, only=tuple(args.only))
    tried = sum(counts.values()) - counts["skipped"]
    print(f"faults tried     {tried}" + (f"  ({counts['skipped']} skipped: no tmpfs)" if counts["skipped"] else ""))
    print(f"detected         {counts['detected']}  (reported, the rest intact)")
    print(f"no effect        {counts['no effect']}")
    print(f"failures         {sum(counts[k] for k in FAILURES)}")
    for kind, c in by_kind.items():
        fails = ", ".join(f"{k} {c[k]}" for k in FAILURES if c[k]) or "none"
        print(f"  {kind:<13} tried {sum(c.values()) - c['skipped']:>3}  detected {c['detected']:>3}  "
              f"no effect {c['no effect']:>3}  failures: {fails}")
    print(f"time             {time.perf_counter() - t0:.1f} s")
    for kind, text, out in bad:
        print(f"FAIL {out.kind}: {kind}: {text}: {out.note}")
    return 1 if bad else 0


if __name__ == "__main__":
    # the fault kinds import the harness as ``fault_process``: let them find this very module,
    # not a second copy of it
    sys.modules.setdefault("fault_process", sys.modules[__name__])
    raise SystemExit(main())
