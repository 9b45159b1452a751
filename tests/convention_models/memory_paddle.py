"""An encoder scoring its codes against a memory of earlier ones: here the memory is a layer of
its own holding ``feats [K, D]`` (one code per row) and its write pointer ``ptr``; the torch side
(memory_torch.py) keeps ``queue [D, K]`` (one code per column) and ``queue_ptr`` on the root. The
memory is state the model carries, not a weight: each side starts from its own random memory
unless the run copies one into the other.

PADIFF_BUG: paddle_write_before_read (this side: the batch's codes are written into the memory
before it is read)."""
import paddle
import paddle.nn.functional as F
from _common import bug, hidden
from paddle import nn

D, K = 16, 24


class Memory(nn.Layer):
    def __init__(self):
        super().__init__()
        self.register_buffer("feats", F.normalize(paddle.randn([K, D]), axis=1))
        self.register_buffer("ptr", paddle.zeros([1], dtype="int64"))

    def write(self, codes):
        n, at = codes.shape[0], int(self.ptr[0])
        self.feats[at:at + n] = codes
        self.ptr[0] = (at + n) % K


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.memory = Memory()
        self.encode = nn.Linear(D, D)

    def forward(self, x):
        codes = F.normalize(self.encode(x.mean(axis=1)), axis=1)
        if bug() == "paddle_write_before_read":
            self.memory.write(codes.detach())
        scores = codes @ self.memory.feats.clone().t()
        if bug() != "paddle_write_before_read":
            self.memory.write(codes.detach())
        return scores


def model():
    if bug() not in ("", "paddle_write_before_read"):
        raise ValueError(f"memory paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
