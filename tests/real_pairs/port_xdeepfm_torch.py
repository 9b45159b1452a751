"""Hand-written port, torch side: a tiny xDeepFM CTR model (written by "person B", DeepCTR-Torch style).

The same math as port_xdeepfm_paddle.py, re-implemented by hand: input `X` [8, 4] int64
(positional; four sparse fields C1..C4 with vocabularies 7 / 5 / 9 / 6, field-local ids),
output the click probability [8, 1].

Torch idioms on this side:
- root `xDeepFM` registers, in this order: `embedding_dict` (nn.ModuleDict, ONE
  nn.Embedding(vocab, 8) PER FIELD, keyed "C1".."C4"), `linear_model` (`Linear`: its own
  ModuleDict of per-field nn.Embedding(vocab, 1), no bias), `dnn` (`DNN`), `dnn_linear`
  nn.Linear(16, 1, bias=False), `cin` (`CIN`), `cin_linear` nn.Linear(10, 1, bias=False) and
  `out` (`PredictionLayer`: the global `bias` [1] and the sigmoid).
- field embeddings: each field's table is called on X[:, i:i+1] ([B, 1] -> [B, 1, 8]) and the
  four results are concatenated on dim 1 ([B, 4, 8]).
- `CIN`: `layers` = nn.ModuleList of `CINLayer` (one weight tensor `weight` [H_prev, F, size]
  and `bias` [size] each, contracted with torch.einsum("bhd,bmd,hmo->bod", x_prev, x0, W)),
  then `activation` nn.ReLU (one module, called once per layer); split-half on all but the
  last layer with the DeepCTR convention: the FIRST half of the maps is the next hidden layer,
  the SECOND half the direct connection; the CIN returns the sum-pooled [B, 10] maps and the
  root applies `cin_linear`.
- `DNN`: `linears` (ModuleList), `bn` (ModuleList of nn.BatchNorm1d), `activation_layers`
  (ModuleList of nn.ReLU), `dropout` nn.Dropout(0.0); the output Linear lives at the root
  (`dnn_linear`).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_cin_split_swapped     -> the split-half unpacks `direct_connect, next_hidden` (the
                                 pytorch-fm order) instead of DeepCTR's `next_hidden,
                                 direct_connect`
  torch_cin_einsum_transposed -> CINLayer contracts with "bhd,bmd,mho->bod": the weight's
                                 hidden and field axes are swapped (both are 4 here, so no
                                 shape error; layer 0 is symmetric in them and unaffected)
"""
import os

import numpy as np
import torch
from torch import nn

FEATURES = (("C1", 7), ("C2", 5), ("C3", 9), ("C4", 6))
EMBEDDING_SIZE = 8
CIN_LAYER_SIZE = (8, 6)
DNN_HIDDEN_UNITS = (32, 16)
BATCH = 8
OWN_BUGS = {"torch_cin_split_swapped", "torch_cin_einsum_transposed"}
OTHER_BUGS = {"paddle_linear_no_offsets", "paddle_dnn_bn_eps"}


class Linear(nn.Module):
    """First-order part: one 1-d table per field, summed."""

    def __init__(self, features):
        super().__init__()
        self.embedding_dict = nn.ModuleDict({name: nn.Embedding(vocab, 1) for name, vocab in features})

    def forward(self, X):
        embs = [self.embedding_dict[name](X[:, i:i + 1]) for i, name in enumerate(self.embedding_dict)]
        return torch.cat(embs, dim=-1).sum(dim=-1)  # [B, 1, 4] -> [B, 1]


class CINLayer(nn.Module):
    def __init__(self, hidden_in, field_size, out_size, transposed=False):
        super().__init__()
        self.transposed = transposed
        self.weight = nn.Parameter(torch.empty(hidden_in, field_size, out_size))
        self.bias = nn.Parameter(torch.zeros(out_size))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x_prev, x0):
        eq = "bhd,bmd,mho->bod" if self.transposed else "bhd,bmd,hmo->bod"
        z = torch.einsum(eq, x_prev, x0, self.weight)
        return z + self.bias[None, :, None]


