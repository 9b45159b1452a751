"""A small causal LM trained with its labels passed in, paddle side, written the way paddlenlp's
pretraining criteria take them: the caller shifts the labels (``labels[:, t]`` is the token at
t + 1; the last position ignored with -100), the model does not. Its feed-forward block keeps
the activation dropout as a module after a functional GELU (paddle's TransformerEncoderLayer).
Twin: labels_torch.py (the model shifts its labels itself, as HF's ``ForCausalLMLoss``; the
activation is a module and its dropout inline). Train mode, dropout 0.1.
PADIFF_BUG=paddle_act_drop: the activation dropout has p 0.3."""
import paddle
import paddle.nn.functional as F
from _common import D, V, bug, ids
from paddle import nn


class FeedForward(nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        self.dropout = nn.Dropout(0.3 if bug() == "paddle_act_drop" else 0.1)

    def forward(self, x):
        return x + self.linear2(self.dropout(F.gelu(self.linear1(x))))


class LM(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.blocks = nn.LayerList([FeedForward() for _ in range(2)])
        self.head = nn.Linear(D, V)

    def forward(self, input_ids, labels):
        h = self.embed(input_ids)
        for block in self.blocks:
            h = block(h)
        logits = self.head(h)
        per_token = F.cross_entropy(logits, labels.unsqueeze(-1), ignore_index=-100, reduction="none").squeeze(-1)
        keep = (labels != -100).astype("float32")
        return (per_token * keep).sum() / keep.sum(), logits


def model():
    paddle.seed(0)
    return LM().train()


def inputs():
    x = ids()
    labels = x.copy()
    labels[:, :-1], labels[:, -1] = x[:, 1:], -100
    return (), {"input_ids": paddle.to_tensor(x), "labels": paddle.to_tensor(labels)}


def loss(output):
    return output[0]


def optimizer(model):
    return paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
