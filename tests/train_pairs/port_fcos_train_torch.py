"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_fcos_train_paddle.py) in the tianzhi0549/FCOS (maskrcnn-benchmark) layout.

    FCOSDetector: registers stem = Sequential(Conv2d 3 -> 8 s2, ReLU, Conv2d 8 -> 16 s2, ReLU)
        (the stride-4 map), layer3 = Sequential(Conv2d 16 -> 16 s2, ReLU) (the stride-8 map),
        head (FCOSHead)
    FCOSHead: cls_tower, bbox_tower = Sequential(Conv2d 3x3, GroupNorm(4, 16), ReLU) x 2 (.0-.5),
        cls_logits (Conv2d 16 -> 3), bbox_pred (ONE Conv2d 16 -> 5: channels 0-3 the box
        regression, channel 4 the centerness, both on the bbox tower), scales (ModuleList of 2
        Scale: nn.Parameter [1]); the classification dropout is INLINE
        (F.dropout(tower, self.dropout, self.training)), no module
    forward(images) -> (logits [2, 80, 3], box_regression [2, 80, 4], centerness [2, 80, 1]);
        locations: level 0 (8x8, stride 4) then level 1 (4x4, stride 8), row-major per level

Data: the same images / boxes as the paddle side (default_rng(61480 + step), same recipe); the
targets are computed in torch (float64), per level, the maskrcnn-benchmark way
(compute_targets_for_locations): inside when min(l, t, r, b) > 0, level by max(l, t, r, b) in
(-1, 12.5] / (12.5, inf), smallest area wins.
Loss: fvcore-style sigmoid_focal_loss (alpha 0.25, gamma 2) summed / num_pos + IOULoss("giou")
weighted by the centerness targets ((loss * w).sum() / w.sum()) + BCEWithLogitsLoss(sum) / num_pos.
Optimizer: SGD(lr 0.01, momentum 0.9, weight_decay 1e-4) + LambdaLR with detectron2's linear
warm-up factor f (1 - a) + a, a = it / 3, f = 1 / 3 (lr 0.00333, 0.00556, 0.00778);
clip_grad_norm_(model.parameters(), 1.0) in clip_grad().

PADIFF_BUG (this side only):
  torch_dropout_keep -> the head's dropout rate used as a keep probability:
                        F.dropout(x, 1 - self.dropout, ...) (p 0.9 instead of 0.1)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_dropout_keep"} | {"paddle_giou_norm", "paddle_clip_value"}  # the paddle side's, ignored here
NUM_CLASSES, CHANNELS = 3, 16
STRIDES = (4, 8)
SIZES_OF_INTEREST = ((-1.0, 12.5), (12.5, float("inf")))
IMAGE_SIZE, IMS_PER_BATCH = 32, 2
BASE_LR, WARMUP_ITERS, WARMUP_FACTOR = 0.01, 3, 1.0 / 3
MOMENTUM, WEIGHT_DECAY, CLIP_MAX_NORM = 0.9, 1e-4, 1.0

_GT = {}


class Scale(nn.Module):
    def __init__(self, init_value=1.0):
        super().__init__()
        self.scale = nn.Parameter(torch.FloatTensor([init_value]))

    def forward(self, x):
        return x * self.scale


def _tower():
    layers = []
    for _ in range(2):
        layers += [nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1), nn.GroupNorm(4, CHANNELS), nn.ReLU()]
    return nn.Sequential(*layers)


class FCOSHead(nn.Module):
    def __init__(self, dropout=0.1):
        super().__init__()
        self.cls_tower = _tower()
        self.bbox_tower = _tower()
        self.cls_logits = nn.Conv2d(CHANNELS, NUM_CLASSES, 3, padding=1)
        self.bbox_pred = nn.Conv2d(CHANNELS, 5, 3, padding=1)  # 4 box distances + centerness
        self.scales = nn.ModuleList([Scale(1.0) for _ in STRIDES])
        self.dropout = dropout
        self._bug = bug(BUGS)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, std=0.01)
                nn.init.constant_(m.bias, 0)
        nn.init.constant_(self.cls_logits.bias, -float(np.log((1 - 0.01) / 0.01)))

    def forward(self, features):
        logits, bbox_reg, centerness = [], [], []
        p = 1 - self.dropout if self._bug == "torch_dropout_keep" else self.dropout
        for level, feature in enumerate(features):
            cls_tower = F.dropout(self.cls_tower(feature), p, self.training)
            box_tower = self.bbox_tower(feature)
            logits.append(self.cls_logits(cls_tower))
            pred = self.bbox_pred(box_tower)
            bbox_reg.append(torch.exp(self.scales[level](pred[:, :4])))
            centerness.append(pred[:, 4:])
        return _flat(logits), _flat(bbox_reg), _flat(centerness)


