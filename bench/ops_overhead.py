"""Op-level recording overhead (issue 8): bare vs module-level vs op-level recording.

An attention stack written with framework ops (12 blocks of q/k/v Linear, scale,
matmul, softmax, matmul), forward + backward, in one process per framework; each
mode repeated --reps times, medians printed with records/s and slowdown ratios.

    python bench/ops_overhead.py [--framework torch|paddle|both] [--reps 5]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r'''
import sys, time, shutil, statistics
import numpy as np
fw, reps, mode, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
from padiff_trace import recorder
from padiff_trace import open_trace
B, L, D, N = 8, 64, 128, 12
x_np = np.random.default_rng(0).standard_normal((B, L, D)).astype("float32")
if fw == "torch":
    import torch as T
    Base = T.nn.Module
    def lin(): return T.nn.Linear(D, D)
    def attn(q, k, v): return T.matmul(T.softmax(q @ k.transpose(-1, -2) / D ** 0.5, dim=-1), v)
    def tensor(a): return T.from_numpy(a).requires_grad_(True)
else:
    import paddle as T
    Base = T.nn.Layer
    def lin(): return T.nn.Linear(D, D)
    def attn(q, k, v): return T.matmul(T.nn.functional.softmax(T.matmul(q, k, transpose_y=True) / D ** 0.5, axis=-1), v)
    def tensor(a):
        t = T.to_tensor(a); t.stop_gradient = False; return t
class Block(Base):
    def __init__(self):
        super().__init__(); self.q, self.k, self.v = lin(), lin(), lin()
    def forward(self, x):
        return x + attn(self.q(x), self.k(x), self.v(x))
class Net(Base):
    def __init__(self):
        super().__init__()
        self.blocks = (T.nn.ModuleList if fw == "torch" else T.nn.LayerList)([Block() for _ in range(N)])
    def forward(self, x):
        for b in self.blocks: x = b(x)
        return x
m = Net()
def step():
    y = m(tensor(x_np)); (y * y).mean().backward()
step()
times, n = [], 0
for r in range(reps):
    t0 = time.perf_counter()
    if mode == "bare":
        step()
    else:
        with recorder.record(m, out, overwrite=True, ops=(mode == "ops"), weights="none", stats_only=True) as rec:
            step(); rec.step()
    times.append(time.perf_counter() - t0)
    if mode != "bare":
        with open_trace(out) as tr: n = len(tr)
print("RESULT", statistics.median(times), n)
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--framework", default="both", choices=["torch", "paddle", "both"])
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ops-bench-"))
    fws = ["torch", "paddle"] if a.framework == "both" else [a.framework]
    for fw in fws:
        res = {}
        for mode in ("bare", "modules", "ops"):
            proc = subprocess.run([sys.executable, "-c", CHILD, fw, str(a.reps), mode, str(work / f"{fw}-{mode}")],
                                  capture_output=True, text=True)
            line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
            if not line:
                sys.exit(proc.stderr[-3000:])
            _, t, n = line[0].split()
            res[mode] = (float(t), int(n))
        bare = res["bare"][0]
        print(f"{fw}: bare {bare * 1e3:.0f} ms/step")
        for mode in ("modules", "ops"):
            t, n = res[mode]
            print(f"  {mode:<8} {t * 1e3:7.0f} ms/step  {t / bare:5.2f}x bare  {n:6d} records  {n / t:8.0f} records/s")
        print(f"  op-level / module-level: {res['ops'][0] / res['modules'][0]:.2f}x time, {res['ops'][1] / max(res['modules'][1], 1):.1f}x records")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
