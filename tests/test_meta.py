"""Root metadata stays relocatable: no absolute path from the command line ends up in a trace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_command_line_has_no_absolute_paths(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "dir" / "t.trace"
    code = (
        "import sys, numpy as np\n"
        "from padiff_trace import TraceWriter, RecordHeader, Kind, Phase\n"
        "with TraceWriter(sys.argv[2]) as w:\n"
        "    w.append(RecordHeader(0, Phase.FORWARD, Kind.PROBE), np.zeros(2))\n"
    )
    script = tmp_path / "rec.py"
    script.write_text(code)
    subprocess.run([sys.executable, str(script), "--out", str(out)], check=True, cwd=tmp_path / "..")
    data = b"".join(p.read_bytes() for p in out.glob("shard-*.h5"))
    assert str(tmp_path).encode() not in data
    from padiff_trace import open_trace

    with open_trace(out) as tr:
        cmd = tr.meta["command"]
    assert cmd.startswith("rec.py --out ") and cmd.endswith("deep/dir/t.trace"), cmd
