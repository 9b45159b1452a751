"""A small causal LM trained with its labels passed in, torch side, written the way HF writes
it: the labels are the input ids and the model shifts them (``ForCausalLMLoss``); the activation
is a module (``act``) and the activation dropout inline (``F.dropout``). Twin: labels_paddle.py."""
import torch
import torch.nn.functional as F
from _common import D, V, ids
from torch import nn


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.fc2(F.dropout(self.act(self.fc1(x)), p=0.1, training=self.training))


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.blocks = nn.ModuleList([FeedForward() for _ in range(2)])
        self.head = nn.Linear(D, V)

    def forward(self, input_ids, labels):
        h = self.embed(input_ids)
        for block in self.blocks:
            h = block(h)
        logits = self.head(h)
        return F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1)), logits


def model():
    torch.manual_seed(0)
    return LM().train()


def inputs():
    x = torch.from_numpy(ids())
    return (), {"input_ids": x, "labels": x.clone()}


def loss(output):
    return output[0]


def optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.1)