def _flat(xs):
    return torch.cat([x.permute(0, 2, 3, 1).flatten(1, 2) for x in xs], dim=1)


class FCOSDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, CHANNELS, 3, 2, 1), nn.ReLU())
        self.layer3 = nn.Sequential(nn.Conv2d(CHANNELS, CHANNELS, 3, 2, 1), nn.ReLU())
        self.head = FCOSHead(dropout=0.1)

    def forward(self, images):
        p3 = self.stem(images)
        p4 = self.layer3(p3)
        return self.head([p3, p4])


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = FCOSDetector()
    m.train()
    return m


# ---------------------------------------------------------------------------------------------
# data and targets


def make_batch(step):
    rng = np.random.default_rng(61480 + step)
    images = rng.normal(0.0, 0.3, (IMS_PER_BATCH, 3, IMAGE_SIZE, IMAGE_SIZE))
    palette = np.array([[1.0, -0.5, 0.2], [-0.4, 1.0, -0.6], [0.3, 0.3, 1.0]])
    targets = []
    for i in range(IMS_PER_BATCH):
        boxes, classes = [], []
        for lo, hi in ((6, 12), (18, 28)):
            w = rng.integers(lo, hi)
            h = rng.integers(lo, hi)
            x0 = rng.integers(0, IMAGE_SIZE - w + 1)
            y0 = rng.integers(0, IMAGE_SIZE - h + 1)
            boxes.append((x0, y0, x0 + w, y0 + h))
            classes.append(int(rng.integers(0, NUM_CLASSES)))
        # paint the larger box first
        for j in sorted(range(len(boxes)), key=lambda j: (boxes[j][2] - boxes[j][0]) * (boxes[j][3] - boxes[j][1]), reverse=True):
            x0, y0, x1, y1 = boxes[j]
            images[i, :, y0:y1, x0:x1] += palette[classes[j]][:, None, None]
        targets.append((torch.tensor(boxes, dtype=torch.float64), torch.tensor(classes, dtype=torch.int64)))
    return torch.from_numpy(images.astype(np.float32)), targets


