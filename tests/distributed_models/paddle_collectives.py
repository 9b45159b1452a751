"""The paddle twin of ``torch_collectives.py`` under ``python -m paddle.distributed.launch`` (gloo on
CPU): ``reduce.local`` computes this rank's partial sums from this rank's own data, ``reduce``
all-reduces them in place (``paddle.distributed.all_reduce``), used by tests/test_collectives.py."""

import numpy as np
import paddle
import paddle.distributed as dist


class Reduce(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.local = paddle.nn.Linear(16, 4, bias_attr=False)

    def forward(self, h: paddle.Tensor) -> paddle.Tensor:
        y = self.local(h)
        dist.all_reduce(y, op=dist.ReduceOp.SUM)  # COLLECTIVE: in place
        return y


class Net(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = paddle.nn.Linear(8, 16)
        self.act = paddle.nn.Tanh()
        self.reduce = Reduce()
        self.head = paddle.nn.Linear(4, 2)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.head(self.reduce(self.act(self.fc1(x))))


def model() -> paddle.nn.Layer:
    dist.init_parallel_env()
    paddle.seed(0)
    return Net()  # the same seed on every rank: the same weights


def inputs(step: int) -> paddle.Tensor:
    rng = np.random.default_rng(100 * dist.get_rank() + step)  # each rank its own data
    return paddle.to_tensor(rng.standard_normal((4, 8)).astype("float32"))


def loss(out: paddle.Tensor) -> paddle.Tensor:
    return (out**2).mean()


def optimizer(model: paddle.nn.Layer) -> paddle.optimizer.Optimizer:
    return paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
