"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_dino_train_paddle.py) the facebookresearch/dino way: separate student and teacher
networks, a DINOLoss-style loss, the teacher's EMA update after optimizer.step().

    DINOTrainer: registers student_backbone (SmallConvNet, drop 0.1), student_head
        (ProjectionHead), teacher_backbone (SmallConvNet, drop 0.0 -> nn.Identity), teacher_head,
        centering (Centering: buffer center [1, 16]); forward(view1, view2):
            crops = cat([view1, view2])
            under torch.no_grad(): teacher_out = centering(teacher_head(teacher_backbone(crops)))
            student_out = student_head(student_backbone(crops))
            return (student_out, teacher_out)
    SmallConvNet: stem = Sequential(Conv2d 3 -> 8, GELU, Conv2d 8 -> 16 stride 2, GELU) (.0-.3),
        drop (nn.Dropout(p) if p > 0 else nn.Identity(), the timm way), norm (LayerNorm 16);
        spatial mean via flatten(2).mean(-1)
    ProjectionHead: layer1 (Linear 16 -> 32), act (GELU), layer2 (Linear 32 -> 8), F.normalize,
        last_layer (Linear 8 -> 16, no bias)
    Centering: forward(t) returns t - center, then center <- 0.9 center + 0.1 t.mean(0) in place

The teacher runs first (as DINO's training loop). Teacher parameters requires_grad=False; they
get the student's values (load_state_dict) at construction. EMA of the updated student after
each step (momentum 0.996): a hook registered with optimizer.register_step_post_hook.
Loss (DINOLoss): student_out / 0.1 chunked in 2, softmax(teacher_out / 0.04) chunked in 2, for
each (iq, v) with v != iq: sum(-q * log_softmax(s_v), -1).mean(), averaged over the 2 terms.
Optimizer: AdamW(lr 1e-3, weight_decay 0.04) with DINO's two groups (regularized: not bias and
ndim > 1; not_regularized: weight_decay 0.0), student parameters only.
Data: the same views as the paddle side (default_rng(5210 + step), the same recipe).

PADIFF_BUG (this side only):
  ema_pre_step -> the EMA hook registered with register_step_pre_hook instead of
                  register_step_post_hook: the teacher moves towards the student as it was
                  BEFORE the update (one step behind)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"ema_pre_step"} | {"teacher_dropout", "paddle_same_view"}  # the paddle side's, ignored here
N_IMG, CH, SIZE = 8, 3, 8
EMBED, HIDDEN, BOTTLENECK, OUT_DIM = 16, 32, 8, 16
DROP_RATE = 0.1
STUDENT_TEMP, TEACHER_TEMP = 0.1, 0.04
CENTER_MOMENTUM, MOMENTUM_TEACHER = 0.9, 0.996
LR, WEIGHT_DECAY = 1e-3, 0.04


def augmented_views(step):
    rng = np.random.default_rng(5210 + step)
    imgs = rng.standard_normal((N_IMG, CH, SIZE, SIZE))
    gain = rng.uniform(0.6, 1.4, (N_IMG, 1, 1, 1))
    shift = rng.normal(0.0, 0.2, (N_IMG, CH, 1, 1))
    v1 = imgs * gain + shift + 0.1 * rng.standard_normal(imgs.shape)
    flip = rng.random(N_IMG) < 0.5
    flipped = np.flip(imgs, axis=3)
    v2 = np.where(flip.reshape(-1, 1, 1, 1), flipped, imgs) + 0.1 * rng.standard_normal(imgs.shape)
    return np.ascontiguousarray(v1, dtype=np.float32), np.ascontiguousarray(v2, dtype=np.float32)


