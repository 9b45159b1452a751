"""``torch_tp.py``'s hand-written 2-way tensor-parallel MLP, its weights drawn from ``record --seed``
instead of a fixed seed: two seeds give two sets of weights, so a sharded run only matches a
single-process run of another seed when it replays that run's weights (``--weights-from``), each
rank taking its slice.

``PADIFF_TEST_BAD_SLICE=1``: under a launcher ``fc1.weight`` keeps 6 of the 16 rows on each rank, a
slice on no axis (the weight replay must refuse it).
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist
from torch_tp import STEPS, Net, inputs, loss, optimizer

__all__ = ["STEPS", "inputs", "loss", "model", "optimizer"]


def model() -> torch.nn.Module:
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group("gloo")
    net = Net()  # every rank draws the full weights from the same seed (--seed) and keeps its slice
    if "WORLD_SIZE" in os.environ and os.environ.get("PADIFF_TEST_BAD_SLICE") == "1":
        net.fc1.weight = torch.nn.Parameter(net.fc1.weight.detach()[:6].clone())
    return net