class CIN(nn.Module):
    def __init__(self, field_size, layer_size=(8, 6), split_half=True, swapped=False, transposed=False):
        super().__init__()
        self.layer_size = layer_size
        self.split_half = split_half
        self.swapped = swapped
        self.field_nums = [field_size]
        self.layers = nn.ModuleList()
        for i, size in enumerate(layer_size):
            self.layers.append(CINLayer(self.field_nums[-1], field_size, size, transposed))
            if split_half and i != len(layer_size) - 1:
                self.field_nums.append(size // 2)
            else:
                self.field_nums.append(size)
        self.activation = nn.ReLU()

    def forward(self, inputs):
        hidden_nn_layers = [inputs]
        final_result = []
        for i, size in enumerate(self.layer_size):
            curr_out = self.activation(self.layers[i](hidden_nn_layers[-1], hidden_nn_layers[0]))
            if self.split_half and i != len(self.layer_size) - 1:
                if self.swapped:
                    direct_connect, next_hidden = torch.split(curr_out, 2 * [size // 2], 1)
                else:
                    next_hidden, direct_connect = torch.split(curr_out, 2 * [size // 2], 1)
            else:
                direct_connect = next_hidden = curr_out
            final_result.append(direct_connect)
            hidden_nn_layers.append(next_hidden)
        return torch.sum(torch.cat(final_result, dim=1), -1)  # [B, 10]


class DNN(nn.Module):
    def __init__(self, inputs_dim, hidden_units):
        super().__init__()
        dims = [inputs_dim, *hidden_units]
        self.linears = nn.ModuleList([nn.Linear(dims[i], dims[i + 1]) for i in range(len(hidden_units))])
        self.bn = nn.ModuleList([nn.BatchNorm1d(u) for u in hidden_units])
        self.activation_layers = nn.ModuleList([nn.ReLU() for _ in hidden_units])
        self.dropout = nn.Dropout(0.0)

    def forward(self, inputs):
        deep_input = inputs
        for i in range(len(self.linears)):
            fc = self.linears[i](deep_input)
            fc = self.bn[i](fc)
            fc = self.activation_layers[i](fc)
            deep_input = self.dropout(fc)
        return deep_input


class PredictionLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros((1,)))

    def forward(self, X):
        return torch.sigmoid(X + self.bias)


class xDeepFM(nn.Module):
    def __init__(self, cin_swapped=False, cin_transposed=False):
        super().__init__()
        self.embedding_dict = nn.ModuleDict({name: nn.Embedding(vocab, EMBEDDING_SIZE) for name, vocab in FEATURES})
        self.linear_model = Linear(FEATURES)
        self.dnn = DNN(len(FEATURES) * EMBEDDING_SIZE, DNN_HIDDEN_UNITS)
        self.dnn_linear = nn.Linear(DNN_HIDDEN_UNITS[-1], 1, bias=False)
        self.cin = CIN(len(FEATURES), CIN_LAYER_SIZE, swapped=cin_swapped, transposed=cin_transposed)
        featuremap_num = sum(self.cin.field_nums[1:])
        self.cin_linear = nn.Linear(featuremap_num, 1, bias=False)
        self.out = PredictionLayer()

    def forward(self, X):
        sparse_embedding_list = [self.embedding_dict[name](X[:, i:i + 1]) for i, (name, _) in enumerate(FEATURES)]
        cin_input = torch.cat(sparse_embedding_list, dim=1)  # [B, 4, 8]
        logit = self.linear_model(X)
        logit = logit + self.cin_linear(self.cin(cin_input))
        dnn_input = torch.flatten(cin_input, start_dim=1)
        logit = logit + self.dnn_linear(self.dnn(dnn_input))
        return self.out(logit)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_xdeepfm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = xDeepFM(cin_swapped=bug == "torch_cin_split_swapped", cin_transposed=bug == "torch_cin_einsum_transposed")
    return m.eval()


def _ids():
    rng = np.random.default_rng(31)
    return np.stack([rng.integers(0, v, BATCH) for _, v in FEATURES], axis=1).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # click probabilities [8, 1]: binary cross-entropy against fixed labels
    labels = torch.tensor([[1.0], [0.0], [0.0], [1.0], [0.0], [1.0], [1.0], [0.0]])
    return nn.functional.binary_cross_entropy(output, labels)
