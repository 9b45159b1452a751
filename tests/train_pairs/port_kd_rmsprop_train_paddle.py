"""Hand-written port in TRAINING mode, paddle side (written by "person A"): knowledge
distillation from a frozen teacher MLP into a student MLP, RMSProp, 3 steps, a new batch every
step.

    Distiller: registers student (StudentNet), teacher (TeacherNet); forward(x):
        s = student(x); under paddle.no_grad(): t = teacher(x); return (s, t)   # logits [16, 10]
        train() is overridden: the Layer goes to train mode, the teacher stays in eval mode
    StudentNet: layers = Sequential(Linear 16 -> 32, LayerNorm 32, GELU, Linear 32 -> 10) (.0-.3)
    TeacherNet: fc1 (Linear 16 -> 64), relu (functional), drop (Dropout 0.1: off, the teacher is
        in eval mode), fc2 (Linear 64 -> 10)

Teacher: frozen (stop_gradient=True on its parameters, not given to the optimizer), weights
"pretrained": N(0, 0.4) matrices, N(0, 0.2) biases from paddle.seed(1).
Loss: alpha T^2 KL(softmax(t / T) || softmax(s / T)) + (1 - alpha) CE(s, y, label_smoothing 0.1),
T = 4, alpha = 0.7; KL by F.kl_div(log_softmax(s / T), softmax(t / T), reduction="batchmean");
CE by F.cross_entropy(..., label_smoothing=0.1).
Optimizer: paddle.optimizer.RMSProp(learning_rate 1e-3, rho 0.9, epsilon 1e-6, momentum 0,
centered False) over the student: r <- rho r + (1 - rho) g^2; p <- p - lr g / sqrt(r + eps)
(paddle puts epsilon INSIDE the square root).
Data: inputs(step): default_rng(5300 + step): x [16, 16] N(0, 1), labels [16] in 0..9.
Init (person A): paddle.seed(0); the student redrawn trained-looking (_train_common.randomize_paddle:
matrices N(0, 0.2), biases N(0, 0.1), LayerNorm scale 1 + N(0, 0.1)).

PADIFF_BUG (this side only):
  paddle_kl_mean -> F.kl_div(..., reduction="mean"): the KL summed over the elements is divided
                    by batch x classes (160) instead of the batch (16): the distillation term is
                    10 times too small
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug, randomize_paddle
from paddle import nn

BUGS = {"paddle_kl_mean"} | {"eps_outside", "teacher_train_mode"}  # the torch side's, ignored here
IN_DIM, S_HIDDEN, T_HIDDEN, N_CLASSES, BATCH = 16, 32, 64, 10, 16
TEMPERATURE, ALPHA, SMOOTHING = 4.0, 0.7, 0.1
LR, RHO, EPSILON = 1e-3, 0.9, 1e-6

_LABELS = {}


def batch(step):
    rng = np.random.default_rng(5300 + step)
    x = rng.standard_normal((BATCH, IN_DIM)).astype("float32")
    y = rng.integers(0, N_CLASSES, BATCH).astype("int64")
    return x, y


class StudentNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(IN_DIM, S_HIDDEN), nn.LayerNorm(S_HIDDEN), nn.GELU(),
                                    nn.Linear(S_HIDDEN, N_CLASSES))

    def forward(self, x):
        return self.layers(x)


class TeacherNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IN_DIM, T_HIDDEN)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(T_HIDDEN, N_CLASSES)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


class Distiller(nn.Layer):
    def __init__(self):
        super().__init__()
        self.student = StudentNet()
        self.teacher = TeacherNet()
        randomize_paddle(self.student, std=0.2, seed=0)
        paddle.seed(1)
        for _name, p in self.teacher.named_parameters():
            p.set_value(paddle.normal(0.0, 0.4 if p.ndim >= 2 else 0.2, p.shape).astype(p.dtype))
            p.stop_gradient = True

    def train(self):
        super().train()
        self.teacher.eval()  # a frozen teacher predicts in eval mode
        return self

    def forward(self, x):
        s = self.student(x)
        with paddle.no_grad():
            t = self.teacher(x)
        return s, t


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = Distiller()
    m.train()
    return m


def inputs(step=0):
    x, y = batch(step)
    _LABELS["y"] = y
    return (paddle.to_tensor(x),), {}


def loss(output):
    s, t = output
    y = paddle.to_tensor(_LABELS["y"])
    log_q = F.log_softmax(s / TEMPERATURE, axis=-1)
    p = F.softmax(t / TEMPERATURE, axis=-1)
    reduction = "mean" if bug(BUGS) == "paddle_kl_mean" else "batchmean"
    kd = F.kl_div(log_q, p, reduction=reduction) * (TEMPERATURE * TEMPERATURE)
    ce = F.cross_entropy(s, y, label_smoothing=SMOOTHING)
    return ALPHA * kd + (1.0 - ALPHA) * ce


def optimizer(model):
    return paddle.optimizer.RMSProp(learning_rate=LR, rho=RHO, epsilon=EPSILON, momentum=0.0, centered=False,
                                    parameters=model.student.parameters())
