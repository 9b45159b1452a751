"""The paddle port of attn_torch.py with separate q, k and v projections (as paddlenlp's GPT)."""
import paddle
from _common import LR, data, target
from paddle import nn

D, H = 8, 2


class Attn(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, D)
        self.k_proj = nn.Linear(D, D)
        self.v_proj = nn.Linear(D, D)
        self.out = nn.Linear(D, 4)

    def forward(self, x):
        s = x.unsqueeze(0)

        def heads(t):
            return t.reshape([1, -1, H, D // H]).transpose([0, 2, 1, 3])

        q, k, v = heads(self.q_proj(s)), heads(self.k_proj(s)), heads(self.v_proj(s))
        w = paddle.nn.functional.softmax(q @ k.transpose([0, 1, 3, 2]) / (D // H) ** 0.5, axis=-1)
        o = (w @ v).transpose([0, 2, 1, 3]).reshape([1, -1, D])
        return self.out(o)[0]


def model():
    paddle.seed(0)
    m = Attn()
    m.train()
    return m


def inputs():
    return paddle.to_tensor(data())


def loss(out):
    return ((out - paddle.to_tensor(target())) ** 2).mean()


def optimizer(m):
    return paddle.optimizer.AdamW(learning_rate=LR, parameters=m.parameters(), beta1=0.9, beta2=0.999, epsilon=1e-8,
                                  weight_decay=0.0)
