"""The real pairs as a markdown table: each family clean and with each planted bug.

For every case, ``padiff-trace run <family>_paddle.py <family>_torch.py`` as a user types it
(``PADIFF_BUG`` set for a bug; each spec plants only its own side's bugs), then per row: the
exit code, the module the first divergence was named at on each side
(``first_divergence.located``, else the first differing pair's modules), whether that is what
``<family>_truth.json`` says (clean: exit 0; bug: exit 1 and both modules exactly the
truth's), and the wall time of the run (both recordings and the comparison).

    python tests/real_pairs/table.py                 # all families, runs under a temp dir
    python tests/real_pairs/table.py gpt llama --out runs/table
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
logger = logging.getLogger("real_pairs.table")


@dataclass(frozen=True)
class Row:
    family: str
    case: str  # "clean" or the bug's name
    exit_code: int
    module_a: str
    module_b: str
    ok: bool
    wall_s: float
    note: str = ""


def families() -> list[str]:
    return sorted(p.name.removesuffix("_truth.json") for p in HERE.glob("*_truth.json"))


def truth(family: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HERE / f"{family}_truth.json").read_text())
    return data


def run_case(family: str, bug: str, out: Path) -> Row:
    """One ``padiff-trace run`` and its row."""
    env = dict(os.environ, PADIFF_BUG=bug)
    cmd = [sys.executable, "-m", "padiff_trace", "run", str(HERE / f"{family}_paddle.py"),
           str(HERE / f"{family}_torch.py"), "--out", str(out), "--force"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - t0
    case = bug or "clean"
    report_file = out / "report" / "report.json"
    if proc.returncode not in (0, 1) or not report_file.exists():
        last = proc.stderr.strip().splitlines()[-1:] or ["no report"]
        return Row(family, case, proc.returncode, "-", "-", False, wall, last[0][:80])
    report = json.loads(report_file.read_text())
    mod_a, mod_b = _named(report)
    if not bug:
        return Row(family, case, proc.returncode, mod_a, mod_b, proc.returncode == 0, wall)
    spec = truth(family)["bugs"][bug]
    ok = proc.returncode == 1 and (mod_a, mod_b) == (spec["paddle_module"], spec["torch_module"])
    note = "" if ok else f"truth: {spec['paddle_module']} / {spec['torch_module']}"
    return Row(family, case, proc.returncode, mod_a, mod_b, ok, wall, note)


def _named(report: dict[str, Any]) -> tuple[str, str]:
    d = report.get("first_divergence")
    if d is None:
        return "-", "-"
    located = d.get("located")
    if located is not None:
        return located["a"]["module"] or "<root>", located["b"]["module"] or "<root>"
    pair = next(p for p in report["pairs"] + report["weights"] + report["param_grads"] if p["index"] == d["index"])
    return pair["a"]["module"] or "<root>", pair["b"]["module"] or "<root>"


def markdown(rows: list[Row]) -> str:
    lines = ["| family | case | exit | A (paddle) | B (torch) | vs truth | wall s |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = "pass" if r.ok else f"FAIL ({r.note})" if r.note else "FAIL"
        lines.append(f"| {r.family} | {r.case} | {r.exit_code} | `{r.module_a}` | `{r.module_b}` | {verdict} | {r.wall_s:.1f} |")
    passed = sum(r.ok for r in rows)
    lines.append("")
    lines.append(f"{passed} of {len(rows)} cases as the truth says; total wall {sum(r.wall_s for r in rows):.0f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("families", nargs="*", help="families to run (default: all)")
    ap.add_argument("--out", type=Path, help="where the runs go (default: a temporary directory)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    chosen = args.families or families()
    with tempfile.TemporaryDirectory(prefix="padiff-table-") as tmp:
        root = args.out or Path(tmp)
        rows: list[Row] = []
        for fam in chosen:
            for bug in ["", *truth(fam)["bugs"]]:
                row = run_case(fam, bug, root / f"{fam}-{bug or 'clean'}")
                logger.info("%s %s: exit %d, %s / %s, %s, %.1f s", fam, row.case, row.exit_code, row.module_a,
                            row.module_b, "pass" if row.ok else "FAIL", row.wall_s)
                rows.append(row)
        sys.stdout.write(markdown(rows) + "\n")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
