"""Hand-written port in TRAINING mode, paddle side (written by "person A"): knowledge distillation
of a small student classifier from a fixed teacher, trained with averaged SGD, 3 steps.

    KDNet: registers student (StudentMLP: fc1 Linear 12 -> 32, norm LayerNorm(32), dropout
        Dropout(0.1), fc2 Linear 32 -> 5; F.gelu inline), then teacher (TeacherMLP: hidden
        Linear 12 -> 48, dropout Dropout(0.1), head Linear 48 -> 5; paddle.tanh inline; every
        parameter stop_gradient=True). forward(x) calls the TEACHER FIRST (under paddle.no_grad),
        then the student, and returns (student_logits [16, 5], teacher_logits [16, 5]).
    KDNet.train() keeps the teacher in inference mode (its sublayers' `training` flags are
        reset to False; Layer.eval() is not used because it also switches the global tracer).

Data: inputs(step): 16 samples from default_rng(4700 + step): features [16, 12] N(0, 1) (the
model input) and hard labels in 0..4 (kept by the spec for loss()).
Loss (Hinton distillation): T = 4, KD weight 0.7;
    kd = F.kl_div(log_softmax(s / T), softmax(t / T), reduction="batchmean") * T * T
    loss = 0.7 * kd + 0.3 * F.cross_entropy(s, labels)
Optimizer: averaged SGD written by hand (paddle.optimizer.ASGD is NOT this algorithm: it is the
SAG method, "Minimizing Finite Sums with the Stochastic Average Gradient", with a table of past
gradients per batch index), with the semantics of torch.optim.ASGD / Bottou's ASGD:
    update k (k = 1, 2, ...): eta_k = lr / (1 + lambd * lr * (k - 1)) ** alpha
                              p <- p * (1 - lambd * eta_k) - eta_k * grad
                              average <- average + mu_k * (p - average),
                              mu_k = 1 / max(1, k - 1 - t0) (mu_1 = 1: the average starts at p)
    lr 0.2, lambd 0.02 (a strong decay term, so that it and the eta schedule show within 3
    steps), alpha 0.75, t0 0, no weight decay. The running average lives in the optimizer
    (`averaged()` returns it), the model holds the SGD iterate, as in torch.optim.ASGD.
Init (person A): paddle.seed(0), paddle's default Linear init for the student, LayerNorm
weight U(0.6, 1.4) / bias N(0, 0.1), teacher weights from default_rng(4747) (a fixed,
"pretrained" teacher: N(0, 0.5) hidden, N(0, 0.6) head, biases N(0, 0.1)).

PADIFF_BUG (this side only; the torch side's names are accepted and ignored):
  paddle_kd_mean      -> F.kl_div(log_p, q) with paddle's default reduction "mean" (averaged over
              all 16 x 5 elements instead of over the batch): the KD term is 5x smaller
  paddle_eta_ahead    -> the hand-written ASGD computes eta from the step counter AFTER
              incrementing it, eta_k = lr / (1 + lambd * lr * k) ** alpha: the schedule runs one
              update ahead (already decayed at update 1)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_kd_mean", "paddle_eta_ahead"} | {"torch_teacher_train"}  # the torch side's, ignored here
IN_DIM, STUDENT_HIDDEN, TEACHER_HIDDEN, N_CLASSES, BATCH = 12, 32, 48, 5, 16
TEMPERATURE, KD_WEIGHT = 4.0, 0.7
LR, LAMBD, ALPHA, T0 = 0.2, 0.02, 0.75, 0.0

_BATCH = {}


def batch(step):
    rng = np.random.default_rng(4700 + step)
    x = rng.standard_normal((BATCH, IN_DIM)).astype("float32")
    y = rng.integers(0, N_CLASSES, BATCH).astype("int64")
    return x, y


class StudentMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IN_DIM, STUDENT_HIDDEN)
        self.norm = nn.LayerNorm(STUDENT_HIDDEN)
        self.dropout = nn.Dropout(0.1)
        self.fc2 = nn.Linear(STUDENT_HIDDEN, N_CLASSES)

    def forward(self, x):
        return self.fc2(self.dropout(F.gelu(self.norm(self.fc1(x)))))


class TeacherMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(IN_DIM, TEACHER_HIDDEN)
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(TEACHER_HIDDEN, N_CLASSES)

    def forward(self, x):
        return self.head(self.dropout(paddle.tanh(self.hidden(x))))


class KDNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.student = StudentMLP()
        self.teacher = TeacherMLP()
        for p in self.teacher.parameters():
            p.stop_gradient = True

    def train(self, mode=True):
        super().train(mode)
        for layer in self.teacher.sublayers(include_self=True):
            layer.training = False  # the teacher always runs in inference mode
        return self

    def forward(self, x):
        with paddle.no_grad():
            teacher_logits = self.teacher(x)
        return self.student(x), teacher_logits


def _pretrained_look(m):
    rng = np.random.default_rng(4747)
    t = m.teacher
    t.hidden.weight.set_value(rng.normal(0.0, 0.5, (IN_DIM, TEACHER_HIDDEN)).astype("float32"))
    t.hidden.bias.set_value(rng.normal(0.0, 0.1, TEACHER_HIDDEN).astype("float32"))
    t.head.weight.set_value(rng.normal(0.0, 0.6, (TEACHER_HIDDEN, N_CLASSES)).astype("float32"))
    t.head.bias.set_value(rng.normal(0.0, 0.1, N_CLASSES).astype("float32"))
    m.student.norm.weight.set_value(rng.uniform(0.6, 1.4, STUDENT_HIDDEN).astype("float32"))
    m.student.norm.bias.set_value(rng.normal(0.0, 0.1, STUDENT_HIDDEN).astype("float32"))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = KDNet()
    _pretrained_look(m)
    m.train()
    return m


def inputs(step=0):
    x, y = batch(step)
    _BATCH["labels"] = y
    return (paddle.to_tensor(x),), {}


def loss(output):
    student_logits, teacher_logits = output
    labels = paddle.to_tensor(_BATCH["labels"])
    log_p = F.log_softmax(student_logits / TEMPERATURE, axis=-1)
    q = F.softmax(teacher_logits / TEMPERATURE, axis=-1)
    if bug(BUGS) == "paddle_kd_mean":
        kd = F.kl_div(log_p, q)
    else:
        kd = F.kl_div(log_p, q, reduction="batchmean")
    kd = kd * (TEMPERATURE * TEMPERATURE)
    ce = F.cross_entropy(student_logits, labels)
    return KD_WEIGHT * kd + (1.0 - KD_WEIGHT) * ce


class AveragedSGD:
    """Averaged SGD (Bottou 2012; torch.optim.ASGD's update), for paddle dygraph parameters."""

    def __init__(self, parameters, learning_rate, lambd, alpha, t0, eta_ahead=False):
        self._parameters = list(parameters)
        self.learning_rate, self.lambd, self.alpha, self.t0 = learning_rate, lambd, alpha, t0
        self.num_updates = 0
        self._eta_ahead = eta_ahead
        self._average = {}

    def _eta(self):
        k = self.num_updates if self._eta_ahead else self.num_updates - 1
        return self.learning_rate / (1.0 + self.lambd * self.learning_rate * k) ** self.alpha

    @paddle.no_grad()
    def step(self):
        self.num_updates += 1
        eta = self._eta()
        mu = 1.0 / max(1.0, self.num_updates - 1 - self.t0)
        for p in self._parameters:
            if p.stop_gradient or p.grad is None:
                continue
            new = p * (1.0 - self.lambd * eta) - eta * p.grad
            p.set_value(new)
            avg = self._average.get(p.name)
            self._average[p.name] = new.clone() if avg is None else avg + mu * (new - avg)

    def clear_grad(self, set_to_zero=True):
        for p in self._parameters:
            if not p.stop_gradient:
                p.clear_gradient(set_to_zero)

    def averaged(self):
        """The averaged parameters (paddle name -> tensor), what one would evaluate with."""
        return dict(self._average)


def optimizer(model):
    trainable = [p for p in model.parameters() if not p.stop_gradient]
    return AveragedSGD(trainable, LR, LAMBD, ALPHA, T0, eta_ahead=bug(BUGS) == "paddle_eta_ahead")
