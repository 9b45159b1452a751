"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_kd_rmsprop_train_paddle.py): knowledge distillation with a frozen teacher, the
usual PyTorch KD recipe; RMSProp with paddle's epsilon placement.

    KDModel: registers teacher (Teacher), student (Student); forward(x):
        under torch.no_grad(): teacher_logits = teacher(x); student_logits = student(x)
        return (student_logits, teacher_logits)
        train(mode) is overridden: the teacher is put back in eval mode after Module.train()
    Teacher: net = Sequential(Linear 16 -> 64, ReLU, Dropout 0.1, Linear 64 -> 10) (.0-.3)
    Student: fc_in (Linear 16 -> 32), ln (LayerNorm 32), act (GELU), fc_out (Linear 32 -> 10)

Teacher parameters requires_grad=False, not in the optimizer.
Loss: soft = softmax(teacher / T); kd = (soft * (log_softmax(teacher / T) - log_softmax(student
/ T))).sum(1).mean() * T^2; ce = F.cross_entropy(student, y, label_smoothing=0.1);
loss = 0.7 kd + 0.3 ce, T = 4.
Optimizer: RMSpropTF (below, a torch.optim.Optimizer subclass, timm's RMSpropTF idea without its
ones-initialised square average): square_avg <- alpha sq + (1 - alpha) g^2;
p <- p - lr g / sqrt(square_avg + eps), alpha 0.9, eps 1e-6, lr 1e-3 - paddle's RMSProp update.
torch.optim.RMSprop adds eps OUTSIDE the square root (g / (sqrt(v) + eps)), so it is not used.
Data: the same batches as the paddle side (default_rng(5300 + step)).

PADIFF_BUG (this side only):
  eps_outside        -> torch.optim.RMSprop(lr 1e-3, alpha 0.9, eps 1e-6) instead of RMSpropTF:
                        the same numbers, epsilon outside the square root
  teacher_train_mode -> teacher.eval() only in __init__ (no train() override): model.train()
                        puts the teacher back in train mode and its Dropout(0.1) is active
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"eps_outside", "teacher_train_mode"} | {"paddle_kl_mean"}  # the paddle side's, ignored here
IN_DIM, S_HIDDEN, T_HIDDEN, N_CLASSES, BATCH = 16, 32, 64, 10, 16
T, ALPHA, LABEL_SMOOTHING = 4.0, 0.7, 0.1
LR, ALPHA_RMS, EPS = 1e-3, 0.9, 1e-6

_TARGETS = {}


def get_batch(step):
    rng = np.random.default_rng(5300 + step)
    x = rng.standard_normal((BATCH, IN_DIM)).astype(np.float32)
    y = rng.integers(0, N_CLASSES, BATCH).astype(np.int64)
    return x, y


class RMSpropTF(torch.optim.Optimizer):
    """RMSprop with epsilon inside the square root (paddle / TensorFlow), no momentum."""

    def __init__(self, params, lr=1e-2, alpha=0.9, eps=1e-6):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["square_avg"] = torch.zeros_like(p)
                state["step"] += 1
                square_avg = state["square_avg"]
                square_avg.mul_(group["alpha"]).addcmul_(p.grad, p.grad, value=1 - group["alpha"])
                p.addcdiv_(p.grad, square_avg.add(group["eps"]).sqrt_(), value=-group["lr"])


class Teacher(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(IN_DIM, T_HIDDEN), nn.ReLU(), nn.Dropout(0.1), nn.Linear(T_HIDDEN, N_CLASSES))

    def forward(self, x):
        return self.net(x)


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(IN_DIM, S_HIDDEN)
        self.ln = nn.LayerNorm(S_HIDDEN)
        self.act = nn.GELU()
        self.fc_out = nn.Linear(S_HIDDEN, N_CLASSES)

    def forward(self, x):
        return self.fc_out(self.act(self.ln(self.fc_in(x))))


class KDModel(nn.Module):
    def __init__(self, keep_teacher_eval=True):
        super().__init__()
        self.teacher = Teacher()
        self.student = Student()
        self.teacher.requires_grad_(False)
        self.teacher.eval()
        self.keep_teacher_eval = keep_teacher_eval

    def train(self, mode=True):
        super().train(mode)
        if self.keep_teacher_eval:
            self.teacher.eval()
        return self

    def forward(self, x):
        with torch.no_grad():
            teacher_logits = self.teacher(x)
        student_logits = self.student(x)
        return student_logits, teacher_logits


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = KDModel(keep_teacher_eval=(b != "teacher_train_mode"))
    m.train()
    return m


def inputs(step=0):
    x, y = get_batch(step)
    _TARGETS["y"] = torch.from_numpy(y)
    return (torch.from_numpy(x),), {}


def loss(output):
    student_logits, teacher_logits = output
    soft_targets = F.softmax(teacher_logits / T, dim=-1)
    soft_log_targets = F.log_softmax(teacher_logits / T, dim=-1)
    student_log_probs = F.log_softmax(student_logits / T, dim=-1)
    kd_loss = (soft_targets * (soft_log_targets - student_log_probs)).sum(dim=1).mean() * (T ** 2)
    ce_loss = F.cross_entropy(student_logits, _TARGETS["y"], label_smoothing=LABEL_SMOOTHING)
    return ALPHA * kd_loss + (1 - ALPHA) * ce_loss


def optimizer(model):
    if bug(BUGS) == "eps_outside":
        return torch.optim.RMSprop(model.student.parameters(), lr=LR, alpha=ALPHA_RMS, eps=EPS)
    return RMSpropTF(model.student.parameters(), lr=LR, alpha=ALPHA_RMS, eps=EPS)
