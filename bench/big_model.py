"""Scale benchmark (issue 5): a Paddle model and its Torch twin of N GB of weights each,
recorded in two processes (Torch replaying Paddle's inputs and weights from the trace),
then compared. Prints wall time and peak RSS per stage and the trace sizes.

    python bench/big_model.py --gb 6 --out /tmp/big

The models are pre-norm TransformerEncoder stacks (the frameworks' own layers) with
d_model=D and ffn 4*D; 12*D^2 parameters per layer; the layer count is chosen to reach
--gb of float32 weights. Random init, no downloads.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

PADDLE_SPEC = '''
import os
import numpy as np
import paddle

D, L, T = (int(os.environ[k]) for k in ("BIG_D", "BIG_LAYERS", "BIG_TOKENS"))

def model():
    paddle.seed(0)
    layer = paddle.nn.TransformerEncoderLayer(D, D // 128, 4 * D, dropout=0.0, normalize_before=True)
    return paddle.nn.TransformerEncoder(layer, L)

def inputs():
    x = np.random.default_rng(0).standard_normal((2, T // 2, D)).astype("float32")
    return (paddle.to_tensor(x),)
'''

TORCH_SPEC = '''
import os
import torch

D, L, T = (int(os.environ[k]) for k in ("BIG_D", "BIG_LAYERS", "BIG_TOKENS"))

def model():
    layer = torch.nn.TransformerEncoderLayer(D, D // 128, 4 * D, dropout=0.0, norm_first=True, batch_first=True)
    return torch.nn.TransformerEncoder(layer, L, enable_nested_tensor=False)

def inputs():
    return (torch.zeros(2, T // 2, D),)
'''

BARE = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("spec", sys.argv[1]); mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
m = mod.model(); args = mod.inputs()
out = m(*args); out.mean().backward()
"""

_TIME = "/usr/bin/time"


def _run(label: str, argv: list[str], env: dict[str, str]) -> dict[str, float]:
    cmd = [_TIME, "-f", "__time__ %e %M", *argv] if os.path.exists(_TIME) else argv
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    tail = (proc.stdout + proc.stderr).strip().splitlines()
    if proc.returncode not in (0, 1):
        print("\n".join(tail[-20:]), file=sys.stderr)
        raise SystemExit(f"{label} failed with exit {proc.returncode}")
    rss = float("nan")
    for line in tail:
        m = re.match(r"__time__ ([\d.]+) (\d+)", line)
        if m:
            rss = int(m.group(2)) / 1024
    print(f"  {label:<10} {wall:8.1f} s   peak RSS {rss:8.0f} MiB")
    return {"wall": wall, "rss": rss}


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, default=6.0, help="float32 weight size per model, GiB")
    ap.add_argument("--d", type=int, default=2048, help="d_model")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--out", default="/tmp/padiff-big")
    ap.add_argument("--keep", action="store_true", help="keep the traces")
    ap.add_argument("--bare", action="store_true", help="also run both models without padiff-trace")
    ap.add_argument("--record-flag", action="append", default=[], help="extra flag for both recorders")
    a = ap.parse_args()

    per_layer = 12 * a.d * a.d * 4
    layers = max(1, round(a.gb * 2**30 / per_layer))
    out = Path(a.out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / "big_paddle.py").write_text(PADDLE_SPEC)
    (out / "big_torch.py").write_text(TORCH_SPEC)
    env = dict(os.environ, BIG_D=str(a.d), BIG_LAYERS=str(layers), BIG_TOKENS=str(a.tokens))
    py = [sys.executable, "-m", "padiff_trace"]
    ta, tb = out / "paddle.trace", out / "torch.trace"
    print(f"model: {layers} x TransformerEncoderLayer(d={a.d}, ffn={4 * a.d}) = {layers * per_layer / 2**30:.2f} GiB float32 per framework")
    res = {}
    if a.bare:
        res["bare paddle"] = _run("bare paddle", [sys.executable, "-c", BARE, str(out / "big_paddle.py")], env)
        res["bare torch"] = _run("bare torch", [sys.executable, "-c", BARE, str(out / "big_torch.py")], env)
    res |= {
        "paddle": _run("paddle", [*py, "record", str(out / "big_paddle.py"), "--out", str(ta), *a.record_flag], env),
        "torch": _run(
            "torch",
            [*py, "record", str(out / "big_torch.py"), "--out", str(tb), "--inputs-from", str(ta), "--weights-from", str(ta), *a.record_flag],
            env,
        ),
        "compare": _run("compare", [*py, "compare", str(ta), str(tb), "--report", str(out / "report"), "--quiet"], env),
    }
    sa, sb = _du(ta), _du(tb)
    weights = layers * per_layer
    print(f"  trace sizes: paddle {sa / 2**30:.2f} GiB, torch {sb / 2**30:.2f} GiB")
    for k in ("paddle", "torch"):
        line = f"  {k} recorder peak RSS / weight bytes = {res[k]['rss'] * 2**20 / weights:.2f}"
        if f"bare {k}" in res:
            line += f"; / bare {k} peak RSS = {res[k]['rss'] / res[f'bare {k}']['rss']:.2f}"
            line += f"; wall / bare = {res[k]['wall'] / res[f'bare {k}']['wall']:.2f}"
        print(line)
    print(f"  compare: {(sa + sb) / 2**20 / res['compare']['wall']:.0f} MiB/s of trace read")
    if not a.keep:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
