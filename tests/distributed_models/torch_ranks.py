"""A data-parallel torch spec for 2+ processes under torchrun (gloo), used by tests/test_distributed*.py.

Each rank trains its own copy on its own data, without gradient all-reduce, so a bug on one rank
stays on that rank: rank 0's weights are broadcast to every rank (``model``), and each step's
inputs are centred by the mean over all ranks (an all-reduce in ``inputs``). Knobs, from the
environment:

* ``PADIFF_TEST_BUG_RANK=k``: rank k's ``fc2`` adds 1e-3 to its output (a planted bug);
* ``PADIFF_TEST_HANG_RANK=k`` with ``PADIFF_TEST_PID_DIR=D``: in its last step rank k writes
  ``D/rank-k.pid`` inside ``fc2``'s forward and sleeps there (a test kills it). The other ranks
  pass their last collective before that and finish.
"""

import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

STEPS = 2  # the test records --steps 2; the hang is in the last one


def _knob(name: str) -> int:
    return int(os.environ.get(name, "-1"))


class Head(torch.nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = super().forward(x)
        if dist.get_rank() == _knob("PADIFF_TEST_BUG_RANK"):
            y = y + 1e-3  # the planted bug
        if dist.get_rank() == _knob("PADIFF_TEST_HANG_RANK") and self.calls == STEPS - 1:
            Path(os.environ["PADIFF_TEST_PID_DIR"], f"rank-{dist.get_rank()}.pid").write_text(str(os.getpid()))
            time.sleep(600)
        self.calls += 1
        return y

    calls = 0


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.act = torch.nn.Tanh()
        self.fc2 = Head(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


def model() -> torch.nn.Module:
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    net = Net()
    for p in net.parameters():
        dist.broadcast(p.data, 0)
    return net


def inputs(step: int) -> torch.Tensor:
    rng = np.random.default_rng(100 * dist.get_rank() + step)
    x = torch.tensor(rng.standard_normal((4, 8)), dtype=torch.float32)
    mean = x.mean(0)
    dist.all_reduce(mean)
    return x - mean / dist.get_world_size()


def loss(out: torch.Tensor) -> torch.Tensor:
    return (out**2).mean()


def optimizer(model: torch.nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.1)
