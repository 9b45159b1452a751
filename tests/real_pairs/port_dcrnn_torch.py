"""Hand-written port, torch side: a DCRNN traffic-forecasting model (written by "person B").

The same math as port_dcrnn_paddle.py, re-implemented by hand in the style of the
DCRNN_PyTorch code (chnsh): 8 sensors, input_dim 2, rnn_units 16, 2 DCGRU layers in the encoder
and in the decoder, max_diffusion_step K = 2 over the dual random-walk supports, seq_len 6,
horizon 4, output_dim 1. Input: positional `x` [2, 6, 8, 2] (batch, time, node, feature);
output [2, 4, 8, 1] (batch, horizon, node, 1).

Graph (numpy, gen_adj_mx.py style): sigma = std of the finite distances (numpy, population),
A = exp(-(dist / sigma)^2), entries below 0.1 zeroed; supports = [random_walk(A).T,
random_walk(A.T).T] with random_walk(M) = D^-1 M, so a diffusion step is a plain support @ X.
Diffusion terms per support: X, S X, 2 S (S X) - X; stacked [X, S_f X, T_2(f), S_b X, T_2(b)].

Torch idioms on this side:
- root `DCRNNModel`: `encoder_model` (EncoderModel) and `decoder_model` (DecoderModel) are
  ONE-STEP modules; the root permutes the input to time-major [T, B, N * 2] and drives them:
  6 encoder_model calls, then 4 decoder_model calls starting from a zero GO symbol and feeding
  each prediction back. Hidden states travel as one tensor [num_layers, B, N * 16].
- states are FLAT per sample, [B, N * 16]; every cell takes and returns flat tensors.
- `DCGRUCell` registers the non-persistent buffer `supports` [2, N, N] (already transposed),
  then its packed parameters directly (no conv module): `gate_weight` [(F) * 5, 32] and
  `gate_bias` [32] (r and u FUSED: columns 0:16 = r, 16:32 = u), `cand_weight` [(F) * 5, 16],
  `cand_bias` [16]. The diffusion conv is the cell's method `_gconv`: the terms are stacked
  [5, N, F * B], permuted to [B, N, F, 5] and flattened, so weight row f * 5 + m multiplies
  feature f of term m (feature-major, term-minor).
- `DecoderModel` has its own `projection_layer` nn.Linear(16, 1) applied to [B * N, 16].

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_x0_not_reset      -> _gconv copies the reference loop literally: `x1, x0 = x2, x1` is
                             never undone, so the backward support's recursion starts from the
                             forward chain's S_f X instead of X
  torch_dec_hidden_layer0 -> DecoderModel.forward hands hidden_state[0] to every layer (the
                             second decoder layer starts from the first layer's state)
"""
import os

import numpy as np
import torch
from torch import nn

NUM_NODES = 8
INPUT_DIM, OUTPUT_DIM, RNN_UNITS = 2, 1, 16
NUM_RNN_LAYERS, MAX_DIFFUSION_STEP = 2, 2
SEQ_LEN, HORIZON = 6, 4
NORMALIZED_K = 0.1
BATCH = 2
OWN_BUGS = {"torch_x0_not_reset", "torch_dec_hidden_layer0"}
OTHER_BUGS = {"paddle_sigma_unbiased", "paddle_update_gate_swapped"}

# (from sensor, to sensor, distance in metres), as in distances.csv; self-distances are 0
DISTANCES = [
    (0, 1, 612.0), (1, 2, 488.0), (2, 3, 731.0), (3, 4, 540.0), (4, 5, 866.0), (5, 6, 395.0),
    (6, 7, 654.0), (1, 0, 701.0), (3, 2, 802.0), (5, 4, 935.0), (7, 6, 577.0), (2, 5, 1120.0),
    (6, 1, 1245.0), (0, 3, 2460.0), (4, 7, 1080.0), (0, 2, 1100.0), (2, 0, 1190.0), (1, 3, 1219.0),
    (3, 5, 1406.0), (4, 6, 1261.0), (5, 7, 1049.0), (7, 5, 1231.0), (6, 4, 1330.0), (2, 4, 1271.0),
    (4, 2, 1342.0), (1, 4, 1759.0), (3, 6, 1795.0), (0, 4, 2011.0), (7, 3, 2127.0), (5, 1, 2083.0),
    (6, 2, 1938.0), (2, 7, 2205.0),
]


