"""A tiny vision transformer whose embedding puts two tokens of its own (class, distillation)
FIRST, before the 16 patch tokens, and adds an 18-row position table in that order. The
torch port (tokenroll_torch.py) puts them LAST, with its table in its own order: the two
tables are the same rows rotated by two, and every later value holds the tokens rolled.

PADIFF_BUG (this side): paddle_ln_eps -> the block's norm uses epsilon 1e-3 (the default is 1e-5)."""
import paddle
from _common import bug, image
from paddle import nn

D, P = 16, 2  # width, patch size: an 8x8 image gives 16 patches


class Embeddings(nn.Layer):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2D(3, D, P, stride=P)
        self.cls_token = self.create_parameter([1, 1, D], default_initializer=nn.initializer.Normal(std=0.5))
        self.dist_token = self.create_parameter([1, 1, D], default_initializer=nn.initializer.Normal(std=0.5))
        self.position = self.create_parameter([1, 18, D], default_initializer=nn.initializer.Normal(std=0.5))

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose([0, 2, 1])  # [B, 16, D]
        b = x.shape[0]
        tokens = [self.cls_token.expand([b, 1, D]), self.dist_token.expand([b, 1, D])]
        return paddle.concat([*tokens, x], axis=1) + self.position


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D, epsilon=1e-3 if bug() == "paddle_ln_eps" else 1e-5)
        self.attn = nn.MultiHeadAttention(D, 2)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)

    def forward(self, x):
        h = self.norm(x)
        x = x + self.attn(h, h, h)
        return x + self.fc2(nn.functional.gelu(self.fc1(x)))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embeddings = Embeddings()
        self.block = Block()
        self.head = nn.Linear(D, 5)

    def forward(self, x):
        x = self.block(self.embeddings(x))
        return self.head((x[:, 0] + x[:, 1]) / 2)


def model():
    if bug() not in ("", "paddle_ln_eps", "torch_pos_patches_only"):
        raise ValueError(f"tokenroll paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()
