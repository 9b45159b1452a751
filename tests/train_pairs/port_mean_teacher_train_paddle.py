"""Hand-written port in TRAINING mode, paddle side (written by "person A"): mean-teacher
semi-supervised training (Tarvainen & Valpola 2017) of a small conv classifier, 3 steps.

    MeanTeacher: registers student (ConvNet), teacher (ConvNet, a copy of the student's weights,
        every parameter stop_gradient=True); forward(x_student, x_teacher) calls the TEACHER first
        (on its own noisy view), then the student; returns (student_logits, teacher_logits)
    ConvNet: registers head (Linear 16 -> 5) first, then conv1 (Conv2D 3 -> 8, 3x3, pad 1),
        norm1 (GroupNorm(2, 8)), conv2 (Conv2D 8 -> 16, 3x3, stride 2, pad 1), norm2 (GroupNorm(4, 16)),
        pool (AdaptiveAvgPool2D(1)), drop (nn.Dropout(0.3)); calls conv1, norm1, relu, conv2, norm2,
        relu, pool, flatten, drop, head (F.relu inline)
Batch 8 of 3x8x8 images (4 labelled, 4 unlabelled with label -1), 5 classes; both networks in
train() (the teacher's dropout is on, as in the reference implementation). Per step
(`inputs(step)`, default_rng(2600 + step)): images, labels, and two Gaussian input-noise draws
(std 0.15), one per network: x_student = x + n1, x_teacher = x + n2 (the same numbers on both sides).
Loss: class loss F.cross_entropy(student_logits, y, ignore_index=-1) - paddle's mean with an
ignore_index divides by the WHOLE batch (8), i.e. sum over labelled / minibatch size as in the
reference code - plus consistency 10 * mean((softmax(student) - softmax(teacher).detach()) ** 2)
(= sum / (classes * batch), the reference softmax_mse_loss / minibatch size).
Optimizer: MeanTeacherMomentum, a paddle.optimizer.Momentum(learning_rate 0.05, momentum 0.9,
use_nesterov=True, weight_decay 2e-4) over the student's parameters whose step() runs the SGD
update and then the EMA of the teacher (outside the optimizer's own update):
    global_step += 1; alpha = min(1 - 1 / (global_step + 1), 0.99)
    teacher = alpha * teacher + (1 - alpha) * student   (alpha 0.5, 0.667, 0.75 for updates 1..3)
Init: paddle.seed(0), paddle's default conv/linear init; GroupNorm weights 1 + N(0, 0.1), biases
N(0, 0.1) (numpy default_rng(26)); the teacher starts as an exact copy of the student.

PADIFF_BUG (this side only):
  paddle_teacher_eval     -> m.teacher.eval() after m.train() ("the teacher only produces targets"):
                             no dropout in the teacher, the consistency target changes
  paddle_ema_before_step  -> step() updates the teacher BEFORE the SGD update (EMA of the
                             pre-update student): the teacher lags the student by one update
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_teacher_eval", "paddle_ema_before_step"} | {"torch_ce_labeled_mean"}  # the torch side's, ignored here
N_CLS, BATCH, N_LABELED, IMG = 5, 8, 4, 8
LR, MOMENTUM, WD = 0.05, 0.9, 2e-4
EMA_DECAY, CONS_WEIGHT, NOISE_STD, DROP = 0.99, 10.0, 0.15, 0.3
NO_LABEL = -1

_BATCH = {}


def batch(step):
    rng = np.random.default_rng(2600 + step)
    x = rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")
    y = rng.integers(0, N_CLS, BATCH).astype("int64")
    y[N_LABELED:] = NO_LABEL
    n_student = (NOISE_STD * rng.standard_normal(x.shape)).astype("float32")
    n_teacher = (NOISE_STD * rng.standard_normal(x.shape)).astype("float32")
    return x + n_student, x + n_teacher, y


class ConvNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(16, N_CLS)
        self.conv1 = nn.Conv2D(3, 8, 3, padding=1)
        self.norm1 = nn.GroupNorm(2, 8)
        self.conv2 = nn.Conv2D(8, 16, 3, stride=2, padding=1)
        self.norm2 = nn.GroupNorm(4, 16)
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.drop = nn.Dropout(DROP)

    def forward(self, x):
        x = F.relu(self.norm1(self.conv1(x)))
        x = F.relu(self.norm2(self.conv2(x)))
        x = paddle.flatten(self.pool(x), 1)
        return self.head(self.drop(x))


class MeanTeacher(nn.Layer):
    def __init__(self):
        super().__init__()
        self.student = ConvNet()
        self.teacher = ConvNet()
        self.teacher.set_state_dict(self.student.state_dict())
        for p in self.teacher.parameters():
            p.stop_gradient = True

    def forward(self, x_student, x_teacher):
        teacher_logits = self.teacher(x_teacher)
        student_logits = self.student(x_student)
        return student_logits, teacher_logits


class MeanTeacherMomentum(paddle.optimizer.Momentum):
    """SGD (Nesterov momentum) over the student, then the teacher's EMA, in one step()."""

    def __init__(self, mt_model, ema_decay, ema_first=False, **kwargs):
        super().__init__(parameters=list(mt_model.student.parameters()), **kwargs)
        self._pairs = list(zip(mt_model.teacher.parameters(), mt_model.student.parameters()))
        self._ema_decay, self._ema_first = ema_decay, ema_first
        self.global_step = 0

    @paddle.no_grad()
    def _update_teacher(self):
        alpha = min(1.0 - 1.0 / (self.global_step + 1), self._ema_decay)
        for t, s in self._pairs:
            t.set_value(alpha * t + (1.0 - alpha) * s)

    def step(self):
        self.global_step += 1
        if self._ema_first:
            self._update_teacher()
            super().step()
        else:
            super().step()
            self._update_teacher()


def model():
    b = bug(BUGS)
    paddle.seed(0)
    m = MeanTeacher()
    rng = np.random.default_rng(26)
    for name, p in m.student.named_parameters():
        if name.startswith("norm"):
            base = 1.0 if name.endswith("weight") else 0.0
            p.set_value((base + rng.normal(0.0, 0.1, p.shape)).astype("float32"))
    m.teacher.set_state_dict(m.student.state_dict())
    m.train()
    if b == "paddle_teacher_eval":
        m.teacher.eval()
    return m


def inputs(step=0):
    x_student, x_teacher, y = batch(step)
    _BATCH["y"] = y
    return (paddle.to_tensor(x_student), paddle.to_tensor(x_teacher)), {}


def loss(output):
    student_logits, teacher_logits = output
    y = paddle.to_tensor(_BATCH["y"])
    class_loss = F.cross_entropy(student_logits, y, ignore_index=NO_LABEL)
    p_student = F.softmax(student_logits, axis=-1)
    p_teacher = F.softmax(teacher_logits.detach(), axis=-1)
    consistency = paddle.mean((p_student - p_teacher) ** 2)
    return class_loss + CONS_WEIGHT * consistency


def optimizer(model):
    return MeanTeacherMomentum(model, EMA_DECAY, ema_first=bug(BUGS) == "paddle_ema_before_step",
                               learning_rate=LR, momentum=MOMENTUM, use_nesterov=True, weight_decay=WD)