def get_adjacency_matrix(distances, num_nodes, normalized_k=NORMALIZED_K):
    dist_mx = np.full((num_nodes, num_nodes), np.inf, dtype=np.float32)
    for i in range(num_nodes):
        dist_mx[i, i] = 0.0
    for a, b, d in distances:
        dist_mx[a, b] = d
    std = dist_mx[~np.isinf(dist_mx)].flatten().std()
    adj_mx = np.exp(-np.square(dist_mx / std))
    adj_mx[adj_mx < normalized_k] = 0
    return adj_mx


def calculate_random_walk_matrix(adj_mx):
    d_inv = np.power(adj_mx.sum(1), -1.0)
    d_inv[np.isinf(d_inv)] = 0.0
    return np.diag(d_inv) @ adj_mx


class DCGRUCell(nn.Module):
    def __init__(self, input_dim, num_units, adj_mx, max_diffusion_step, num_nodes, x0_not_reset=False):
        super().__init__()
        self._num_nodes = num_nodes
        self._num_units = num_units
        self._max_diffusion_step = max_diffusion_step
        self._x0_not_reset = x0_not_reset
        supports = [calculate_random_walk_matrix(adj_mx).T, calculate_random_walk_matrix(adj_mx.T).T]
        self.register_buffer("supports", torch.tensor(np.stack(supports), dtype=torch.float32), persistent=False)
        num_matrices = len(supports) * max_diffusion_step + 1
        input_size = input_dim + num_units
        self.gate_weight = nn.Parameter(torch.empty(input_size * num_matrices, 2 * num_units))
        self.gate_bias = nn.Parameter(torch.full((2 * num_units,), 1.0))
        self.cand_weight = nn.Parameter(torch.empty(input_size * num_matrices, num_units))
        self.cand_bias = nn.Parameter(torch.zeros(num_units))
        nn.init.xavier_normal_(self.gate_weight)
        nn.init.xavier_normal_(self.cand_weight)

    def _gconv(self, inputs, state, weight, bias):
        batch_size = inputs.shape[0]
        inputs = inputs.reshape(batch_size, self._num_nodes, -1)
        state = state.reshape(batch_size, self._num_nodes, -1)
        inputs_and_state = torch.cat([inputs, state], dim=2)
        input_size = inputs_and_state.size(2)

        x0 = inputs_and_state.permute(1, 2, 0).reshape(self._num_nodes, input_size * batch_size)
        terms = [x0]
        x_start = x0
        for support in self.supports:
            if not self._x0_not_reset:
                x0 = x_start
            x1 = support @ x0
            terms.append(x1)
            for _ in range(2, self._max_diffusion_step + 1):
                x2 = 2 * (support @ x1) - x0
                terms.append(x2)
                x1, x0 = x2, x1
        x = torch.stack(terms, dim=0)  # [M, N, F * B]
        x = x.reshape(len(terms), self._num_nodes, input_size, batch_size)
        x = x.permute(3, 1, 2, 0).reshape(batch_size * self._num_nodes, input_size * len(terms))
        x = x @ weight + bias
        return x.reshape(batch_size, self._num_nodes * weight.shape[1])

    def forward(self, inputs, hx):
        value = torch.sigmoid(self._gconv(inputs, hx, self.gate_weight, self.gate_bias))
        value = value.reshape(-1, self._num_nodes, 2 * self._num_units)
        r, u = torch.split(value, self._num_units, dim=-1)
        r = r.reshape(-1, self._num_nodes * self._num_units)
        u = u.reshape(-1, self._num_nodes * self._num_units)
        c = torch.tanh(self._gconv(inputs, r * hx, self.cand_weight, self.cand_bias))
        return u * hx + (1.0 - u) * c


class EncoderModel(nn.Module):
    def __init__(self, adj_mx, x0_not_reset=False):
        super().__init__()
        self.hidden_state_size = NUM_NODES * RNN_UNITS
        self.dcgru_layers = nn.ModuleList(
            [DCGRUCell(INPUT_DIM, RNN_UNITS, adj_mx, MAX_DIFFUSION_STEP, NUM_NODES, x0_not_reset)]
            + [DCGRUCell(RNN_UNITS, RNN_UNITS, adj_mx, MAX_DIFFUSION_STEP, NUM_NODES, x0_not_reset)
               for _ in range(NUM_RNN_LAYERS - 1)])

    def forward(self, inputs, hidden_state=None):
        batch_size = inputs.shape[0]
        if hidden_state is None:
            hidden_state = torch.zeros(NUM_RNN_LAYERS, batch_size, self.hidden_state_size, dtype=inputs.dtype)
        hidden_states = []
        output = inputs
        for layer_num, dcgru_layer in enumerate(self.dcgru_layers):
            next_hidden_state = dcgru_layer(output, hidden_state[layer_num])
            hidden_states.append(next_hidden_state)
            output = next_hidden_state
        return output, torch.stack(hidden_states)


