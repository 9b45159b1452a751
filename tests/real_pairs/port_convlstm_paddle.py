"""Hand-written port, paddle side: a 2-layer ConvLSTM sequence model (Shi et al., 2015) (written by "person A").

Input: one clip `frames` [2, 4, 3, 8, 8] (positional, [B, T, C, H, W], numpy rng seed 68,
standard normal). Output: a 2-channel map [2, 2, 8, 8] read out by a 1x1 conv from the last
layer's hidden state after the last time step.

Two stacked ConvLSTM cells (3 -> 8 and 8 -> 8 channels, 3x3 kernels, "same" padding), zero
initial states, with Hadamard peepholes (per channel and pixel, [8, 8, 8] each):
  i = sigmoid(W_xi * x + W_hi * h + w_ci o c_prev + b_i)
  f = sigmoid(W_xf * x + W_hf * h + w_cf o c_prev + b_f)
  g = tanh(W_xg * x + W_hg * h + b_g)
  c = f o c_prev + i o g
  o = sigmoid(W_xo * x + W_ho * h + w_co o c + b_o)      (the output peephole sees the NEW c)
  h = o o tanh(c)

Paddle idioms on this side (close to the widely copied ndrplz ConvLSTM code):
- root `ConvLSTMModel`: `encoder` (`ConvLSTM`) and `head` nn.Conv2D(8, 2, 1); the root takes
  the last layer's final h from the encoder's `last_state_list` and applies the head.
- `ConvLSTM`: `cell_list` LayerList of two `ConvLSTMCell`; LAYER-MAJOR loops (layer 0 over all
  4 steps, then layer 1 over the stacked layer-0 outputs); returns (layer_output_list,
  last_state_list), each holding the last layer only (return_all_layers=False).
- `ConvLSTMCell`: ONE `conv` nn.Conv2D(in + 8, 4 * 8, 3, padding=1) over concat([x, h]) whose
  output channels are the gates in the order (i, f, o, g); the peepholes are three parameters
  `w_ci`, `w_cf`, `w_co` [8, 8, 8] created after the conv. The gate math is inline.
- model() gives the conv weights, the biases (forget-gate block +1), the peepholes and the head
  seeded trained-looking values (rng seed 6868).

The torch side (port_convlstm_torch.py) was written independently.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_peephole_o_prev_c   -> the output-gate peephole multiplies w_co with the PREVIOUS cell
                                state c_prev instead of the new c (in every cell)
  paddle_returns_first_layer -> ConvLSTM.forward keeps layer_output_list[:1] / last_state_list[:1]
                                (the first layer) instead of [-1:] (the last layer) when
                                return_all_layers is off
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, HIDDEN, OUT_CH = 3, (8, 8), 2
KERNEL = 3
SIZE, STEPS = 8, 4
BATCH = 2
WEIGHT_GAIN = 2.0  # conv kernels: uniform, std 2 / sqrt(fan_in)
OWN_BUGS = {"paddle_peephole_o_prev_c", "paddle_returns_first_layer"}
OTHER_BUGS = {"torch_state_reset_each_step", "torch_cell_clip"}


class ConvLSTMCell(nn.Layer):
    def __init__(self, input_dim, hidden_dim, o_prev_c=False):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.o_prev_c = o_prev_c
        self.conv = nn.Conv2D(input_dim + hidden_dim, 4 * hidden_dim, KERNEL, padding=KERNEL // 2,
                              data_format="NCHW")
        shape = [hidden_dim, SIZE, SIZE]
        zero = nn.initializer.Constant(0.0)
        self.w_ci = self.create_parameter(shape, default_initializer=zero)
        self.w_cf = self.create_parameter(shape, default_initializer=zero)
        self.w_co = self.create_parameter(shape, default_initializer=zero)

    def forward(self, input_tensor, cur_state):
        h_cur, c_cur = cur_state
        combined = paddle.concat([input_tensor, h_cur], axis=1)
        cc_i, cc_f, cc_o, cc_g = paddle.split(self.conv(combined), 4, axis=1)
        i = F.sigmoid(cc_i + self.w_ci * c_cur)
        f = F.sigmoid(cc_f + self.w_cf * c_cur)
        g = paddle.tanh(cc_g)
        c_next = f * c_cur + i * g
        o = F.sigmoid(cc_o + self.w_co * (c_cur if self.o_prev_c else c_next))
        h_next = o * paddle.tanh(c_next)
        return h_next, c_next

    def init_hidden(self, batch_size):
        z = paddle.zeros([batch_size, self.hidden_dim, SIZE, SIZE], dtype="float32")
        return z, z


class ConvLSTM(nn.Layer):
    def __init__(self, o_prev_c=False, first_layer=False, return_all_layers=False):
        super().__init__()
        self.first_layer = first_layer
        self.return_all_layers = return_all_layers
        dims = [IN_CH, *HIDDEN[:-1]]
        self.cell_list = nn.LayerList([ConvLSTMCell(dims[k], HIDDEN[k], o_prev_c) for k in range(len(HIDDEN))])

    def forward(self, input_tensor):
        b, seq_len = input_tensor.shape[0], input_tensor.shape[1]
        layer_output_list, last_state_list = [], []
        cur_layer_input = input_tensor
        for cell in self.cell_list:
            h, c = cell.init_hidden(b)
            output_inner = []
            for t in range(seq_len):
                h, c = cell(cur_layer_input[:, t], [h, c])
                output_inner.append(h)
            layer_output = paddle.stack(output_inner, axis=1)
            cur_layer_input = layer_output
            layer_output_list.append(layer_output)
            last_state_list.append([h, c])
        if not self.return_all_layers:
            keep = slice(None, 1) if self.first_layer else slice(-1, None)
            layer_output_list = layer_output_list[keep]
            last_state_list = last_state_list[keep]
        return layer_output_list, last_state_list


class ConvLSTMModel(nn.Layer):
    def __init__(self, o_prev_c=False, first_layer=False):
        super().__init__()
        self.encoder = ConvLSTM(o_prev_c, first_layer)
        self.head = nn.Conv2D(HIDDEN[-1], OUT_CH, 1, data_format="NCHW")

    def forward(self, frames):
        _, last_states = self.encoder(frames)
        h_last = last_states[-1][0]
        return self.head(h_last)


def _trained_look(m):
    rng = np.random.default_rng(6868)
    for name, p in m.named_parameters():
        shape = tuple(p.shape)
        if name.endswith(("w_ci", "w_cf", "w_co")):
            val = rng.normal(0.0, 0.3, shape)
        elif name.endswith("conv.weight"):
            val = rng.uniform(-1.0, 1.0, shape) * np.sqrt(3.0 / np.prod(shape[1:])) * WEIGHT_GAIN
        elif name.endswith("conv.bias"):
            val = rng.normal(0.0, 0.2, shape)
            hid = shape[0] // 4
            val[hid : 2 * hid] += 1.0  # forget-gate block (order i, f, o, g)
        elif name.endswith("weight"):
            val = rng.uniform(-1.0, 1.0, shape) * np.sqrt(3.0 / np.prod(shape[1:])) * WEIGHT_GAIN
        else:
            val = rng.normal(0.0, 0.1, shape)
        p.set_value(val.astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_convlstm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ConvLSTMModel(o_prev_c=bug == "paddle_peephole_o_prev_c", first_layer=bug == "paddle_returns_first_layer")
    _trained_look(m)
    m.eval()
    return m


def _frames():
    rng = np.random.default_rng(68)
    return rng.standard_normal((BATCH, STEPS, IN_CH, SIZE, SIZE)).astype("float32")


def inputs():
    return (paddle.to_tensor(_frames()),), {}


def loss(output):
    # read-out map [2, 2, 8, 8]
    return (output**2).mean()
