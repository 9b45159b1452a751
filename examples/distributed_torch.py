"""A data-parallel torch model for ``padiff-trace record --nproc 2`` (or ``torchrun --nproc_per_node 2
-m padiff_trace record``): DistributedDataParallel over gloo on CPU, each rank on its own shard
of the data. Without a launcher it runs as one process.

    padiff-trace record examples/distributed_torch.py --out runs/ddp.trace --nproc 2 --steps 2
    padiff-trace info runs/ddp.trace
"""

import os

import numpy as np
import torch
import torch.distributed as dist


def _rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def model() -> torch.nn.Module:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    if "WORLD_SIZE" not in os.environ:  # a single process
        return net
    dist.init_process_group("gloo")
    return torch.nn.parallel.DistributedDataParallel(net)  # gradients all-reduced in backward


def inputs(step: int) -> torch.Tensor:
    rng = np.random.default_rng(1000 * step + _rank())  # this rank's shard of step `step`'s batch
    return torch.tensor(rng.standard_normal((8, 16)), dtype=torch.float32)


def loss(output: torch.Tensor) -> torch.Tensor:
    return (output**2).mean()


def optimizer(model: torch.nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.05)
