"""The MLP of ``torch_tp.py`` sharded by torch's own tensor-parallel API (``torch.distributed.tensor.
parallel``: ``ColwiseParallel`` for ``fc1``, ``RowwiseParallel`` for ``fc2``, DTensor parameters on a
CPU device mesh over gloo) under torchrun; alone (no launcher) the plain model. The recorder keeps
each rank's local shards and the parameters' placements (meta ``distributed.splits``)."""

from __future__ import annotations

import os

import torch
import torch.distributed as dist

STEPS = 2


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.act = torch.nn.Tanh()
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


def model() -> torch.nn.Module:
    torch.manual_seed(0)
    net = Net()
    if "WORLD_SIZE" in os.environ:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

        dist.init_process_group("gloo")
        mesh = init_device_mesh("cpu", (dist.get_world_size(),))
        parallelize_module(net, mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
    return net


def inputs(step: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(100 + step)  # the same batch on every rank
    return torch.randn(4, 8, generator=g)


def loss(out: torch.Tensor) -> torch.Tensor:
    return (out**2).mean()


def optimizer(model: torch.nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.1)
