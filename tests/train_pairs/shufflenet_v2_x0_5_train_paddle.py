"""ShuffleNetV2 x0.5 in TRAINING mode, paddle.vision side: shufflenet_v2_x0_5(num_classes=10), random
init (no download), inputs N(0, 1) [4, 3, 64, 64] (at 32x32 stage 4 would see 1x1 maps: BatchNorm
over 4 values per channel), labels [0, 3, 6, 9], cross-entropy, model.train(): BatchNorm uses
batch statistics and updates its running stats (momentum 0.9 = torch 0.1); neither library's
ShuffleNetV2 has dropout.
Training: Adagrad with the accumulator started at 0.1 (Keras' default; paddle's and torch's is 0)
and an inverse-time learning-rate decay:
    paddle.optimizer.Adagrad(learning_rate=InverseTimeDecay(1e-3, gamma=0.1), epsilon=1e-8,
                             initial_accumulator_value=0.1), the scheduler stepped after every
    optimizer step (lr 1e-3 / (1 + 0.1 k) at step k);
    s += g^2 ; w -= lr g / (sqrt(s) + epsilon)     (epsilon outside the root, as torch).
torch has the decay built in (Adagrad(lr_decay=0.1): lr / (1 + 0.1 (t - 1)) at its t-th step, the
same numbers); paddle's Adagrad has no lr_decay argument, hence the scheduler.
Twin: shufflenet_v2_x0_5_train_torch.py. Ground truth: shufflenet_v2_x0_5_train_truth.json.

RMSprop was tried first and dropped (see NOTES-set9-h9.md): paddle's RMSProp puts epsilon inside
the square root, torch's outside, and neither lets the mean square start above 0, so no epsilon
makes the float64 twin agree.

PADIFF_BUG (this side only):
  paddle_acc_init -> Adagrad without initial_accumulator_value=0.1 (paddle's default 0.0): the
                     first update becomes lr * g / (|g| + epsilon), about lr * sign(g), instead
                     of about lr * g / sqrt(0.1)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle.vision.models import shufflenet_v2_x0_5

BUGS = {"paddle_acc_init"} | {"bn_cumulative"}  # the torch side's, ignored here
BATCH, SIZE = 4, 64
LR, LR_DECAY, EPS, ACC0 = 1e-3, 0.1, 1e-8, 0.1
LABELS = (np.arange(BATCH) * 3 % 10).astype("int64")


def model():
    bug(BUGS)
    paddle.seed(0)
    m = shufflenet_v2_x0_5(num_classes=10)
    m.train()
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return F.cross_entropy(output, paddle.to_tensor(LABELS))


def optimizer(model):
    # paddle's parameters() also lists the BatchNorm running stats (stop_gradient=True): leave them out
    params = [p for p in model.parameters() if not p.stop_gradient]
    acc0 = 0.0 if bug(BUGS) == "paddle_acc_init" else ACC0
    sched = paddle.optimizer.lr.InverseTimeDecay(learning_rate=LR, gamma=LR_DECAY)
    opt = paddle.optimizer.Adagrad(learning_rate=sched, epsilon=EPS, parameters=params,
                                   initial_accumulator_value=acc0)
    return opt, sched