class SmallConvNet(nn.Module):
    def __init__(self, drop_rate=0.0):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(CH, 8, kernel_size=3, padding=1), nn.GELU(),
            nn.Conv2d(8, EMBED, kernel_size=3, stride=2, padding=1), nn.GELU(),
        )
        self.drop = nn.Dropout(drop_rate) if drop_rate > 0 else nn.Identity()
        self.norm = nn.LayerNorm(EMBED)

    def forward(self, x):
        x = self.stem(x).flatten(2).mean(-1)
        return self.norm(self.drop(x))


class ProjectionHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(EMBED, HIDDEN)
        self.act = nn.GELU()
        self.layer2 = nn.Linear(HIDDEN, BOTTLENECK)
        self.last_layer = nn.Linear(BOTTLENECK, OUT_DIM, bias=False)

    def forward(self, x):
        x = self.layer2(self.act(self.layer1(x)))
        x = F.normalize(x, dim=-1, p=2)
        return self.last_layer(x)


class Centering(nn.Module):
    def __init__(self, dim, momentum):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("center", torch.zeros(1, dim))

    def forward(self, teacher_output):
        out = teacher_output - self.center
        with torch.no_grad():
            batch_center = teacher_output.mean(dim=0, keepdim=True)
            self.center.mul_(self.momentum).add_(batch_center, alpha=1.0 - self.momentum)
        return out


class DINOTrainer(nn.Module):
    def __init__(self):
        super().__init__()
        self.student_backbone = SmallConvNet(DROP_RATE)
        self.student_head = ProjectionHead()
        self.teacher_backbone = SmallConvNet(0.0)
        self.teacher_head = ProjectionHead()
        self.teacher_backbone.load_state_dict(self.student_backbone.state_dict())
        self.teacher_head.load_state_dict(self.student_head.state_dict())
        for p in list(self.teacher_backbone.parameters()) + list(self.teacher_head.parameters()):
            p.requires_grad = False
        self.centering = Centering(OUT_DIM, CENTER_MOMENTUM)

    def forward(self, view1, view2):
        crops = torch.cat([view1, view2])
        with torch.no_grad():
            teacher_out = self.centering(self.teacher_head(self.teacher_backbone(crops)))
        student_out = self.student_head(self.student_backbone(crops))
        return student_out, teacher_out


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = DINOTrainer()
    m.train()
    return m


def inputs(step=0):
    v1, v2 = augmented_views(step)
    return (torch.from_numpy(v1), torch.from_numpy(v2)), {}


def loss(output):
    student_output, teacher_output = output
    student_out = (student_output / STUDENT_TEMP).chunk(2)
    teacher_out = F.softmax(teacher_output / TEACHER_TEMP, dim=-1).detach().chunk(2)
    total_loss, n_loss_terms = 0.0, 0
    for iq, q in enumerate(teacher_out):
        for v in range(len(student_out)):
            if v == iq:
                continue
            total_loss = total_loss + torch.sum(-q * F.log_softmax(student_out[v], dim=-1), dim=-1).mean()
            n_loss_terms += 1
    return total_loss / n_loss_terms


def optimizer(model):
    regularized, not_regularized = [], []
    for net in (model.student_backbone, model.student_head):
        for name, p in net.named_parameters():
            (not_regularized if name.endswith(".bias") or len(p.shape) == 1 else regularized).append(p)
    opt = torch.optim.AdamW([{"params": regularized}, {"params": not_regularized, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.999), eps=1e-8, weight_decay=WEIGHT_DECAY)
    student = list(model.student_backbone.parameters()) + list(model.student_head.parameters())
    teacher = list(model.teacher_backbone.parameters()) + list(model.teacher_head.parameters())

    def update_teacher(optimizer, args, kwargs):
        with torch.no_grad():
            for param_q, param_k in zip(student, teacher):
                param_k.mul_(MOMENTUM_TEACHER).add_((1 - MOMENTUM_TEACHER) * param_q.detach())

    if bug(BUGS) == "ema_pre_step":
        opt.register_step_pre_hook(update_teacher)
    else:
        opt.register_step_post_hook(update_teacher)
    return opt
