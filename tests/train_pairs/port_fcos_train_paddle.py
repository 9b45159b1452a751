"""Hand-written port in TRAINING mode, paddle side (written by "person A", PaddleDetection style):
a tiny FCOS (anchor-free one-stage detector, Tian et al. 2019) trained 3 steps.

    FCOS: registers fcos_head (FCOSHead) first, then backbone (TinyBackbone: conv1 3 -> 8 s2,
        conv2 8 -> 16 s2, conv3 16 -> 16 s2; F.relu functional; returns the stride-4 and stride-8
        maps); calls backbone, then fcos_head
    FCOSHead: fcos_feat (FCOSFeat: cls_subnet_convs, reg_subnet_convs = LayerList of 2
        ConvNormLayer each: Conv2D 3x3 16 -> 16 with bias + GroupNorm(4, 16); F.relu functional),
        fcos_head_cls (Conv2D 16 -> 3), fcos_head_reg (Conv2D 16 -> 4), fcos_head_centerness
        (Conv2D 16 -> 1), scales_regs (LayerList of 2 ScaleReg, create_parameter [1]),
        dropout (nn.Dropout 0.1, on the classification feature of each level)
    per level: cls = fcos_head_cls(dropout(cls_feat)); box = exp(scale_l * fcos_head_reg(reg_feat));
        centerness = fcos_head_centerness(reg_feat) (centerness on the regression branch)
    forward(images [2, 3, 32, 32]) -> (cls_logits [2, 80, 3], box_ltrb [2, 80, 4],
        centerness [2, 80, 1]); the 80 locations are level 0 (8x8, stride 4) then level 1
        (4x4, stride 8), each row-major (NHWC flattened)

Data (inputs(step), numpy default_rng(61480 + step)): 2 images, each with one small box (side 6..11)
and one large box (side 18..27), integer corners, classes 0..2; image = N(0, 0.3) noise plus a
per-class colour inside each box. Targets (numpy, FCOS rules): a location (stride * i + stride // 2)
is inside a box when min(l, t, r, b) > 0; level ranges by max(l, t, r, b): level 0 (-1, 12.5],
level 1 (12.5, inf); of several boxes the smallest area wins; centerness target
sqrt(min(l, r) / max(l, r) * min(t, b) / max(t, b)).
Loss: sigmoid focal loss (alpha 0.25, gamma 2; paddle's F.sigmoid_focal_loss, normalizer = number
of positives) + GIoU loss on the positive locations weighted by the centerness targets (sum of
weighted losses / sum of centerness targets) + BCE-with-logits on the centerness of the
positives (sum / number of positives).
Optimizer: Momentum(momentum 0.9, weight_decay 1e-4 (L2 added to the gradient)) with
LinearWarmup(0.01, warmup_steps 3, start_lr 0.01 / 3, end_lr 0.01) (lr 0.00333, 0.00556, 0.00778
for updates 1..3), grad_clip=ClipGradByGlobalNorm(MAX_NORM); optimizer() returns (optimizer,
scheduler).
Init (person A, "trained-looking", numpy default_rng(148)): conv weights N(0, sqrt(2 / fan_in)),
biases N(0, 0.05); GroupNorm scales 1 + N(0, 0.1), shifts N(0, 0.1); class bias -2 + N(0, 0.1),
regression bias 1.5 + N(0, 0.1); level scales 1.2 and 0.85.

PADIFF_BUG (this side only):
  paddle_giou_norm   -> the centerness-weighted GIoU sum divided by the number of positives
                        instead of the sum of the centerness targets (FCOS v1 / early mmdet)
  paddle_clip_value  -> grad_clip=ClipGradByValue(MAX_NORM) (element-wise clipping to [-1, 1], the
                        wrong one of paddle's three clip classes) instead of
                        ClipGradByGlobalNorm(MAX_NORM): no gradient element reaches 1, so nothing
                        is clipped while the reference scales the gradient by 1 / global norm
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_giou_norm", "paddle_clip_value"} | {"torch_dropout_keep"}  # the torch side's, ignored here
NUM_CLASSES, WIDTH, GN_GROUPS, NUM_CONVS = 3, 16, 4, 2
FPN_STRIDES = [4, 8]
OBJECT_SIZES = [(-1.0, 12.5), (12.5, float("inf"))]
IMG, BATCH = 32, 2
DROP_PROB = 0.1
FOCAL_ALPHA, FOCAL_GAMMA = 0.25, 2.0
BASE_LR, WARMUP_STEPS, MOMENTUM, L2_COEFF, MAX_NORM = 0.01, 3, 0.9, 1e-4, 1.0

_TARGETS = {}


class ConvNormLayer(nn.Layer):
    def __init__(self, ch_in, ch_out):
        super().__init__()
        self.conv = nn.Conv2D(ch_in, ch_out, 3, padding=1)
        self.norm = nn.GroupNorm(GN_GROUPS, ch_out)

    def forward(self, x):
        return self.norm(self.conv(x))


class FCOSFeat(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cls_subnet_convs = nn.LayerList([ConvNormLayer(WIDTH, WIDTH) for _ in range(NUM_CONVS)])
        self.reg_subnet_convs = nn.LayerList([ConvNormLayer(WIDTH, WIDTH) for _ in range(NUM_CONVS)])

    def forward(self, fpn_feat):
        cls_feat, reg_feat = fpn_feat, fpn_feat
        for cls_conv, reg_conv in zip(self.cls_subnet_convs, self.reg_subnet_convs):
            cls_feat = F.relu(cls_conv(cls_feat))
            reg_feat = F.relu(reg_conv(reg_feat))
        return cls_feat, reg_feat


class ScaleReg(nn.Layer):
    def __init__(self):
        super().__init__()
        self.scale_reg = self.create_parameter([1], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, x):
        return x * self.scale_reg


class FCOSHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fcos_feat = FCOSFeat()
        self.fcos_head_cls = nn.Conv2D(WIDTH, NUM_CLASSES, 3, padding=1)
        self.fcos_head_reg = nn.Conv2D(WIDTH, 4, 3, padding=1)
        self.fcos_head_centerness = nn.Conv2D(WIDTH, 1, 3, padding=1)
        self.scales_regs = nn.LayerList([ScaleReg() for _ in FPN_STRIDES])
        self.dropout = nn.Dropout(DROP_PROB)

    def forward(self, fpn_feats):
        cls_list, reg_list, ctn_list = [], [], []
        for feat, scale in zip(fpn_feats, self.scales_regs):
            cls_feat, reg_feat = self.fcos_feat(feat)
            cls_logits = self.fcos_head_cls(self.dropout(cls_feat))
            bbox_reg = paddle.exp(scale(self.fcos_head_reg(reg_feat)))
            centerness = self.fcos_head_centerness(reg_feat)
            cls_list.append(_flatten(cls_logits))
            reg_list.append(_flatten(bbox_reg))
            ctn_list.append(_flatten(centerness))
        return paddle.concat(cls_list, 1), paddle.concat(reg_list, 1), paddle.concat(ctn_list, 1)


def _flatten(x):
    n, c = x.shape[0], x.shape[1]
    return x.transpose([0, 2, 3, 1]).reshape([n, -1, c])


class TinyBackbone(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(3, 8, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2D(8, WIDTH, 3, stride=2, padding=1)
        self.conv3 = nn.Conv2D(WIDTH, WIDTH, 3, stride=2, padding=1)

    def forward(self, x):
        c2 = F.relu(self.conv2(F.relu(self.conv1(x))))
        c3 = F.relu(self.conv3(c2))
        return [c2, c3]


class FCOS(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fcos_head = FCOSHead()
        self.backbone = TinyBackbone()

    def forward(self, images):
        return self.fcos_head(self.backbone(images))


def _init_weights(model):
    rng = np.random.default_rng(148)
    for name, p in model.named_parameters():
        shape = list(p.shape)
        if name.endswith("scale_reg"):
            v = np.array([1.2 if ".0." in name else 0.85])
        elif len(shape) == 4:
            v = rng.normal(0.0, np.sqrt(2.0 / np.prod(shape[1:])), shape)
        elif ".norm." in name and name.endswith("weight"):
            v = 1.0 + rng.normal(0.0, 0.1, shape)
        elif ".norm." in name:
            v = rng.normal(0.0, 0.1, shape)
        elif name.startswith("fcos_head.fcos_head_cls."):
            v = -2.0 + rng.normal(0.0, 0.1, shape)
        elif name.startswith("fcos_head.fcos_head_reg."):
            v = 1.5 + rng.normal(0.0, 0.1, shape)
        else:
            v = rng.normal(0.0, 0.05, shape)
        p.set_value(v.astype("float32"))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = FCOS()
    _init_weights(m)
    m.train()
    return m


# ---------------------------------------------------------------------------------------------
# data and FCOS targets (numpy)


def _sample(step):
    rng = np.random.default_rng(61480 + step)
    images = rng.normal(0.0, 0.3, (BATCH, 3, IMG, IMG))
    colours = np.array([[1.0, -0.5, 0.2], [-0.4, 1.0, -0.6], [0.3, 0.3, 1.0]])
    gt_boxes, gt_labels = [], []
    for b in range(BATCH):
        boxes, labels = [], []
        for lo, hi in ((6, 12), (18, 28)):
            w, h = rng.integers(lo, hi), rng.integers(lo, hi)
            x0, y0 = rng.integers(0, IMG - w + 1), rng.integers(0, IMG - h + 1)
            c = int(rng.integers(0, NUM_CLASSES))
            boxes.append([x0, y0, x0 + w, y0 + h])
            labels.append(c)
        for (x0, y0, x1, y1), c in sorted(zip(boxes, labels), key=lambda t: -(t[0][2] - t[0][0]) * (t[0][3] - t[0][1])):
            images[b, :, y0:y1, x0:x1] += colours[c][:, None, None]
        gt_boxes.append(np.array(boxes, "float64"))
        gt_labels.append(np.array(labels, "int64"))
    return images.astype("float32"), gt_boxes, gt_labels


def _points():
    pts, ranges = [], []
    for stride, rng_ in zip(FPN_STRIDES, OBJECT_SIZES):
        n = IMG // stride
        xs = np.arange(n) * stride + stride // 2
        yy, xx = np.meshgrid(xs, xs, indexing="ij")
        p = np.stack([xx.reshape(-1), yy.reshape(-1)], 1).astype("float64")
        pts.append(p)
        ranges.append(np.tile(np.array(rng_, "float64"), (len(p), 1)))
    return np.concatenate(pts), np.concatenate(ranges)


def _fcos_targets(gt_boxes, gt_labels):
    points, ranges = _points()
    labels, reg, ctn = [], [], []
    for boxes, cls in zip(gt_boxes, gt_labels):
        xs, ys = points[:, 0:1], points[:, 1:2]
        ltrb = np.stack([xs - boxes[:, 0], ys - boxes[:, 1], boxes[:, 2] - xs, boxes[:, 3] - ys], -1)  # [P, G, 4]
        inside = ltrb.min(-1) > 0
        max_reg = ltrb.max(-1)
        in_level = (max_reg > ranges[:, 0:1]) & (max_reg <= ranges[:, 1:2])
        area = ((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]))[None].repeat(len(points), 0)
        area[~(inside & in_level)] = np.inf
        best = area.argmin(1)
        pos = np.isfinite(area.min(1))
        t = ltrb[np.arange(len(points)), best]
        lab = np.where(pos, cls[best], NUM_CLASSES)
        lr, tb = t[:, [0, 2]], t[:, [1, 3]]
        c = np.sqrt(np.clip(lr.min(1) / np.maximum(lr.max(1), 1e-12), 0, None)
                    * np.clip(tb.min(1) / np.maximum(tb.max(1), 1e-12), 0, None))
        labels.append(lab)
        reg.append(t)
        ctn.append(np.where(pos, c, 0.0))
    return np.stack(labels), np.stack(reg), np.stack(ctn)


def inputs(step=0):
    images, gt_boxes, gt_labels = _sample(step)
    labels, reg, ctn = _fcos_targets(gt_boxes, gt_labels)
    _TARGETS.update(labels=labels.reshape(-1), reg=reg.reshape(-1, 4), ctn=ctn.reshape(-1))
    return (paddle.to_tensor(images),), {}


# ---------------------------------------------------------------------------------------------
# loss


def _giou_loss(pred, target):
    """GIoU loss for boxes given as distances (l, t, r, b) from the same point."""
    pl, pt, pr, pb = pred.unbind(-1)
    tl, tt, tr, tb = target.unbind(-1)
    pred_area = (pl + pr) * (pt + pb)
    target_area = (tl + tr) * (tt + tb)
    w_inter = paddle.minimum(pl, tl) + paddle.minimum(pr, tr)
    h_inter = paddle.minimum(pb, tb) + paddle.minimum(pt, tt)
    g_w = paddle.maximum(pl, tl) + paddle.maximum(pr, tr)
    g_h = paddle.maximum(pb, tb) + paddle.maximum(pt, tt)
    enclose = g_w * g_h + 1e-7
    inter = w_inter * h_inter
    union = target_area + pred_area - inter
    ious = (inter + 1.0) / (union + 1.0)
    gious = ious - (enclose - union) / enclose
    return 1.0 - gious


def loss(output):
    cls_logits, bbox_reg, centerness = output
    dt = cls_logits.dtype
    labels = _TARGETS["labels"]
    pos = np.nonzero(labels < NUM_CLASSES)[0]
    num_pos = float(max(len(pos), 1))
    one_hot = np.zeros((len(labels), NUM_CLASSES + 1))
    one_hot[np.arange(len(labels)), labels] = 1.0
    cls_target = paddle.to_tensor(one_hot[:, :NUM_CLASSES]).astype(dt)

    normalizer = paddle.to_tensor([num_pos]).astype(dt)
    loss_cls = F.sigmoid_focal_loss(cls_logits.reshape([-1, NUM_CLASSES]), cls_target, normalizer=normalizer,
                                    alpha=FOCAL_ALPHA, gamma=FOCAL_GAMMA, reduction="sum")

    pos_idx = paddle.to_tensor(pos)
    reg_pos = paddle.gather(bbox_reg.reshape([-1, 4]), pos_idx)
    ctn_pos = paddle.gather(centerness.reshape([-1]), pos_idx)
    reg_t = paddle.to_tensor(_TARGETS["reg"][pos]).astype(dt)
    ctn_t = paddle.to_tensor(_TARGETS["ctn"][pos]).astype(dt)

    giou = _giou_loss(reg_pos, reg_t)
    if bug(BUGS) == "paddle_giou_norm":
        loss_box = (giou * ctn_t).sum() / num_pos
    else:
        loss_box = (giou * ctn_t).sum() / ctn_t.sum()
    loss_ctn = F.binary_cross_entropy_with_logits(ctn_pos, ctn_t, reduction="sum") / num_pos
    return loss_cls + loss_box + loss_ctn


def optimizer(model):
    sched = paddle.optimizer.lr.LinearWarmup(learning_rate=BASE_LR, warmup_steps=WARMUP_STEPS,
                                             start_lr=BASE_LR / WARMUP_STEPS, end_lr=BASE_LR)
    if bug(BUGS) == "paddle_clip_value":
        clip = paddle.nn.ClipGradByValue(MAX_NORM)
    else:
        clip = paddle.nn.ClipGradByGlobalNorm(MAX_NORM)
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, parameters=model.parameters(),
                                    weight_decay=L2_COEFF, grad_clip=clip)
    return opt, sched
