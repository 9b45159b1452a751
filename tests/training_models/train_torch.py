"""A small MLP trained with dropout on (module and functional), torch side: the reference."""
import torch
from _common import D_IN, D_OUT, L1, LR, D, batch_of, data, dropout_on, opt_name, per_step_data, target
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D_IN, D)
        self.act = nn.GELU()
        self.drop = nn.Dropout(0.2 if dropout_on() else 0.0)
        self.fc2 = nn.Linear(D, D)
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, D_OUT)

    def forward(self, x):
        h = self.drop(self.act(self.fc1(x)))
        h = nn.functional.dropout(self.fc2(h), p=0.1 if dropout_on() else 0.0, training=self.training)
        out = self.head(self.norm(h))
        if opt_name() == "l1loss":  # the weights' L1 penalty in the loss (paddle: L1Decay in its optimizer)
            return out, L1 * sum(p.abs().sum() for n, p in self.named_parameters() if n.endswith("weight") and "norm" not in n)
        return out


def model():
    torch.manual_seed(0)
    return Net().train()


def inputs(step=0):
    return torch.from_numpy(batch_of(step, port=False) if per_step_data() else data())


def loss(out):
    if isinstance(out, tuple):  # l1loss: the penalty the model returns beside its output
        return ((out[0] - torch.from_numpy(target())) ** 2).mean() + out[1]
    return ((out - torch.from_numpy(target())) ** 2).mean()


def optimizer(m):
    name, params = opt_name(), m.parameters()
    if name == "adamw":
        decay = [p for n, p in m.named_parameters() if n.endswith("weight") and "norm" not in n]
        rest = [p for n, p in m.named_parameters() if not (n.endswith("weight") and "norm" not in n)]
        return torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                                 lr=LR, betas=(0.9, 0.999), eps=1e-8)
    if name == "adam":
        return torch.optim.Adam(params, lr=LR, betas=(0.9, 0.999), eps=1e-8)
    if name == "sgd":
        return torch.optim.SGD(params, lr=LR)
    if name == "paramdecay":  # the decayed weights as a parameter group
        decay = [p for n, p in m.named_parameters() if n.endswith("weight") and "norm" not in n]
        rest = [p for n, p in m.named_parameters() if not (n.endswith("weight") and "norm" not in n)]
        return torch.optim.SGD([{"params": decay, "weight_decay": 0.01}, {"params": rest}], lr=LR, momentum=0.9)
    if name in ("momentum", "nesterov", "l1loss"):
        return torch.optim.SGD(params, lr=LR, momentum=0.9, nesterov=name == "nesterov")
    if name == "adamax":
        return torch.optim.Adamax(params, lr=LR, betas=(0.9, 0.999), eps=1e-8)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=LR, alpha=0.99, eps=1e-8)
    if name == "adagrad":
        return torch.optim.Adagrad(params, lr=LR, eps=1e-10)
    if name == "adagrad_decay":
        return torch.optim.Adagrad(params, lr=LR, eps=1e-10, lr_decay=0.1)
    if name == "steplr":
        opt = torch.optim.SGD(params, lr=LR)
        return opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    if name == "clip":
        return torch.optim.SGD(params, lr=LR)
    raise ValueError(name)


def clip_grad(m):
    if opt_name() == "clip":
        torch.nn.utils.clip_grad_norm_(m.parameters(), max_norm=0.05)
