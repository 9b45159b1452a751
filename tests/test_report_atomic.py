"""Reports all-or-nothing (issue 26): a report directory's files are replaced together, a failure
anywhere leaves the previous report exactly as it was, and temporaries are removed only when their
writer is provably gone (owner files: host, boot id, PID namespace, PID and start time), never
another live run's. Real files, real directories, real failures; no mocks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

import pytest
from fault_process import dead_pid, here, owner_file, staged_dir
from fault_process import tree as snapshot
from padiff_trace.analyzer.reporting import _atomic, _formats
from test_analyzer_helpers import toy_model

from padiff_trace import TraceWriteError, analyzer

REPORT_FILES = ("report.txt", "report.json", "pairs.csv", "report.html")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    d = tmp_path_factory.mktemp("atomic")
    return toy_model(d / "a", "paddle", ln_eps=1e-1), toy_model(d / "b", "torch"), toy_model(d / "c", "paddle")


@pytest.fixture(scope="module")
def old(traces: tuple[Path, Path, Path]) -> analyzer.Report:
    """The report already on disk: diverged."""
    return analyzer.compare(traces[0], traces[1])


@pytest.fixture(scope="module")
def new(traces: tuple[Path, Path, Path]) -> analyzer.Report:
    """The report written over it: aligned, so every file differs from the old one."""
    return analyzer.compare(traces[2], traces[1])


def temporaries(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if ".padiff-" in p.name or p.name.endswith(".tmp"))


def old_report_with_a_directory_in_the_way(old: analyzer.Report, rep: Path) -> None:
    """The old report, then its report.html turned into a non-empty directory: the last file the
    writer replaces cannot be replaced, after the three before it could."""
    old.write(rep)
    (rep / "notes.txt").write_text("mine\n")
    (rep / "report.html").unlink()
    (rep / "report.html").mkdir()
    (rep / "report.html" / "keep.txt").write_text("kept\n")


def test_a_failure_while_swapping_leaves_the_previous_report_byte_for_byte(
        old: analyzer.Report, new: analyzer.Report, tmp_path: Path) -> None:
    rep = tmp_path / "rep"
    old_report_with_a_directory_in_the_way(old, rep)
    before, around = snapshot(rep), temporaries(tmp_path)
    with pytest.raises(TraceWriteError) as err:
        new.write(rep)
    assert snapshot(rep) == before  # the old code had replaced report.txt, report.json and pairs.csv
    assert temporaries(tmp_path) == around == []
    assert str(err.value).startswith(f"{rep / 'report.html'}: is a directory where the report writes a file; move it away")


def test_a_failure_in_place_rolls_back_every_file_already_replaced(
        old: analyzer.Report, new: analyzer.Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report directory is the current directory: it cannot be swapped, so the files are
    replaced one by one in place, and the failure on report.html puts the three before it back."""
    rep = tmp_path / "rep"
    old_report_with_a_directory_in_the_way(old, rep)
    before = snapshot(rep)
    monkeypatch.chdir(rep)
    with pytest.raises(TraceWriteError) as err:
        new.write(".")
    assert snapshot(rep) == before and temporaries(rep) == []
    assert str(err.value).startswith("report.html: is a directory where the report writes a file")


def read_only_binds(tmp: Path) -> bool:
    """Whether this process is refused a write into a read-only directory (root is not)."""
    probe = tmp / "probe"
    probe.mkdir(mode=0o555)
    try:
        (probe / "x").touch()
    except PermissionError:
        return True
    finally:
        probe.chmod(0o755)
    return False