def compute_locations():
    locations = []
    for stride in STRIDES:
        n = IMAGE_SIZE // stride
        shifts = torch.arange(0, n * stride, step=stride, dtype=torch.float64)
        shift_y, shift_x = torch.meshgrid(shifts, shifts, indexing="ij")
        locations.append(torch.stack((shift_x.reshape(-1), shift_y.reshape(-1)), dim=1) + stride // 2)
    return locations


def compute_targets_for_locations(locations, targets):
    """Per image: (labels [P] with NUM_CLASSES for background, reg targets [P, 4])."""
    per_level = [loc.new_tensor(s).expand(len(loc), 2) for loc, s in zip(locations, SIZES_OF_INTEREST)]
    sizes = torch.cat(per_level, dim=0)
    locations = torch.cat(locations, dim=0)
    xs, ys = locations[:, 0], locations[:, 1]
    labels, reg_targets = [], []
    for bboxes, classes in targets:
        area = (bboxes[:, 2] - bboxes[:, 0]) * (bboxes[:, 3] - bboxes[:, 1])
        left = xs[:, None] - bboxes[:, 0][None]
        t = ys[:, None] - bboxes[:, 1][None]
        r = bboxes[:, 2][None] - xs[:, None]
        b = bboxes[:, 3][None] - ys[:, None]
        reg = torch.stack([left, t, r, b], dim=2)
        is_in_boxes = reg.min(dim=2)[0] > 0
        max_reg = reg.max(dim=2)[0]
        is_cared_in_the_level = (max_reg > sizes[:, [0]]) & (max_reg <= sizes[:, [1]])
        locations_to_gt_area = area[None].repeat(len(locations), 1)
        locations_to_gt_area[is_in_boxes == 0] = float("inf")
        locations_to_gt_area[is_cared_in_the_level == 0] = float("inf")
        min_area, inds = locations_to_gt_area.min(dim=1)
        reg = reg[range(len(locations)), inds]
        lab = classes[inds].clone()
        lab[min_area == float("inf")] = NUM_CLASSES
        labels.append(lab)
        reg_targets.append(reg)
    return torch.stack(labels), torch.stack(reg_targets)


def compute_centerness_targets(reg_targets):
    left_right = reg_targets[:, [0, 2]]
    top_bottom = reg_targets[:, [1, 3]]
    centerness = (left_right.min(dim=-1)[0] / left_right.max(dim=-1)[0]) * \
                 (top_bottom.min(dim=-1)[0] / top_bottom.max(dim=-1)[0])
    return torch.sqrt(centerness)


def inputs(step=0):
    images, targets = make_batch(step)
    labels, reg_targets = compute_targets_for_locations(compute_locations(), targets)
    _GT.update(labels=labels.reshape(-1), reg_targets=reg_targets.reshape(-1, 4))
    return (images,), {}


# ---------------------------------------------------------------------------------------------
# loss


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (alpha_t * loss).sum()


class IOULoss(nn.Module):
    def __init__(self, loss_type="giou"):
        super().__init__()
        self.loss_type = loss_type

    def forward(self, pred, target, weight):
        pred_left, pred_top, pred_right, pred_bottom = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
        target_left, target_top, target_right, target_bottom = target[:, 0], target[:, 1], target[:, 2], target[:, 3]
        target_area = (target_left + target_right) * (target_top + target_bottom)
        pred_area = (pred_left + pred_right) * (pred_top + pred_bottom)
        w_intersect = torch.min(pred_left, target_left) + torch.min(pred_right, target_right)
        g_w_intersect = torch.max(pred_left, target_left) + torch.max(pred_right, target_right)
        h_intersect = torch.min(pred_bottom, target_bottom) + torch.min(pred_top, target_top)
        g_h_intersect = torch.max(pred_bottom, target_bottom) + torch.max(pred_top, target_top)
        ac_union = g_w_intersect * g_h_intersect + 1e-7
        area_intersect = w_intersect * h_intersect
        area_union = target_area + pred_area - area_intersect
        ious = (area_intersect + 1.0) / (area_union + 1.0)
        gious = ious - (ac_union - area_union) / ac_union
        losses = 1 - gious
        return (losses * weight).sum() / weight.sum()


_box_loss = IOULoss("giou")
_ctr_loss = nn.BCEWithLogitsLoss(reduction="sum")


def loss(output):
    box_cls, box_regression, centerness = output
    dt = box_cls.dtype
    labels = _GT["labels"]
    box_cls_flatten = box_cls.reshape(-1, NUM_CLASSES)
    box_regression_flatten = box_regression.reshape(-1, 4)
    centerness_flatten = centerness.reshape(-1)
    pos_inds = torch.nonzero(labels < NUM_CLASSES).squeeze(1)
    num_pos = max(pos_inds.numel(), 1)
    onehot = F.one_hot(labels, NUM_CLASSES + 1)[:, :NUM_CLASSES].to(dt)
    cls_loss = sigmoid_focal_loss(box_cls_flatten, onehot) / num_pos

    reg_targets = _GT["reg_targets"][pos_inds]
    centerness_targets = compute_centerness_targets(reg_targets).to(dt)
    reg_loss = _box_loss(box_regression_flatten[pos_inds], reg_targets.to(dt), centerness_targets)
    centerness_loss = _ctr_loss(centerness_flatten[pos_inds], centerness_targets) / num_pos
    return cls_loss + reg_loss + centerness_loss


def optimizer(model):
    opt = torch.optim.SGD(model.parameters(), lr=BASE_LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)

    def warmup(it):
        if it >= WARMUP_ITERS:
            return 1.0
        alpha = it / WARMUP_ITERS
        return WARMUP_FACTOR * (1 - alpha) + alpha

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, warmup)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_MAX_NORM)
