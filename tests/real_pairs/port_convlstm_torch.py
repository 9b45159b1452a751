"""Hand-written port, torch side: a 2-layer ConvLSTM sequence model (Shi et al., 2015) (written by "person B").

The same math as port_convlstm_paddle.py, re-implemented by hand: input `frames`
[2, 4, 3, 8, 8] ([B, T, C, H, W], positional), two stacked peephole ConvLSTM cells (3 -> 8,
8 -> 8 channels, 3x3 "same" convs, zero initial states), a 1x1 `readout` conv (8 -> 2) on the
top layer's hidden state after the last step: output [2, 2, 8, 8].

Torch idioms on this side:
- root `ConvLSTMForecaster`: `rnn` (`StackedConvLSTM`), `readout` nn.Conv2d(8, 2, 1).
- `StackedConvLSTM`: `layers` ModuleList of two `PeepholeConvLSTMCell`; TIME-MAJOR loops (at
  each step, layer 0 then layer 1), states kept in a list; returns (top-layer outputs stacked
  on dim 1, (h, c) of the top layer).
- `PeepholeConvLSTMCell` registers ONE packed `peephole` [3, 8, 8, 8] (rows: i, f, o) first,
  then TWO convs: `conv_x` nn.Conv2d(in, 4 * 8, 3, padding=1) on the input (with the bias) and
  `conv_h` nn.Conv2d(8, 4 * 8, 3, padding=1, bias=False) on the hidden state; their summed
  output is chunked into gates in the order (i, f, g, o) (the PyTorch nn.LSTM order).
  The optional `cell_clip` (TF LSTMCell style) is off.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_state_reset_each_step -> StackedConvLSTM.forward (re)creates the zero states inside the
                                 time loop, so every step starts from h = c = 0
  torch_cell_clip             -> the cells are built with cell_clip=2.0 (a TF config value copied
                                 over), which clamps c to [-2, 2] before the output gate
"""
import os

import numpy as np
import torch
from torch import nn

INPUT_CHANNELS, HIDDEN_CHANNELS, NUM_LAYERS, OUT_CHANNELS = 3, 8, 2, 2
FRAME, TIME_STEPS = 8, 4
BATCH = 2
CLIP_FROM_TF_CONFIG = 2.0
OWN_BUGS = {"torch_state_reset_each_step", "torch_cell_clip"}
OTHER_BUGS = {"paddle_peephole_o_prev_c", "paddle_returns_first_layer"}


class PeepholeConvLSTMCell(nn.Module):
    def __init__(self, in_channels, hidden_channels, cell_clip=None):
        super().__init__()
        self.hidden_channels = hidden_channels
        self.cell_clip = cell_clip
        self.peephole = nn.Parameter(torch.zeros(3, hidden_channels, FRAME, FRAME))
        self.conv_x = nn.Conv2d(in_channels, 4 * hidden_channels, 3, padding=1)
        self.conv_h = nn.Conv2d(hidden_channels, 4 * hidden_channels, 3, padding=1, bias=False)

    def forward(self, x, state):
        h, c = state
        i, f, g, o = (self.conv_x(x) + self.conv_h(h)).chunk(4, dim=1)
        i = torch.sigmoid(i + self.peephole[0] * c)
        f = torch.sigmoid(f + self.peephole[1] * c)
        c = f * c + i * torch.tanh(g)
        if self.cell_clip is not None:
            c = c.clamp(-self.cell_clip, self.cell_clip)
        o = torch.sigmoid(o + self.peephole[2] * c)
        h = o * torch.tanh(c)
        return h, c


class StackedConvLSTM(nn.Module):
    def __init__(self, cell_clip=None, reset_each_step=False):
        super().__init__()
        self.reset_each_step = reset_each_step
        self.layers = nn.ModuleList(
            [
                PeepholeConvLSTMCell(INPUT_CHANNELS if k == 0 else HIDDEN_CHANNELS, HIDDEN_CHANNELS, cell_clip)
                for k in range(NUM_LAYERS)
            ]
        )

    def _zero_states(self, ref):
        b = ref.shape[0]
        return [
            (ref.new_zeros(b, cell.hidden_channels, FRAME, FRAME), ref.new_zeros(b, cell.hidden_channels, FRAME, FRAME))
            for cell in self.layers
        ]

    def forward(self, frames):
        states = self._zero_states(frames)
        outputs = []
        for t in range(frames.shape[1]):
            if self.reset_each_step:
                states = self._zero_states(frames)
            x = frames[:, t]
            for k, cell in enumerate(self.layers):
                states[k] = cell(x, states[k])
                x = states[k][0]
            outputs.append(x)
        return torch.stack(outputs, dim=1), states[-1]


class ConvLSTMForecaster(nn.Module):
    def __init__(self, cell_clip=None, reset_each_step=False):
        super().__init__()
        self.rnn = StackedConvLSTM(cell_clip, reset_each_step)
        self.readout = nn.Conv2d(HIDDEN_CHANNELS, OUT_CHANNELS, kernel_size=1)

    def forward(self, frames):
        _, (h, _c) = self.rnn(frames)
        return self.readout(h)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_convlstm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ConvLSTMForecaster(
        cell_clip=CLIP_FROM_TF_CONFIG if bug == "torch_cell_clip" else None,
        reset_each_step=bug == "torch_state_reset_each_step",
    )
    return m.eval()


def _frames():
    rng = np.random.default_rng(68)
    return rng.standard_normal((BATCH, TIME_STEPS, INPUT_CHANNELS, FRAME, FRAME)).astype("float32")


def inputs():
    return (torch.from_numpy(_frames()),), {}


def loss(output):
    # read-out map [2, 2, 8, 8]
    return (output**2).mean()