class DecoderModel(nn.Module):
    def __init__(self, adj_mx, x0_not_reset=False, hidden_layer0=False):
        super().__init__()
        self.hidden_layer0 = hidden_layer0
        self.dcgru_layers = nn.ModuleList(
            [DCGRUCell(OUTPUT_DIM, RNN_UNITS, adj_mx, MAX_DIFFUSION_STEP, NUM_NODES, x0_not_reset)]
            + [DCGRUCell(RNN_UNITS, RNN_UNITS, adj_mx, MAX_DIFFUSION_STEP, NUM_NODES, x0_not_reset)
               for _ in range(NUM_RNN_LAYERS - 1)])
        self.projection_layer = nn.Linear(RNN_UNITS, OUTPUT_DIM)

    def forward(self, inputs, hidden_state):
        hidden_states = []
        output = inputs
        for layer_num, dcgru_layer in enumerate(self.dcgru_layers):
            h_in = hidden_state[0] if self.hidden_layer0 else hidden_state[layer_num]
            next_hidden_state = dcgru_layer(output, h_in)
            hidden_states.append(next_hidden_state)
            output = next_hidden_state
        projected = self.projection_layer(output.view(-1, RNN_UNITS))
        output = projected.view(-1, NUM_NODES * OUTPUT_DIM)
        return output, torch.stack(hidden_states)


class DCRNNModel(nn.Module):
    def __init__(self, x0_not_reset=False, dec_hidden_layer0=False):
        super().__init__()
        adj_mx = get_adjacency_matrix(DISTANCES, NUM_NODES)
        self.encoder_model = EncoderModel(adj_mx, x0_not_reset)
        self.decoder_model = DecoderModel(adj_mx, x0_not_reset, dec_hidden_layer0)

    def encoder(self, inputs):
        encoder_hidden_state = None
        for t in range(SEQ_LEN):
            _, encoder_hidden_state = self.encoder_model(inputs[t], encoder_hidden_state)
        return encoder_hidden_state

    def decoder(self, encoder_hidden_state):
        batch_size = encoder_hidden_state.size(1)
        go_symbol = torch.zeros(batch_size, NUM_NODES * OUTPUT_DIM, dtype=encoder_hidden_state.dtype)
        decoder_hidden_state = encoder_hidden_state
        decoder_input = go_symbol
        outputs = []
        for _ in range(HORIZON):
            decoder_output, decoder_hidden_state = self.decoder_model(decoder_input, decoder_hidden_state)
            decoder_input = decoder_output
            outputs.append(decoder_output)
        return torch.stack(outputs)  # [HORIZON, B, N * OUTPUT_DIM]

    def forward(self, x):
        # x [B, T, N, INPUT_DIM] -> time-major flat [T, B, N * INPUT_DIM]
        batch_size = x.shape[0]
        inputs = x.permute(1, 0, 2, 3).reshape(SEQ_LEN, batch_size, NUM_NODES * INPUT_DIM)
        outputs = self.decoder(self.encoder(inputs))
        return outputs.view(HORIZON, batch_size, NUM_NODES, OUTPUT_DIM).permute(1, 0, 2, 3)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dcrnn torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DCRNNModel(x0_not_reset=bug == "torch_x0_not_reset", dec_hidden_layer0=bug == "torch_dec_hidden_layer0")
    return m.eval()


def _series():
    rng = np.random.default_rng(3)
    speed = rng.standard_normal((BATCH, SEQ_LEN, NUM_NODES, 1))
    tod = (np.arange(SEQ_LEN) / 288.0 + 0.3)[None, :, None, None] + np.zeros((BATCH, 1, NUM_NODES, 1))
    tod[1] += 0.25
    return np.concatenate([speed, tod], axis=-1).astype("float32")


def inputs():
    return (torch.from_numpy(_series()),), {}


def loss(output):
    # predictions [2, 4, 8, 1]
    return (output**2).mean()
