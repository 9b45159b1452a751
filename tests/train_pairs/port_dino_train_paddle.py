"""Hand-written port in TRAINING mode, paddle side (written by "person A"): DINO-style
self-distillation in one Layer (student + EMA teacher + output centering), 3 steps, two
augmented views per step.

    DINO: registers student (Encoder), teacher (Encoder, a copy of the student), buffer center
        [1, 16]; forward(view1, view2):
            x = concat([view1, view2])                   # [16, 3, 8, 8], the two views stacked
            s = student(x)                               # [16, 16]
            under paddle.no_grad(): t = teacher(x); out = t - center;
                                    center <- 0.9 center + 0.1 mean_batch(t)   (the buffer, in place)
            return (s, out)                              # student output, centred teacher output
    Encoder: registers backbone (ConvBackbone) and head (DINOHead)
    ConvBackbone: conv1 (Conv2D 3 -> 8, 3x3, pad 1), conv2 (Conv2D 8 -> 16, 3x3, stride 2, pad 1),
        drop (Dropout: 0.1 in the student, 0.0 in the teacher), norm (LayerNorm 16);
        gelu (functional) after each conv, spatial mean, drop, norm
    DINOHead: mlp = Sequential(Linear 16 -> 32, GELU, Linear 32 -> 8), L2 normalisation
        (F.normalize), last_layer (Linear 8 -> 16, no bias)

The student runs before the teacher in forward (the DINO reference loop runs the teacher first).

Teacher: built as its own Encoder (drop 0.0) and loaded with the student's state_dict; its
parameters have stop_gradient=True (never given to the optimizer). After every optimizer step it
becomes an EMA of the (updated) student: t <- 0.996 t + 0.004 s. Person A does that in the
optimizer: TeacherEMAAdamW (a paddle.optimizer.AdamW subclass) runs AdamW's step() and then the
EMA under paddle.no_grad().
Loss (DINO, in loss()): teacher probabilities softmax(out / 0.04) (out already centred), student
log_softmax(s / 0.1); cross-entropy -sum(q * log p) averaged over the batch for the two
cross-view pairs (teacher view 1 -> student view 2, teacher view 2 -> student view 1), halved.
Optimizer: AdamW(learning_rate 1e-3, beta1 0.9, beta2 0.999, epsilon 1e-8, weight_decay 0.04) over
the student only; decay on tensors of ndim >= 2 (DINO's get_params_groups: biases and norm scales
not regularised), by p.name through apply_decay_param_fun.
Data: inputs(step): default_rng(5210 + step): base images [8, 3, 8, 8] N(0, 1); view 1 = base x
gain U(0.6, 1.4) per image + shift N(0, 0.2) per image and channel + 0.1 N(0, 1) noise; view 2 =
base flipped left-right where U(0, 1) < 0.5 (per image) + 0.1 N(0, 1) noise.
Init (person A): paddle.seed(0); the student redrawn trained-looking (_train_common.randomize_paddle:
matrices N(0, 0.2), biases N(0, 0.1), LayerNorm scale 1 + N(0, 0.1)); the teacher a copy; the
center N(0, 0.05) (a center carried over from earlier training, not DINO's zeros).

PADIFF_BUG (this side only):
  teacher_dropout  -> the teacher is made with copy.deepcopy(student): it keeps the student's
                      Dropout(0.1) (DINO builds the teacher without drop path), and the teacher
                      runs in train mode, so its features are dropped out
  paddle_same_view -> loss over all four (teacher view, student view) pairs, the same-view terms
                      included (DINOLoss skips v == iq), divided by 4
"""
import copy

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug, randomize_paddle
from paddle import nn

BUGS = {"teacher_dropout", "paddle_same_view"} | {"ema_pre_step"}  # the torch side's, ignored here
N_IMG, CH, SIZE = 8, 3, 8
EMBED, HIDDEN, BOTTLENECK, OUT_DIM = 16, 32, 8, 16
DROP = 0.1
STUDENT_TEMP, TEACHER_TEMP = 0.1, 0.04
CENTER_MOMENTUM, TEACHER_MOMENTUM = 0.9, 0.996
LR, WEIGHT_DECAY = 1e-3, 0.04


