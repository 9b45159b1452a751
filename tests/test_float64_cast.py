"""A float64 recording (``--dtype float64``, the referee's) casts the model's floating tensors
and nothing else, in both frameworks: integer buffers (a relative-position index, position
ids) stay integers, and a buffer holding no memory yet (paddle ``nn.LSTM``'s dropout state)
stays as it is, so the model still runs (real paddle and torch, fast)."""

from __future__ import annotations

import numpy as np
import pytest

paddle = pytest.importorskip("paddle")
torch = pytest.importorskip("torch")

from recorder.paddle_ import PaddleAdapter  # noqa: E402
from recorder.torch_ import TorchAdapter  # noqa: E402


def test_paddle_float64_cast_keeps_integer_and_memoryless_buffers() -> None:
    class Model(paddle.nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.table = paddle.nn.Embedding(7, 4)
            self.register_buffer("index", paddle.to_tensor(np.array([6, 0, 3], dtype=np.int64)), persistable=False)
            self.rnn = paddle.nn.LSTM(4, 4)

        def forward(self, x: object) -> object:
            return self.rnn(self.table(self.index).unsqueeze(0) + x)[0]

    m = Model()
    before = m.index.numpy().copy()
    try:
        PaddleAdapter().cast_model(m, "float64")
        assert m.index.dtype == paddle.int64 and np.array_equal(m.index.numpy(), before)
        assert m.table.weight.dtype == paddle.float64
        assert dict(m.rnn.named_buffers())["_dropout_state"].dtype == paddle.uint8
        out = m(paddle.zeros([1, 3, 4], dtype="float64"))  # index_select with an integer index, the LSTM in float64
        assert out.dtype == paddle.float64 and out.shape == [1, 3, 4]
    finally:
        paddle.set_default_dtype("float32")


def test_torch_float64_cast_keeps_integer_buffers() -> None:
    m = torch.nn.Embedding(7, 4)
    m.register_buffer("index", torch.tensor([6, 0, 3]), persistent=False)
    try:
        TorchAdapter().cast_model(m, "float64")
        assert m.index.dtype == torch.int64 and m.weight.dtype == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)
