"""Hand-written port, torch side: a neural ODE classifier (written by "person B").

The same math as port_neural_ode_paddle.py, re-implemented by hand: input `x` float32 [8, 6]
(positional), encoder Linear(6, 16) -> LayerNorm(16) -> Tanh, a 16-d ODE integrated from t = 0
to 1.5 with 3 fixed steps of classic RK4 (12 evaluations of the dynamics), then a Linear(16, 4)
classifier: logits [8, 4].

Torch idioms on this side:
- root `ODEClassifier` registers `features` (ODEFeatures) and `classifier` (nn.Linear(16, 4)).
- `ODEFeatures` registers `encoder` = nn.Sequential(nn.Linear(6, 16), nn.LayerNorm(16),
  nn.Tanh()), `dynamics` (Dynamics) and a non-persistent buffer `t_grid` =
  torch.linspace(0, 1.5, 4). There is NO solver module: the RK4 loop is written inline in
  ODEFeatures.forward, with t and dt as 0-d tensors taken from the grid.
- `Dynamics(t, y)`: time enters ADDITIVELY, as in a "time-as-bias" layer:
    z = act(fc1(y) + t * time1);  dy/dt = fc2(z) + t * time2
  with `fc1` nn.Linear(16, 32), `time1` [32], `act` nn.Tanh, `fc2` nn.Linear(32, 16), `time2`
  [16] (registered in that order). This equals the paddle side's concat linears whose time row
  is `time1` / `time2`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_stage_time_full_step -> the inline loop evaluates the two middle stages k2, k3 at
                                t + dt instead of t + dt/2 (the state arguments are right)
  torch_dynamics_output_tanh -> Dynamics squashes its output through `act` as well:
                                act(fc2(z) + t * time2)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_FEATURES, STATE, HIDDEN, CLASSES = 6, 16, 32, 4
N_STEPS, T_END = 3, 1.5
BATCH = 8
OWN_BUGS = {"torch_stage_time_full_step", "torch_dynamics_output_tanh"}
OTHER_BUGS = {"paddle_rk4_38_rule", "paddle_time_column_last"}


class Dynamics(nn.Module):
    def __init__(self, state, hidden, output_tanh=False):
        super().__init__()
        self.output_tanh = output_tanh
        self.fc1 = nn.Linear(state, hidden)
        self.time1 = nn.Parameter(torch.zeros(hidden))
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(hidden, state)
        self.time2 = nn.Parameter(torch.zeros(state))

    def forward(self, t, y):
        z = self.act(self.fc1(y) + t * self.time1)
        out = self.fc2(z) + t * self.time2
        if self.output_tanh:
            out = self.act(out)
        return out


class ODEFeatures(nn.Module):
    def __init__(self, n_steps=N_STEPS, stage_time_full=False, output_tanh=False):
        super().__init__()
        self.stage_time_full = stage_time_full
        self.encoder = nn.Sequential(nn.Linear(IN_FEATURES, STATE), nn.LayerNorm(STATE), nn.Tanh())
        self.dynamics = Dynamics(STATE, HIDDEN, output_tanh)
        self.register_buffer("t_grid", torch.linspace(0.0, T_END, n_steps + 1), persistent=False)

    def forward(self, x):
        y = self.encoder(x)
        for i in range(len(self.t_grid) - 1):
            t, dt = self.t_grid[i], self.t_grid[i + 1] - self.t_grid[i]
            t_mid = t + dt if self.stage_time_full else t + dt / 2
            k1 = self.dynamics(t, y)
            k2 = self.dynamics(t_mid, y + dt / 2 * k1)
            k3 = self.dynamics(t_mid, y + dt / 2 * k2)
            k4 = self.dynamics(t + dt, y + dt * k3)
            y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y


class ODEClassifier(nn.Module):
    def __init__(self, stage_time_full=False, output_tanh=False):
        super().__init__()
        self.features = ODEFeatures(stage_time_full=stage_time_full, output_tanh=output_tanh)
        self.classifier = nn.Linear(STATE, CLASSES)

    def forward(self, x):
        return self.classifier(self.features(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_neural_ode torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ODEClassifier(stage_time_full=bug == "torch_stage_time_full_step",
                      output_tanh=bug == "torch_dynamics_output_tanh")
    return m.eval()


def _x():
    return np.random.default_rng(31).standard_normal((BATCH, IN_FEATURES)).astype("float32")


def inputs():
    return (torch.from_numpy(_x()),), {}


def loss(output):
    # logits [8, 4] against fixed labels: cross-entropy
    labels = torch.tensor([0, 1, 2, 3, 3, 2, 1, 0], dtype=torch.int64)
    return F.cross_entropy(output, labels)
