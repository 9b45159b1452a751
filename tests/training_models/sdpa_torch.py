"""Attention with dropout inside torch's fused kernel (as HF's sdpa path calls it): not replayable."""
import torch
from torch import nn


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x):
        q, k, v = self.qkv(x).reshape(2, 4, 3, 1, 8).unbind(2)
        return nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.1 if self.training else 0.0)


def model():
    torch.manual_seed(0)
    return Attn().train()


def inputs():
    return torch.ones(2, 4, 8)
