"""The paddle twin of ``torch_ranks.py`` under ``python -m paddle.distributed.launch`` (gloo on CPU):
rank 0's weights broadcast to every rank, inputs centred by an all-reduce, no gradient sync.
``PADIFF_TEST_BUG_RANK=k``: rank k's ``fc2`` adds 1e-3 to its output."""

import os

import numpy as np
import paddle
import paddle.distributed as dist


class Head(paddle.nn.Linear):
    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        y = super().forward(x)
        if dist.get_rank() == int(os.environ.get("PADIFF_TEST_BUG_RANK", "-1")):
            y = y + 1e-3  # the planted bug
        return y


class Net(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = paddle.nn.Linear(8, 16)
        self.act = paddle.nn.Tanh()
        self.fc2 = Head(16, 4)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc2(self.act(self.fc1(x)))


def model() -> paddle.nn.Layer:
    dist.init_parallel_env()
    paddle.seed(0)
    net = Net()
    for p in net.parameters():
        dist.broadcast(p, 0)
    return net


def inputs(step: int) -> paddle.Tensor:
    rng = np.random.default_rng(100 * dist.get_rank() + step)
    x = paddle.to_tensor(rng.standard_normal((4, 8)).astype("float32"))
    mean = x.mean(0)
    dist.all_reduce(mean)
    return x - mean / dist.get_world_size()


def loss(out: paddle.Tensor) -> paddle.Tensor:
    return (out**2).mean()


def optimizer(model: paddle.nn.Layer) -> paddle.optimizer.Optimizer:
    return paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
