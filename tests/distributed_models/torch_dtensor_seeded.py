"""``torch_dtensor.py``'s MLP (DTensor parameters by ``ColwiseParallel``/``RowwiseParallel``), its weights
drawn from ``record --seed``, and one more parameter, ``offset``, that forward does not use: under a
launcher a DTensor with placement ``Partial`` (each rank holds a term of a sum). Alone (no launcher)
the plain model."""

from __future__ import annotations

import os

import torch
import torch.distributed as dist
from torch_dtensor import STEPS, inputs, loss, optimizer
from torch_dtensor import Net as _Net

__all__ = ["STEPS", "Net", "inputs", "loss", "model", "optimizer"]


class Net(_Net):
    def __init__(self) -> None:
        super().__init__()
        self.offset = torch.nn.Parameter(torch.randn(4))


def model() -> torch.nn.Module:
    net = Net()  # weights from --seed
    if "WORLD_SIZE" in os.environ:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import DTensor, Partial
        from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

        dist.init_process_group("gloo")
        mesh = init_device_mesh("cpu", (dist.get_world_size(),))
        parallelize_module(net, mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
        net.offset = torch.nn.Parameter(DTensor.from_local(net.offset.detach().clone(), mesh, [Partial()]))
    return net