def make_views(step):
    """Two augmented views (numpy, float32): the same numbers on both sides."""
    rng = np.random.default_rng(5210 + step)
    base = rng.standard_normal((N_IMG, CH, SIZE, SIZE))
    gain = rng.uniform(0.6, 1.4, (N_IMG, 1, 1, 1))
    shift = rng.normal(0.0, 0.2, (N_IMG, CH, 1, 1))
    view1 = base * gain + shift + 0.1 * rng.standard_normal(base.shape)
    flip = rng.random(N_IMG) < 0.5
    view2 = np.where(flip[:, None, None, None], base[:, :, :, ::-1], base) + 0.1 * rng.standard_normal(base.shape)
    return view1.astype("float32"), view2.astype("float32")


class ConvBackbone(nn.Layer):
    def __init__(self, drop):
        super().__init__()
        self.conv1 = nn.Conv2D(CH, 8, 3, padding=1)
        self.conv2 = nn.Conv2D(8, EMBED, 3, stride=2, padding=1)
        self.drop = nn.Dropout(drop)
        self.norm = nn.LayerNorm(EMBED)

    def forward(self, x):
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        x = x.mean(axis=[2, 3])
        return self.norm(self.drop(x))


class DINOHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(EMBED, HIDDEN), nn.GELU(), nn.Linear(HIDDEN, BOTTLENECK))
        self.last_layer = nn.Linear(BOTTLENECK, OUT_DIM, bias_attr=False)

    def forward(self, x):
        x = F.normalize(self.mlp(x), p=2, axis=-1)
        return self.last_layer(x)


class Encoder(nn.Layer):
    def __init__(self, drop):
        super().__init__()
        self.backbone = ConvBackbone(drop)
        self.head = DINOHead()

    def forward(self, x):
        return self.head(self.backbone(x))


class DINO(nn.Layer):
    def __init__(self, copy_student=False):
        super().__init__()
        self.student = Encoder(DROP)
        randomize_paddle(self.student, std=0.2, seed=0)
        if copy_student:
            self.teacher = copy.deepcopy(self.student)
        else:
            self.teacher = Encoder(0.0)
            self.teacher.set_state_dict(self.student.state_dict())
        for p in self.teacher.parameters():
            p.stop_gradient = True
        self.register_buffer("center", paddle.normal(0.0, 0.05, [1, OUT_DIM]))

    def forward(self, view1, view2):
        x = paddle.concat([view1, view2], axis=0)
        s = self.student(x)
        with paddle.no_grad():
            t = self.teacher(x)
            out = t - self.center
            self.center.set_value(self.center * CENTER_MOMENTUM + t.mean(axis=0, keepdim=True) * (1.0 - CENTER_MOMENTUM))
        return s, out


class TeacherEMAAdamW(paddle.optimizer.AdamW):
    """AdamW on the student; after each step the teacher moves towards the updated student."""

    def __init__(self, model, momentum, **kwargs):
        super().__init__(parameters=list(model.student.parameters()), **kwargs)
        self._ema_pairs = list(zip(model.student.parameters(), model.teacher.parameters()))
        self._ema_momentum = momentum

    def step(self):
        super().step()
        m = self._ema_momentum
        with paddle.no_grad():
            for ps, pt in self._ema_pairs:
                pt.set_value(pt * m + ps * (1.0 - m))


def model():
    b = bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = DINO(copy_student=(b == "teacher_dropout"))
    m.train()
    return m


def inputs(step=0):
    view1, view2 = make_views(step)
    return (paddle.to_tensor(view1), paddle.to_tensor(view2)), {}


def _h(q, s):
    """-sum(q log softmax(s / ts)) averaged over the batch."""
    return (-q * F.log_softmax(s / STUDENT_TEMP, axis=-1)).sum(axis=-1).mean()


def loss(output):
    s, t_centred = output
    q = F.softmax(t_centred / TEACHER_TEMP, axis=-1).detach()
    s1, s2 = paddle.split(s, 2, axis=0)
    q1, q2 = paddle.split(q, 2, axis=0)
    if bug(BUGS) == "paddle_same_view":
        return (_h(q1, s1) + _h(q1, s2) + _h(q2, s1) + _h(q2, s2)) / 4.0
    return 0.5 * (_h(q1, s2) + _h(q2, s1))


def optimizer(model):
    decay = {p.name for p in model.student.parameters() if p.ndim >= 2}
    return TeacherEMAAdamW(model, TEACHER_MOMENTUM, learning_rate=LR, beta1=0.9, beta2=0.999, epsilon=1e-8,
                           weight_decay=WEIGHT_DECAY, apply_decay_param_fun=lambda name: name in decay)
