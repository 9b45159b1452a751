"""Options declared once (``padiff_trace.options``): one ``option(...)`` field is a flag with its
help and choices, a keyword, a job-file key and a checked value — nothing else to edit.

``RecordOptions`` (recorder) and ``CompareOptions`` (analyzer) are the two declarations; the
flags of ``record``, ``compare`` and ``run``, the keywords of ``analyzer.compare`` and
``pipeline.run``'s ``compare=`` and the PaDiff option rows all come from them. ``run`` refuses
a bad flag before anything is created or recorded (a real ``padiff-trace run`` subprocess).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, fields
from pathlib import Path

import pytest
from padiff_trace.analyzer import MODES, CompareOptions
from test_analyzer_helpers import toy_model

from padiff_trace import UserError, analyzer, pipeline, recorder
from padiff_trace.cli import build_parser
from padiff_trace.cli._record import RUN_SETS, add_option_flags, option_values
from padiff_trace.options import (
    OptionValueError,
    build_options,
    check_options,
    option,
    option_fields,
    parse_size,
    parse_tag,
)
from padiff_trace.pipeline._padiff_options import OPTIONS, AutoDiffSettings, parse_options

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SIMPLE_A, SIMPLE_B = EXAMPLES / "simple_paddle.py", EXAMPLES / "simple_torch.py"
WIDE = {"COLUMNS": "1000"}  # argparse wraps help at the terminal's width: one line per flag here


def _flat(text: str) -> str:
    return " ".join(text.split())


def _help_of(parser: argparse.ArgumentParser, *argv: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.raises(SystemExit) as done:
        parser.parse_args([*argv, "--help"])
    assert done.value.code == 0
    return _flat(buf.getvalue())


# ------------------------------------------------------------------ the core machinery
def _positive(v: object) -> str | None:
    return None if isinstance(v, int) and v > 0 else "expected an integer > 0"


@dataclass(frozen=True)
class Knobs:
    """A declaration made only here: every shape of option, on no class of the project."""

    colour: str = option("red", choices=("red", "blue"), help="the colour of the knob")
    count: int = option(1, metavar="N", check=_positive, help="how many knobs")
    size: int | None = option(None, metavar="SIZE", parse=parse_size, help="how large")
    loud: bool = option(False, help="make noise")
    names: tuple[str, ...] = option((), flag="--name", metavar="NAME", choices=("a", "b", "c"), help="names (repeatable)")
    labels: dict[str, str] = option(default_factory=dict, flag="--label", metavar="K=V", help="labels (repeatable)")  # noqa: RUF009
    note: str = "not an option"  # a plain field: a keyword, never a flag

    def __post_init__(self) -> None:
        check_options(self)


def test_a_declaration_is_a_parser_a_keyword_set_and_a_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")
    parser = argparse.ArgumentParser(prog="knobs")
    add_option_flags(parser, Knobs)
    text = _help_of(parser)
    for o in option_fields(Knobs):
        assert o.flag in text and o.help in text, o.name
    assert "--colour {red,blue}" in text and "--count N" in text and "--name NAME" in text and "--loud" in text
    assert "--note" not in text  # a field without option() is no flag

    args = parser.parse_args(["--colour", "blue", "--count", "3", "--size", "2KiB", "--loud", "--name", "a", "--name", "c",
                              "--label", "k=v"])
    knobs = build_options(Knobs, option_values(Knobs, args))
    assert knobs == Knobs(colour="blue", count=3, size=2048, loud=True, names=("a", "c"), labels={"k": "v"})
    assert build_options(Knobs, option_values(Knobs, parser.parse_args([]))) == Knobs()  # the declared defaults
    # round trip through JSON (what a job file does): lists come back as tuples
    doc = json.loads(json.dumps({f.name: getattr(knobs, f.name) for f in fields(knobs)}))
    assert build_options(Knobs, doc) == knobs

    # argparse refuses what the declaration's choices and parser refuse
    for bad in (["--colour", "green"], ["--name", "z"], ["--size", "lots"], ["--count", "x"]):
        with pytest.raises(SystemExit) as exited:
            parser.parse_args(bad)
        assert exited.value.code == 2, bad
    # the check: in Python words for the API, in flags for the command line
    with pytest.raises(OptionValueError) as err:
        Knobs(count=0)
    assert str(err.value) == "count=0: expected an integer > 0" and err.value.cli_text() == "--count 0: expected an integer > 0"
    with pytest.raises(OptionValueError, match=r"names='z': expected one of a, b, c"):
        Knobs(names=("a", "z"))
    assert isinstance(err.value, UserError)
    with pytest.raises(TypeError, match=r"unknown knob option\(s\) colur; known: colour, count"):
        build_options(Knobs, {"colur": "red"}, error=TypeError, what="knob")


def test_one_more_field_is_one_more_compare_flag_of_compare_and_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """What adding a compare option takes: the field. The flag (help, choices), its value in
    the options built from the parsed flags, and the keyword follow."""
    monkeypatch.setenv("COLUMNS", "1000")

    @dataclass(frozen=True)
    class MoreCompare(CompareOptions):
        patience: str = option("some", choices=("none", "some", "all"), help="a compare knob only this test declares")

    for exclude in ((), RUN_SETS):  # as compare makes its flags, as run does
        parser = argparse.ArgumentParser(prog="x")
        add_option_flags(parser, MoreCompare, exclude=exclude)
        text = _help_of(parser)
        assert "--patience {none,some,all} a compare knob only this test declares" in text
        args = parser.parse_args(["--patience", "all", "--mode", "strict", "--atol=1e-3"])
        opts = build_options(MoreCompare, option_values(MoreCompare, args, exclude=exclude))
        assert (opts.patience, opts.mode, opts.atol) == ("all", "strict", 1e-3)
        assert build_options(MoreCompare, opts.to_dict()) == opts  # round trip
    with pytest.raises(OptionValueError, match="patience='most'"):
        MoreCompare(patience="most")  # CompareOptions' own check covers the new field too


# ------------------------------------------------------------------ CompareOptions
def test_compare_options_are_declared_once() -> None:
    declared = {o.name: o for o in option_fields(CompareOptions)}
    assert declared["mode"].choices == tuple(MODES)  # the verdict table's modes, nothing restated
    assert all(m.description in declared["mode"].help for m in MODES.values())
    assert {"mapping", "mode", "atol", "rtol", "quiet", "allow_partial", "reference", "reference_b"} <= set(declared)
    # compare(**kw) accepts exactly the fields: the TypeError lists them
    with pytest.raises(TypeError, match="unknown compare option") as err:
        analyzer.compare("a", "b", tolerance=1)
    known = re.search(r"known: (.*)$", str(err.value))
    assert known is not None and set(known.group(1).split(", ")) == {f.name for f in fields(CompareOptions)}
    with pytest.raises(TypeError, match="must be a CompareOptions"):
        analyzer.compare("a", "b", {"mode": "strict"})  # type: ignore[arg-type]
    # the checks, with the words each caller reads
    with pytest.raises(OptionValueError, match="unknown compare mode; expected one of mean, strict, rel-l2"):
        CompareOptions(mode="loose")
    for bad in (-1.0, float("nan"), float("inf"), True, "1e-3"):
        with pytest.raises(OptionValueError) as e:
            CompareOptions(atol=bad)  # type: ignore[arg-type]
        assert e.value.problem == "expected a finite number >= 0"
    assert CompareOptions(rtol=0).rtol == 0 and CompareOptions(quiet=True).show_progress is False
    assert CompareOptions(quiet=True, progress=True).show_progress is True and CompareOptions().show_progress is None


def test_compare_takes_the_options_object_or_its_fields(tmp_path: Path) -> None:
    a = toy_model(tmp_path / "a", "paddle", noise=1e-4)
    b = toy_model(tmp_path / "b", "torch", noise=1e-4)
    loose = CompareOptions(mode="rel-l2", rtol=1e-3, quiet=True)
    r = analyzer.compare(a, b, loose)
    assert (r.mode, r.rtol, r.exit_code) == ("rel-l2", 1e-3, 0)
    assert analyzer.compare(a, b, **loose.to_dict()).exit_code == 0  # the same, as keywords
    r = analyzer.compare(a, b, loose, mode="strict", atol=0.0, rtol=0.0)  # keywords over the object's fields
    assert (r.mode, r.atol, r.exit_code) == ("strict", 0.0, 1)


def _cli(*argv: object, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **WIDE}
    return subprocess.run([sys.executable, "-m", "padiff_trace", *map(str, argv)], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def test_compare_and_run_help_show_the_compare_flags() -> None:
    """``padiff-trace compare --help`` and ``run --help``: every compare option with its help
    (run: all but those it sets itself), the verdict modes as choices."""
    modes = "{" + ",".join(MODES) + "}"
    declared = option_fields(CompareOptions)
    for command in ("compare", "run"):
        proc = _cli(command, "--help")
        assert proc.returncode == 0, proc.stderr
        text = _flat(proc.stdout)
        assert f"--mode {modes}" in text, command
        for o in declared:
            shown = not (command == "run" and o.name in RUN_SETS)
            assert (_flat(o.help) in text) == shown or o.name == "mapping", (command, o.name)
            if shown:
                assert o.flag in text, (command, o.flag)
        for flag in ("--atol", "--rtol", "--mode"):
            o = next(x for x in declared if x.flag == flag)
            assert re.search(re.escape(flag) + r" \S+ " + re.escape(_flat(o.help)), text), (command, flag)
    # the parser in-process says the same (no stale flags on either command)
    parser = build_parser()
    for command in ("compare", "run"):
        sub = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
        flags = {s for a in sub._actions for s in a.option_strings}
        assert {"--atol", "--rtol", "--mode", "--allow-partial"} <= flags
    assert "--reference" not in {s for a in parser._subparsers._group_actions[0].choices["run"]._actions  # type: ignore[union-attr]
                                 for s in a.option_strings}


# ------------------------------------------------------------------ run: everything checked first
@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (("--mode", "bogus"), "argument --mode: invalid choice: 'bogus'"),
        (("--atol=-1",), "padiff-trace: error: --atol -1.0: expected a finite number >= 0"),
        (("--rtol", "nan"), "padiff-trace: error: --rtol nan: expected a finite number >= 0"),
        (("--phase", "sideways"), "argument --phase: invalid choice: 'sideways'"),
        (("--every", "0"), "padiff-trace: error: every=0: must be >= 1"),
        (("--mapping", "no-such-mapping.json"), "no-such-mapping.json: cannot read mapping file"),
    ],
    ids=["mode", "atol", "rtol", "phase", "every", "mapping"],
)
def test_run_refuses_a_bad_flag_before_recording(tmp_path: Path, flags: tuple[str, ...], says: str) -> None:
    out = tmp_path / "out"
    proc = _cli("run", SIMPLE_A, SIMPLE_B, "--out", out, *flags)
    assert proc.returncode == 2, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if "error:" in ln]
    assert len(errors) == 1 and says in errors[0], proc.stderr  # one line (argparse's: after its usage lines)
    assert proc.stderr.splitlines()[-1] == errors[0]  # no traceback, nothing after it
    assert not out.exists()  # no trace directory, no job file: no child was started
    assert "recording" not in proc.stdout


def test_run_refuses_a_missing_spec_before_recording_the_other(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _cli("run", SIMPLE_A, tmp_path / "no_such_spec.py", "--out", out)
    assert proc.returncode == 2 and proc.stderr.strip().endswith("no_such_spec.py: no such spec file"), proc.stderr
    assert not out.exists()


def test_pipeline_run_checks_its_options_first(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(OptionValueError, match="dtype='float8'"):
        pipeline.run(SIMPLE_A, SIMPLE_B, out, dtype="float8")
    with pytest.raises(UserError, match="referee=True records the float64 references itself"):
        pipeline.run(SIMPLE_A, SIMPLE_B, out, referee=True, compare=CompareOptions(reference="r.trace"))
    with pytest.raises(TypeError, match="CompareOptions"):
        pipeline.run(SIMPLE_A, SIMPLE_B, out, compare={"mode": "strict"})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pipeline.run(SIMPLE_A, SIMPLE_B, out, atol=1e-3)  # type: ignore[call-arg]  # compare=CompareOptions(atol=...)
    assert not out.exists()


def test_pipeline_run_compares_with_the_given_options(tmp_path: Path) -> None:
    """Real children, real compare: ``compare=`` reaches the comparison whole."""
    opts = CompareOptions(mode="strict", atol=1e-3, rtol=1e-3, allow_partial=True)
    result = pipeline.run(SIMPLE_A, SIMPLE_B, tmp_path, compare=opts, progress=lambda _line: None)
    r = result.report
    assert (r.mode, r.atol, r.rtol, r.allow_partial) == ("strict", 1e-3, 1e-3, True) and result.exit_code == 0
    doc = json.loads((result.report_dir / "report.json").read_text())
    assert doc["options"] == {"mode": "strict", "atol": 1e-3, "rtol": 1e-3}, doc.get("options")


def test_run_flags_become_compare_options(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``run``'s compare flags reach ``pipeline.run`` as one ``CompareOptions`` (no child started:
    ``pipeline.run`` is replaced)."""
    seen: dict[str, object] = {}

    def fake_run(*args: object, **kw: object) -> None:
        seen.update(kw)
        raise UserError("stop here")

    monkeypatch.setattr(pipeline, "run", fake_run)
    parser = build_parser()
    args = parser.parse_args(["run", "a.py", "b.py", "--out", str(tmp_path), "--mode", "strict", "--atol", "1e-4",
                              "--allow-partial", "--mapping", "m.json", "--stats-only"])
    with pytest.raises(UserError, match="stop here"):
        args.handler(args)
    assert seen["compare"] == CompareOptions(mode="strict", atol=1e-4, allow_partial=True)
    assert seen["mapping"] == "m.json" and seen["record"] == recorder.RecordOptions(stats_only=True)


