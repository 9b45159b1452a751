"""A 2-way tensor-parallel MLP written by hand on torch.distributed collectives (gloo), and the same
model in one process: run under torchrun it shards, run alone (no launcher) it is the plain model.

``fc1`` is column-parallel (its weight split on the out-features, its output split on the last
axis), ``act`` works on the split, ``fc2`` is row-parallel (its weight split on the in-features;
``fc2.local`` computes this rank's partial output, which is all-reduced, then the full bias is
added). Every rank builds the full weights from the same seed and keeps its slice, so a sharded
run's numbers equal the single process's up to the order of the fp32 sums.

``monitor`` is a probe whose output is the Gram matrix of the activations: on a rank, the block of
its own features only (two axes smaller than the single process's), which no join rule rebuilds.
Its output is not used, so it changes no number.

``PADIFF_TEST_BUG_RANK=k``: rank k's slice of ``fc1`` adds 1e-3 to its output (a planted bug, only
with more than one process).
"""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.distributed as dist

STEPS = 2


def world() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1


def rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


class _CopyToRegion(torch.autograd.Function):
    """Forward: the replicated input as is; backward: the gradients of every rank's slice summed."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> torch.Tensor:
        if world() > 1:
            g = g.clone()
            dist.all_reduce(g)
        return g


class _ReduceFromRegion(torch.autograd.Function):
    """Forward: every rank's partial sums added up (all-reduce); backward: the gradient as is."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        if world() > 1:
            x = x.clone()
            dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> torch.Tensor:
        return g


def _part(n: int) -> slice:
    size = n // world()
    return slice(rank() * size, (rank() + 1) * size)


class ColumnParallelLinear(torch.nn.Module):
    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        full = torch.nn.Linear(n_in, n_out)  # the same random numbers on every rank and alone
        part = _part(n_out)
        self.weight = torch.nn.Parameter(full.weight.detach()[part].clone())
        self.bias = torch.nn.Parameter(full.bias.detach()[part].clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.linear(_CopyToRegion.apply(x), self.weight, self.bias)
        if world() > 1 and rank() == int(os.environ.get("PADIFF_TEST_BUG_RANK", "-1")):
            y = y + 1e-3  # the planted bug: one shard's math is off
        return y


class PartialLinear(torch.nn.Module):
    """This rank's share of a row-parallel product: ``x_local @ w_local.T`` (partial sums)."""

    def __init__(self, weight: torch.Tensor) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.linear(x, self.weight)


class RowParallelLinear(torch.nn.Module):
    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        full = torch.nn.Linear(n_in, n_out)
        self.local = PartialLinear(full.weight.detach()[:, _part(n_in)].clone())
        self.bias = torch.nn.Parameter(full.bias.detach().clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ReduceFromRegion.apply(self.local(x)) + self.bias


class Gram(torch.nn.Module):
    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h.detach().T @ h.detach()


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = ColumnParallelLinear(8, 16)
        self.act = torch.nn.Tanh()
        self.fc2 = RowParallelLinear(16, 4)
        self.monitor = Gram()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.fc1(x))
        self.monitor(h)
        return self.fc2(h)


def model() -> torch.nn.Module:
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group("gloo")
    torch.manual_seed(0)
    return Net()


def inputs(step: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(100 + step)  # the same batch on every rank
    return torch.randn(4, 8, generator=g)


def loss(out: torch.Tensor) -> torch.Tensor:
    return (out**2).mean()


def optimizer(model: torch.nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.1)
