"""The paddle port of train_torch.py. PADIFF_BUG: drop_p (the first Dropout at 0.3), eps
(AdamW epsilon 1e-6), wd (weight decay 0.0102: subtle), decay_all (AdamW decays biases and the norm too), betas (beta2 0.99),
sched (the schedule stepped once before training: one step early), momentum (0.8), nesterov (off), clip_value (clip each
gradient by value instead of the global norm), lr (2x),
inv_decay (adagrad_decay's inverse-time decay 0.2 instead of 0.1), l1_all (l1loss: the optimizer's L1Decay on\nevery parameter, biases and the norm too)."""
import paddle
from _common import D_IN, D_OUT, L1, LR, D, batch_of, bug, data, dropout_on, opt_name, per_step_data, target
from paddle import nn


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D_IN, D)
        self.act = nn.GELU()
        self.drop = nn.Dropout((0.3 if bug() == "drop_p" else 0.2) if dropout_on() else 0.0)
        self.fc2 = nn.Linear(D, D)
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, D_OUT)

    def forward(self, x):
        h = self.drop(self.act(self.fc1(x)))
        h = nn.functional.dropout(self.fc2(h), p=0.1 if dropout_on() else 0.0, training=self.training)
        out = self.head(self.norm(h))
        if opt_name() == "l1loss":  # the same loss value as torch's; the gradient term comes from L1Decay
            with paddle.no_grad():
                pen = L1 * sum(p.abs().sum() for n, p in self.named_parameters() if n.endswith("weight") and "norm" not in n)
            return out, pen
        return out


def model():
    paddle.seed(0)
    m = Net()
    m.train()
    return m


def inputs(step=0):
    return paddle.to_tensor(batch_of(step, port=True) if per_step_data() else data())


def loss(out):
    if isinstance(out, tuple):  # l1loss: the penalty the model returns beside its output
        return ((out[0] - paddle.to_tensor(target())) ** 2).mean() + out[1]
    return ((out - paddle.to_tensor(target())) ** 2).mean()


def optimizer(m):
    name, params = opt_name(), m.parameters()
    lr = LR * 2 if bug() == "lr" else LR
    if name == "adamw":
        decay = {p.name for n, p in m.named_parameters() if n.endswith("weight") and "norm" not in n}
        return paddle.optimizer.AdamW(
            learning_rate=lr, parameters=params, beta1=0.9, beta2=0.99 if bug() == "betas" else 0.999,
            epsilon=1e-6 if bug() == "eps" else 1e-8, weight_decay=0.0102 if bug() == "wd" else 0.01,
            apply_decay_param_fun=None if bug() == "decay_all" else (lambda n: n in decay))
    if name == "adam":
        return paddle.optimizer.Adam(learning_rate=lr, parameters=params, beta1=0.9, beta2=0.999, epsilon=1e-8)
    if name == "sgd":
        return paddle.optimizer.SGD(learning_rate=lr, parameters=params)
    if name == "paramdecay":  # decay carried by the weights themselves (ParamAttr regularizers), none in the optimizer
        for n, p in m.named_parameters():
            if n.endswith("weight") and "norm" not in n:
                p.regularizer = paddle.regularizer.L2Decay(0.01)
        return paddle.optimizer.Momentum(learning_rate=lr, parameters=params, momentum=0.9)
    if name == "l1loss":  # L1 decay of the weights as their regularizer; l1_all: the optimizer decays the rest too
        for n, p in m.named_parameters():
            if n.endswith("weight") and "norm" not in n:
                p.regularizer = paddle.regularizer.L1Decay(L1)
        extra = {"weight_decay": paddle.regularizer.L1Decay(L1)} if bug() == "l1_all" else {}
        return paddle.optimizer.Momentum(learning_rate=lr, parameters=params, momentum=0.9, **extra)
    if name in ("momentum", "nesterov"):
        return paddle.optimizer.Momentum(learning_rate=lr, parameters=params, momentum=0.8 if bug() == "momentum" else 0.9,
                                         use_nesterov=name == "nesterov" and bug() != "nesterov")
    if name == "adamax":
        return paddle.optimizer.Adamax(learning_rate=lr, parameters=params, beta1=0.9, beta2=0.999, epsilon=1e-8)
    if name == "rmsprop":
        return paddle.optimizer.RMSProp(learning_rate=lr, parameters=params, rho=0.99, epsilon=1e-8)
    if name == "adagrad":
        return paddle.optimizer.Adagrad(learning_rate=lr, parameters=params, epsilon=1e-10)
    if name == "adagrad_decay":  # the decay in a scheduler; torch keeps it inside Adagrad (lr_decay)
        sched = paddle.optimizer.lr.InverseTimeDecay(learning_rate=lr, gamma=0.2 if bug() == "inv_decay" else 0.1)
        return paddle.optimizer.Adagrad(learning_rate=sched, parameters=params, epsilon=1e-10), sched
    if name == "steplr":
        sched = paddle.optimizer.lr.StepDecay(learning_rate=lr, step_size=2, gamma=0.5)
        if bug() == "sched":  # stepped once before training: every lr one step early
            sched.step()
        return paddle.optimizer.SGD(learning_rate=sched, parameters=params), sched
    if name == "clip":
        clip = paddle.nn.ClipGradByValue(0.05) if bug() == "clip_value" else paddle.nn.ClipGradByGlobalNorm(0.05)
        return paddle.optimizer.SGD(learning_rate=lr, parameters=params, grad_clip=clip)
    raise ValueError(name)
