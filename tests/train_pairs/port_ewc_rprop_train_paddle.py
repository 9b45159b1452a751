"""Hand-written port in TRAINING mode, paddle side (written by "person A"): continual learning with
Elastic Weight Consolidation - training on task B while pulled towards the task-A solution -, a
small dropout MLP, full-batch Rprop, 3 steps.

    EWCClassifier: registers net = Sequential(Dropout 0.2, Linear 16 -> 32, ReLU, Dropout 0.5,
        Linear 32 -> 32, ReLU, Dropout 0.5, Linear 32 -> 4) (.0 - .7; the input / hidden dropout of
        Kirkpatrick et al.'s MNIST experiments), then the EWC state of task A as persistent
        BUFFERS of the root, two per parameter: star_<param> (theta*, the task-A weights) and
        fisher_<param> (the diagonal Fisher information), e.g. star_net_1_weight [16, 32]
    forward(x [32, 16]) -> logits [32, 4]; ewc_penalty() -> sum_i F_i (theta_i - theta*_i)^2

Data (numpy, shared recipe): default_rng(3434): task-B inputs N(0, 1) [32, 16], labels = argmax of a
fixed random linear teacher (4 classes); the same full batch every step (Rprop is a full-batch
method). Task-A state: default_rng(3435), in torch layout [out, in] per tensor (the checkpoint's
layout; transposed here): theta* weights N(0, 0.3), biases N(0, 0.1); the model starts part-way
into task B at theta* + N(0, 0.05); Fisher diagonal 0.02 * chi2(1) + 1e-4 (heavy-tailed, positive).
Loss: F.cross_entropy(logits, labels) + LAMBDA / 2 * ewc_penalty(), LAMBDA = 20.
Optimizer: paddle.optimizer.Rprop(learning_rate 0.01, learning_rate_range (1e-6, 50),
etas (0.5, 1.2)): torch.optim.Rprop's semantics (checked: identical updates in float64 and
float32 for these settings; both frameworks' defaults differ - see the bug).

PADIFF_BUG (this side only):
  paddle_rprop_defaults -> paddle.optimizer.Rprop(parameters=...) with paddle's defaults, taken for
              torch's: learning_rate 0.001 (torch lr 0.01: the initial step size) and
              learning_rate_range (1e-5, 50) (torch step_sizes (1e-6, 50)); etas agree
  paddle_input_dropout -> the input dropout built as nn.Dropout(HIDDEN_DROP) (0.5, the hidden
              layers' rate) instead of nn.Dropout(INPUT_DROP) (0.2)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_rprop_defaults", "paddle_input_dropout"} | {"torch_ewc_no_half"}  # the torch side's, ignored here
N_IN, N_HID, N_CLS, N_SAMPLES = 16, 32, 4, 32
INPUT_DROP, HIDDEN_DROP = 0.2, 0.5
LAMBDA = 20.0
LR, LR_RANGE, ETAS = 0.01, (1e-6, 50.0), (0.5, 1.2)

# (paddle sublayer, torch-layout shapes) in the checkpoint's order
_LAYERS = [("net.1", (N_HID, N_IN)), ("net.4", (N_HID, N_HID)), ("net.7", (N_CLS, N_HID))]


def task_b_data():
    rng = np.random.default_rng(3434)
    x = rng.standard_normal((N_SAMPLES, N_IN)).astype("float32")
    teacher = rng.standard_normal((N_IN, N_CLS))
    y = np.argmax(x @ teacher, axis=1).astype("int64")
    return x, y


def task_a_state():
    """{(sublayer, "weight"|"bias"): (theta*, start, fisher)}, numpy, torch layout [out, in]."""
    rng = np.random.default_rng(3435)
    out = {}
    for layer, (o, i) in _LAYERS:
        for kind, shape, std in (("weight", (o, i), 0.3), ("bias", (o,), 0.1)):
            star = rng.normal(0.0, std, shape)
            start = star + rng.normal(0.0, 0.05, shape)
            fisher = 0.02 * rng.chisquare(1, shape) + 1e-4
            out[(layer, kind)] = tuple(a.astype("float32") for a in (star, start, fisher))
    return out


class EWCClassifier(nn.Layer):
    def __init__(self):
        super().__init__()
        p_in = HIDDEN_DROP if bug(BUGS) == "paddle_input_dropout" else INPUT_DROP
        self.net = nn.Sequential(
            nn.Dropout(p_in),
            nn.Linear(N_IN, N_HID), nn.ReLU(), nn.Dropout(HIDDEN_DROP),
            nn.Linear(N_HID, N_HID), nn.ReLU(), nn.Dropout(HIDDEN_DROP),
            nn.Linear(N_HID, N_CLS),
        )
        state = task_a_state()
        for (layer, kind), arrays in state.items():
            sub = dict(self.named_sublayers())[layer]
            # paddle Linear weight [in, out]: the checkpoint's [out, in] transposed
            star, start, fisher = (np.ascontiguousarray(a.T if kind == "weight" else a) for a in arrays)
            getattr(sub, kind).set_value(start)
            key = f"{layer}.{kind}".replace(".", "_")
            self.register_buffer(f"star_{key}", paddle.to_tensor(star))
            self.register_buffer(f"fisher_{key}", paddle.to_tensor(fisher))

    def forward(self, x):
        return self.net(x)

    def ewc_penalty(self):
        total = 0.0
        for name, p in self.net.named_parameters():
            key = f"net.{name}".replace(".", "_")
            star = getattr(self, f"star_{key}").astype(p.dtype)
            fisher = getattr(self, f"fisher_{key}").astype(p.dtype)
            total = total + (fisher * (p - star) ** 2).sum()
        return total


_MODEL = {}
_Y = {}


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(34)
    m = EWCClassifier()
    m.train()
    _MODEL["m"] = m
    return m


def inputs():
    x, y = task_b_data()
    _Y["y"] = y
    return (paddle.to_tensor(x),), {}


def loss(output):
    ce = F.cross_entropy(output, paddle.to_tensor(_Y["y"]))
    return ce + LAMBDA / 2.0 * _MODEL["m"].ewc_penalty()


def optimizer(model):
    if bug(BUGS) == "paddle_rprop_defaults":
        return paddle.optimizer.Rprop(parameters=model.parameters())
    return paddle.optimizer.Rprop(learning_rate=LR, learning_rate_range=LR_RANGE, etas=ETAS,
                                  parameters=model.parameters())
