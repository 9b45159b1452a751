"""A torch spec for 2 processes under torchrun (gloo) whose forward all-reduces, used by
tests/test_collectives.py (``record --collectives``).

``reduce`` is a row-parallel-like layer: ``reduce.local`` computes this rank's partial sums from
this rank's own data and ``reduce`` all-reduces them in place (the tensor ``reduce.local`` just
returned), so the all-reduce's input differs from its output on every rank; ``mix`` all-gathers
(autograd-aware) and all-reduces asynchronously. Knobs, from the environment:

* ``PADIFF_TEST_REDUCE_OP=max``: the all-reduce takes the maximum instead of the sum (a bug in
  the reduction itself: every input of the call agrees, its output does not);
* ``PADIFF_TEST_NAN_RANK=k``: rank k's ``poison`` puts a NaN into its activations, which reach
  the other ranks through the all-reduce.
"""

import os

import numpy as np
import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn


class Poison(torch.nn.Module):
    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if dist.get_rank() == int(os.environ.get("PADIFF_TEST_NAN_RANK", "-1")):
            h = h.clone()
            h[0, 0] = float("nan")  # the planted NaN
        return h


class Reduce(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.local = torch.nn.Linear(16, 4, bias=False)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        y = self.local(h)
        op = dist.ReduceOp.MAX if os.environ.get("PADIFF_TEST_REDUCE_OP") == "max" else dist.ReduceOp.SUM
        dist.all_reduce(y, op=op)  # COLLECTIVE: in place
        return y


class Mix(torch.nn.Module):
    """Two more kinds of call: an autograd-aware all-gather (it returns every rank's tensor), and an
    asynchronous all-reduce of ``rank + 1`` times the gathered values (the sum is 3 times them)."""

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        z = torch.cat(dist_fn.all_gather(y), dim=1)  # COLLECTIVE-GATHER
        s = z.detach() * (dist.get_rank() + 1)
        work = dist.all_reduce(s, async_op=True)  # COLLECTIVE-ASYNC
        work.wait()
        return z + s


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.act = torch.nn.Tanh()
        self.poison = Poison()
        self.reduce = Reduce()
        self.mix = Mix()
        self.head = torch.nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.mix(self.reduce(self.poison(self.act(self.fc1(x))))))


def model() -> torch.nn.Module:
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    return Net()  # the same seed on every rank: the same weights


def inputs(step: int) -> torch.Tensor:
    rng = np.random.default_rng(100 * dist.get_rank() + step)  # each rank its own data
    return torch.tensor(rng.standard_normal((4, 8)), dtype=torch.float32)


def loss(out: torch.Tensor) -> torch.Tensor:
    return (out**2).mean()


def optimizer(model: torch.nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.1)
