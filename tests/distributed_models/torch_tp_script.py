"""A training script, not a spec, for torchrun: ``torch_tp.py``'s 2-way tensor-parallel MLP drawn
from seed 2, given the weights of a single-process trace through the recorder's Python API
(``recorder.transfer_weights``: each rank takes its slice), then recorded with ``recorder.record``.

    torchrun --standalone --nproc_per_node 2 torch_tp_script.py SOURCE_TRACE OUT_TRACE

Prints each weight's conversion from the map the transfer used (``name: convert``).
"""

from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist
from torch_tp import STEPS, Net, inputs, loss, optimizer

from padiff_trace import recorder


def main(source: str, out: str) -> None:
    dist.init_process_group("gloo")
    torch.manual_seed(2)
    net = Net()
    weight_map = recorder.transfer_weights(recorder.get_adapter("torch"), net, source)
    for pair in weight_map.pairs:
        print(f"rank {dist.get_rank()}: {pair.b}: {pair.conversion()}")
    opt = optimizer(net)
    with recorder.record(net, out) as rec:
        for step in range(STEPS):
            rec.loss(loss(net(inputs(step)))).backward()
            opt.step()
            rec.step()
            opt.zero_grad()
    dist.destroy_process_group()  # left to the interpreter's exit, gloo can abort the process


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
    sys.stdout.flush()
    os._exit(0)
