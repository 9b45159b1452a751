# PaDiff README, case 2 ("使用 layer_mapping"): paddle and torch MultiHeadAttention cannot be
# aligned inside, so the two are mapped to each other. The README's snippet continues case 1;
# its imports are written out here, with `from padiff_trace import auto_diff` for padiff's.
import paddle
import torch

from padiff_trace import auto_diff

# 由于paddle与torch的MultiHeadAttention无法直接对齐
# 需要使用 layer_mapping 功能

class SimpleLayer(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.attn = paddle.nn.MultiHeadAttention(16, 1)

    def forward(self, q, k, v):
        x = self.attn(q, k, v)
        return x

class SimpleModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(16, 1, batch_first=True)

    def forward(self, q, k, v):
        x, _ = self.attn(q, k, v)
        return x


layer = SimpleLayer()
module = SimpleModule()

# 在layer_mapping中指定无法对齐的sublayer。注意，在字典中应使用python obj
# layer_mapping对kv顺序没有要求
# 目前 auto_diff 已支持 MultiHeadAttention 的权重自动初始化，因此此处无需其他操作

layer_mapping = {layer.attn: module.attn}

inp = paddle.rand((2, 4, 16)).numpy()
inp = (
{"q": paddle.to_tensor(inp), "k": paddle.to_tensor(inp), "v": paddle.to_tensor(inp)},
{"q": torch.as_tensor(inp), "k": torch.as_tensor(inp), "v": torch.as_tensor(inp)},
)


auto_diff(layer, module, inp, auto_weights=True, layer_mapping=layer_mapping, options={"atol": 1e-4})