def test_a_parent_made_read_only_mid_write_leaves_the_previous_report(
        old: analyzer.Report, new: analyzer.Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not read_only_binds(tmp_path):
        pytest.skip("this user (root) may write into a read-only directory: the failure cannot be provoked")
    parent = tmp_path / "parent"
    rep = parent / "rep"
    old.write(rep)
    before = snapshot(rep)

    def lock_parent(report: analyzer.Report, f: TextIO) -> None:  # runs once the new directory exists
        parent.chmod(0o555)

    monkeypatch.setitem(_formats.FORMATS, "lock", _formats.ReportFormat("lock", "lock.txt", lock_parent, "", default=False))
    try:
        with pytest.raises(TraceWriteError) as err:
            new.write(rep, formats=["txt", "lock", "json"])
        assert snapshot(rep) == before
        assert "Permission denied" in str(err.value)
    finally:
        parent.chmod(0o755)


def test_the_cli_names_the_directory_in_the_way_in_one_line(
        old: analyzer.Report, traces: tuple[Path, Path, Path], tmp_path: Path) -> None:
    rep = tmp_path / "rep"
    old_report_with_a_directory_in_the_way(old, rep)
    before = snapshot(rep)
    proc = subprocess.run([sys.executable, "-m", "padiff_trace", "compare", str(traces[2]), str(traces[1]), "--report", str(rep)],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert snapshot(rep) == before
    assert proc.stderr.strip().splitlines() == [
        f"padiff-trace: error: {rep / 'report.html'}: is a directory where the report writes a file; move it away or "
        "choose another --report directory (the previous report is unchanged)"]


def test_a_write_replaces_every_file_together_and_keeps_the_rest(
        old: analyzer.Report, new: analyzer.Report, tmp_path: Path) -> None:
    versions = {}
    for name, report in (("old", old), ("new", new)):
        versions[name] = {f: (report.write(tmp_path / name) / f).read_bytes() for f in REPORT_FILES}
    rep = tmp_path / "rep"
    old.write(rep)
    (rep / "notes.txt").write_text("mine\n")
    (rep / "extra").mkdir()
    (rep / "extra" / "x.txt").write_text("x\n")
    rep.chmod(0o750)
    ino, notes_ino = os.stat(rep).st_ino, os.stat(rep / "notes.txt").st_ino

    new.write(rep)
    # one rename brought every file: the report directory is another directory now (the old code
    # renamed file after file inside the same one)
    assert os.stat(rep).st_ino != ino
    assert {f: (rep / f).read_bytes() for f in REPORT_FILES} == versions["new"]
    assert os.stat(rep / "notes.txt").st_ino == notes_ino and (rep / "extra" / "x.txt").read_text() == "x\n"
    assert os.stat(rep).st_mode & 0o777 == 0o750 and temporaries(tmp_path) == [] and temporaries(rep) == []

    # a reader that opens the directory once sees one version whole, never a mix, while writes go on
    seen: list[set[str]] = []
    missing = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                fd = os.open(rep, os.O_RDONLY)
            except FileNotFoundError:
                missing.append(1)
                continue
            try:
                got = {}
                for f in REPORT_FILES:
                    with open(os.open(f, os.O_RDONLY, dir_fd=fd), "rb") as fh:
                        got[f] = fh.read()
            except FileNotFoundError:
                continue  # the old directory being removed after the swap: nothing to judge
            finally:
                os.close(fd)
            seen.append({v for v, files in versions.items() for f in REPORT_FILES if files[f] == got[f]})

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(12):
            (old if i % 2 else new).write(rep)
    finally:
        stop.set()
        reader.join()
    assert seen and all(len(v) == 1 for v in seen), [v for v in seen if len(v) != 1][:3]
    if exchange_supported(tmp_path):
        assert missing == []  # swapped in one step: never a moment without a report directory


def exchange_supported(where: Path) -> bool:
    a, b = where / "swap-a", where / "swap-b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    ok = _atomic._swap_names(a, b)
    assert not ok or ((b / "x").read_text() == "a" and not (a / "x").exists())
    return ok


@pytest.mark.skipif(not Path("/proc/sys/kernel/random/boot_id").exists(), reason="owners are told apart by Linux boot id and PID namespace")
def test_temporaries_of_live_or_foreign_runs_stay_and_gone_ones_of_ours_go(old: analyzer.Report, tmp_path: Path) -> None:
    rep = tmp_path / "rep"
    old.write(rep)
    foreign_host = "a" * 16  # another machine's run: cannot be checked from here
    foreign_ns = "b" * 16  # same host and boot, other PID namespace (another container), its PID unknown here
    live = "c" * 16  # a run of this machine and namespace that still runs (this process, another token)
    gone = "d" * 16  # ours: its PID no longer runs
    reused = "e" * 16  # ours: its PID runs, but started at another time (a reused PID)
    ancient = "f" * 16  # another machine's, older than a day
    owner_file(tmp_path, foreign_host, host="other-host", boot="00000000-0000-0000-0000-000000000000", pid=dead_pid())
    owner_file(tmp_path, foreign_ns, pidns="pid:[1]", pid=dead_pid())
    owner_file(tmp_path, live)
    owner_file(tmp_path, gone, pid=dead_pid())
    owner_file(tmp_path, reused, start=str(int(str(here()["start"])) + 1))
    owner_file(tmp_path, ancient, host="other-host", boot="x")
    dirs = {run: staged_dir(tmp_path, run) for run in (foreign_host, foreign_ns, live, gone, reused, ancient)}
    day_ago = time.time() - 24 * 3600 - 60
    for p in (dirs[ancient], dirs[ancient] / "report.txt", tmp_path / f".padiff-{ancient}.owner.tmp"):
        os.utime(p, (day_ago, day_ago))
    # an in-place write of another container, under way inside the report directory itself
    theirs = rep / f".report.txt.padiff-{foreign_ns}.new.tmp"
    theirs.write_text("their half")
    owner_file(rep, foreign_ns, pidns="pid:[1]", pid=dead_pid())

    old.write(rep)
    for run in (foreign_host, foreign_ns, live):
        assert dirs[run].is_dir() and (tmp_path / f".padiff-{run}.owner.tmp").exists(), run
    for run in (gone, reused, ancient):
        assert not dirs[run].exists() and not (tmp_path / f".padiff-{run}.owner.tmp").exists(), run
    assert theirs.read_text() == "their half"  # kept in the new report directory, by a hard link


def test_an_interrupted_swap_gets_its_report_back(old: analyzer.Report, tmp_path: Path) -> None:
    """A writer killed between its two renames left the report directory aside: the next write
    puts it back first (so what else it held stays), then replaces the report."""
    if not Path("/proc/sys/kernel/random/boot_id").exists():
        pytest.skip("owners are told apart by Linux boot id and PID namespace")
    run = "0123456789abcdef"
    aside = tmp_path / f".rep.padiff-{run}.old.tmp"
    old.write(aside)
    (aside / "notes.txt").write_text("mine\n")
    owner_file(tmp_path, run, pid=dead_pid())
    old.write(tmp_path / "rep")
    assert (tmp_path / "rep" / "notes.txt").read_text() == "mine\n" and temporaries(tmp_path) == []


def test_an_interrupted_in_place_commit_is_rolled_back(old: analyzer.Report, tmp_path: Path) -> None:
    """A writer killed in the middle of an in-place commit: report.txt already new, report.json
    not yet. The next write (of report.json only) rolls report.txt back first."""
    if not Path("/proc/sys/kernel/random/boot_id").exists():
        pytest.skip("owners are told apart by Linux boot id and PID namespace")
    rep = tmp_path / "rep"
    old.write(rep)
    first = (rep / "report.txt").read_bytes()
    run = "fedcba9876543210"
    os.link(rep / "report.txt", rep / f".report.txt.padiff-{run}.old.tmp")
    (rep / "report.txt.new").write_text("half a report")
    os.replace(rep / "report.txt.new", rep / "report.txt")
    pending = rep / f".report.json.padiff-{run}.new.tmp"
    pending.write_text("{}")
    staged = {"report.txt": os.stat(rep / "report.txt").st_ino, "report.json": os.stat(pending).st_ino}
    (rep / f".padiff-{run}.commit.tmp").write_text(json.dumps(staged))
    owner_file(rep, run, pid=dead_pid())
    old.write(rep, formats=["json"])
    assert (rep / "report.txt").read_bytes() == first and temporaries(rep) == []