# ------------------------------------------------------------------ PaDiff's names for our options
def test_padiff_rows_are_made_from_the_declarations() -> None:
    declared = {o.name: o for o in option_fields(CompareOptions)}
    for padiff_name, ours in (("atol", "atol"), ("rtol", "rtol"), ("compare_mode", "mode")):
        row = OPTIONS[padiff_name]
        assert row.field == ours and declared[ours].flag in row.here
    for mode in MODES:  # every verdict mode is a PaDiff compare_mode at once
        assert parse_options({"compare_mode": mode}, {}, AutoDiffSettings()).mode == mode
    settings = parse_options(None, {"atol": 0, "rtol": 1e-7}, AutoDiffSettings())
    assert (settings.atol, settings.rtol) == (0.0, 1e-7) and isinstance(settings.atol, float)
    with pytest.raises(UserError, match=r"^option rtol=-1: expected a finite number >= 0$"):
        parse_options({"rtol": -1}, {}, AutoDiffSettings())


# ------------------------------------------------------------------ the recorder's names still work
def test_the_recorder_re_exports_the_core_machinery() -> None:
    from padiff_trace.options import OptionField

    assert recorder.option is option and recorder.option_fields is option_fields and recorder.OptionField is OptionField
    assert (parse_size("64MB"), parse_tag("k=v")) == (64 << 20, ("k", "v"))
    with pytest.raises(OptionValueError, match=r"compression='zip': expected one of gzip, lzf"):
        recorder.RecordOptions(compression="zip")
    with pytest.raises(UserError, match="unknown recording option"):
        recorder.RecordOptions.from_dict({"no_such": 1})
    assert dataclasses.is_dataclass(CompareOptions)
