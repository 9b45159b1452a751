"""Output-gradient hooks at scale (torch; issue 15): a graph with one hooked output per module call
must be freed without a crash. ``Tensor.register_hook`` gives each hooked node a Python object, and
torch frees such nodes recursively: ~40k chained calls overflowed the 8 MiB C stack (SIGSEGV in
``~AddmmBackward0``) when the graph was freed after backward. ``recorder/torch_nodes.py`` holds the
nodes and frees them one at a time. The fast tests provoke the same recursion with a few thousand
calls in a thread whose C stack is 256 KiB; the slow one is the reported case."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from padiff_trace.recorder.torch_nodes import NodeKeeper  # noqa: E402

from padiff_trace import Kind, open_trace  # noqa: E402

# A chain of ``n`` calls of one Linear, recorded (stats only) for ``steps`` steps with backward;
# the last graph is freed as ``end`` says: "del" (explicitly), "global" (by the interpreter's
# teardown), "local" (when the function returns, after the recording). ``stack``: run it all in
# a thread with a C stack of that many KiB (0: the main thread).
CHILD = textwrap.dedent("""
    import gc, sys, threading, torch
    from padiff_trace import recorder
    n, steps, end, trace, stack = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])

    class Chain(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            for _ in range(n):
                x = self.lin(x)
            return x

    torch.manual_seed(0)
    model = Chain()
    x = torch.randn(2, 4, requires_grad=True)

    def run():
        with recorder.record(model, trace, stats_only=True) as rec:
            for _ in range(steps):
                out = model(x)
                loss = rec.loss(out.pow(2).mean())
                loss.backward()
                rec.step()
        return loss, out

    def main():
        global kept
        if end == "local":
            run()
        elif end == "global":
            kept = run()
        else:
            got = run()
            del got
            gc.collect()

    if stack:
        threading.stack_size(stack * 1024)
        t = threading.Thread(target=main)
        t.start()
        t.join()
    else:
        main()
    print("DONE")
""")


def _run(tmp_path: Path, n: int, steps: int, end: str, stack: int = 0) -> Path:
    trace = tmp_path / f"{end}.trace"
    out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(steps), end, str(trace), str(stack)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"exit {out.returncode} (negative: killed by a signal)\n{out.stderr[-3000:]}"
    assert "DONE" in out.stdout
    return trace


@pytest.mark.parametrize("end", ["del", "global", "local"])
def test_long_chain_frees_in_a_small_stack(tmp_path: Path, end: str) -> None:
    # 4,000 hooked nodes freed as a chain need ~1 MiB of C stack: they crashed in 256 KiB
    trace = _run(tmp_path, 4000, 2, end, stack=256)
    with open_trace(trace) as tr:
        assert tr.complete
        assert len(tr.select(kind=Kind.GRAD_OUTPUT, module="lin")) == 2 * 4000  # every gradient recorded


@pytest.mark.slow
def test_forty_thousand_chained_calls_with_backward(tmp_path: Path) -> None:
    """The reported case: ~40k chained module calls, backward, the graph freed afterwards."""
    trace = _run(tmp_path, 40_000, 1, "del")
    with open_trace(trace) as tr:
        assert len(tr.select(kind=Kind.GRAD_OUTPUT, module="lin")) == 40_000


def test_keeper_holds_live_graphs_and_frees_dropped_ones() -> None:
    keeper = NodeKeeper()
    x = torch.randn(3, requires_grad=True)
    y = x
    seen: list[float] = []
    for _ in range(50):
        y = (y * 1.5).sin()
        y.register_hook(lambda g: seen.append(float(g.sum())))
        keeper.keep(y)
    keeper.keep(x)  # a leaf: nothing to hold
    assert len(keeper) == 50
    assert keeper.sweep() == 50  # the graph is alive (y): all held
    y.sum().backward()
    assert len(seen) == 50  # hooks unaffected
    assert keeper.sweep() == 50
    del y
    assert keeper.sweep() == 0  # freed, newest first, one node at a time


def test_gradients_recorded_are_the_real_ones(tmp_path: Path) -> None:
    """The nodes kept change nothing the recorder sees: each grad_output record is the gradient
    autograd computed for that output (checked against retain_grad)."""
    from padiff_trace import recorder

    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 4)

    class Chain(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = lin

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.outs = []
            for _ in range(5):
                x = self.lin(x)
                x.retain_grad()
                self.outs.append(x)
            return x

    model = Chain()
    x = torch.randn(2, 4)
    with recorder.record(model, tmp_path / "t") as rec:
        loss = rec.loss(model(x).pow(2).mean())
        loss.backward()
        rec.step()
    want = [o.grad.numpy() for o in model.outs]
    with open_trace(tmp_path / "t") as tr:
        got = [tr.read(r.seq) for r in sorted(tr.select(kind=Kind.GRAD_OUTPUT, module="lin"), key=lambda r: r.call_index)]
    assert len(got) == 5
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
