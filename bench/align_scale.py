"""Call alignment at scale: time and peak RSS of ``align_views`` on synthetic steps.

Run: ``.venv/bin/python bench/align_scale.py [--sizes 10000 50000 200000] [--markdown]``

Each size runs in a fresh process (peak RSS is per process). A step is a realistic
tree: transformer-like blocks (norms, attention with q/k/v/o and softmax, an MLP) and
one flat ``nn.Sequential`` holding a fifth of the calls. The two sides differ the way
ports do: B's paths are renamed (``blocks`` -> ``layers``), B has no Dropout modules,
wraps each ``fc1`` in a one-element Sequential, and uses ReLU instead of GELU in one
block (a type difference); B's flat Sequential lacks every 50th ReLU. The run checks the
pairs it gets against that construction and prints what it measured.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from padiff_trace.analyzer.alignment._calls import Call, TraceView, build_tree
from padiff_trace.analyzer.alignment._pairing import align_views

logger = logging.getLogger("align_scale")

BLOCK_CALLS_A = 15  # calls per block on side A
FLAT_SHARE = 5  # one call in this many sits in the flat Sequential
SKIP_EVERY = 50  # B's flat Sequential lacks every n-th ReLU
H, F = (4, 64), (4, 256)  # hidden and MLP activation shapes


@dataclass
class Rec:
    """The fields of a record that alignment reads."""

    shape: tuple[int, ...]
    position: str = "out"
    is_tensor: bool = True


@dataclass
class _Builder:
    framework: str
    calls: list[Call]

    def add(self, module: str, mtype: str, parent: int, out: tuple[int, ...], inp: tuple[int, ...] = H) -> int:
        c = Call(len(self.calls), 0, module, mtype, parent, 0, [Rec(inp, "args[0]")], [Rec(out)])
        self.calls.append(c)
        return c.id


def _block(b: _Builder, root: int, i: int, odd_act: bool) -> None:
    torch = b.framework == "torch"
    p = f"layers.{i}" if torch else f"blocks.{i}"
    blk = b.add(p, "Block", root, H)
    b.add(f"{p}.norm1", "LayerNorm", blk, H)
    attn = b.add(f"{p}.attn", "Attention", blk, H)
    for n in "qkv":
        b.add(f"{p}.attn.{n}", "Linear", attn, H)
    b.add(f"{p}.attn.softmax", "Softmax", attn, (4, 4, 4), (4, 4, 4))
    b.add(f"{p}.attn.o", "Linear", attn, H)
    if not torch:
        b.add(f"{p}.attn.drop", "Dropout", attn, H)
    b.add(f"{p}.norm2", "LayerNorm", blk, H)
    mlp = b.add(f"{p}.mlp", "Mlp", blk, H)
    if torch:
        wrap = b.add(f"{p}.mlp.fc1", "Sequential", mlp, F)
        b.add(f"{p}.mlp.fc1.0", "Linear", wrap, F)
    else:
        b.add(f"{p}.mlp.fc1", "Linear", mlp, F)
    b.add(f"{p}.mlp.act", "ReLU" if torch and odd_act else "GELU", mlp, F, F)
    if not torch:
        b.add(f"{p}.mlp.drop", "Dropout", mlp, F, F)
    b.add(f"{p}.mlp.fc2", "Linear", mlp, H, F)


def build(framework: str, n_calls: int) -> TraceView:
    """A one-step view of about ``n_calls`` calls (side A's count; B has fewer)."""
    b = _Builder(framework, [])
    flat = n_calls // FLAT_SHARE
    blocks = max(1, (n_calls - flat) // BLOCK_CALLS_A)
    root = b.add("", "Net", -1, H)
    b.add("embed", "Embedding", root, H, (4,))
    for i in range(blocks):
        _block(b, root, i, odd_act=i == blocks // 2)
    seq = b.add("head", "Sequential", root, H)
    for k in range(flat):
        if k % 2 == 0:
            b.add(f"head.{k}", "Linear", seq, H)
        elif not (framework == "torch" and k % SKIP_EVERY == 1):
            b.add(f"head.{k}", "ReLU", seq, H)
    by_id = {c.id: c for c in b.calls}
    return TraceView(
        trace=SimpleNamespace(path=f"<synthetic {framework}>", meta={}),  # type: ignore[arg-type]
        framework=framework, steps=[0], calls={0: b.calls}, by_id=by_id, grads_out={}, grads_in={},
        weights={}, param_grads={}, probes={}, losses={},
        module_types={c.module: c.module_type for c in b.calls}, trees={0: build_tree(b.calls, by_id)},
    )


def _expected_b(module_a: str) -> str | None:
    """B's path for A's module, None where B has no counterpart."""
    if module_a.endswith(".drop"):
        return None
    m = module_a.replace("blocks.", "layers.", 1) if module_a.startswith("blocks.") else module_a
    if m.startswith("head.") and int(m.split(".")[1]) % SKIP_EVERY == 1:
        return None
    return f"{m}.0" if m.endswith(".mlp.fc1") else m


def child(n_calls: int) -> dict[str, Any]:
    """Build, align and check one size; measured in this process."""
    t0 = time.perf_counter()
    a, b = build("paddle", n_calls), build("torch", n_calls)
    t_build = time.perf_counter() - t0
    rss_built = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    al = align_views(a, b)
    t_align = time.perf_counter() - t0
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    got = {p.a.module: p.b.module for p in al.pairs}
    wrong = sum(1 for ma, mb in got.items() if _expected_b(ma) != mb)
    missed = sum(1 for c in a.calls[0] if c.module not in got and _expected_b(c.module) is not None)
    return {
        "calls_a": len(a.calls[0]), "calls_b": len(b.calls[0]), "pairs": len(al.pairs),
        "type_differences": len(al.type_differences), "wrong": wrong, "missed": missed,
        "build_s": t_build, "align_s": t_align, "rss_built_mb": rss_built / 1024, "rss_peak_mb": rss_peak / 1024,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 200_000])
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.child is not None:
        sys.stdout.write(json.dumps(child(args.child)) + "\n")
        return 0
    rows = []
    for n in args.sizes:
        proc = subprocess.run([sys.executable, __file__, "--child", str(n)], capture_output=True, text=True, check=True)
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        logger.info("%s", rows[-1])
    if args.markdown:
        logger.info("| calls A / B | pairs | type diffs | wrong / missed | align s | peak RSS MB (views alone) |")
        logger.info("|---|---|---|---|---|---|")
        for r in rows:
            logger.info(
                "| %d / %d | %d | %d | %d / %d | %.2f | %.0f (%.0f) |", r["calls_a"], r["calls_b"], r["pairs"],
                r["type_differences"], r["wrong"], r["missed"], r["align_s"], r["rss_peak_mb"], r["rss_built_mb"],
            )
    return 0 if all(r["wrong"] == 0 and r["missed"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
