"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_ppo_train_paddle.py) the cleanrl ppo.py way.

    Agent: registers torso = Sequential(Linear 8 -> 32, Tanh, Linear 32 -> 32, Tanh) (.0 .1 .2 .3),
        critic (Linear 32 -> 1), actor (Linear 32 -> 4); calls torso, actor, critic
    forward(x) -> (logits [B, 4], value [B] = critic(h).squeeze(-1))

Loss (cleanrl): Categorical(logits=logits) for log_prob and entropy; logratio = new - old,
ratio = exp(logratio); mb_advantages normalised with (A - mean) / (A.std() + 1e-8) (unbiased);
pg_loss = max(-A r, -A clamp(r, 0.8, 1.2)).mean(); v_loss = ((value - returns) ** 2).mean();
loss = pg_loss - 0.01 * entropy.mean() + 0.5 * v_loss.
Optimizer: Adam(lr 3e-4, eps 1e-5), two parameter groups (policy: torso + actor; value: critic);
clip_grad_norm_(model.parameters(), 0.5) in clip_grad().
Data: the same minibatches as the paddle side (default_rng(4900 + step), drawn by the same recipe).

PADIFF_BUG (this side only):
  critic_not_optimized -> the value parameter group is forgotten when the optimizer is built:
              Adam([{"params": policy}]) - the critic keeps its initial weights (its gradients
              are still computed, clipped with the rest and never zeroed by zero_grad)
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn
from torch.distributions.categorical import Categorical

BUGS = {"critic_not_optimized"} | {"paddle_ratio_flip", "paddle_adv_biased"}  # the paddle side's, ignored here
OBS_DIM, HIDDEN, N_ACT, MINIBATCH = 8, 32, 4, 16
LR, ADAM_EPS, MAX_GRAD_NORM = 3e-4, 1e-5, 0.5
CLIP_COEF, VF_COEF, ENT_COEF = 0.2, 0.5, 0.01

_MB = {}


def minibatch(step):
    rng = np.random.default_rng(4900 + step)
    obs = rng.standard_normal((MINIBATCH, OBS_DIM)).astype(np.float32)
    actions = rng.integers(0, N_ACT, MINIBATCH).astype(np.int64)
    behaviour = rng.normal(0.0, 0.2, (MINIBATCH, N_ACT))
    behaviour = behaviour - np.log(np.exp(behaviour).sum(-1, keepdims=True))
    advantages = rng.standard_normal(MINIBATCH) * 2.0 + 0.3
    z = (advantages - advantages.mean()) / advantages.std()
    logprobs = (behaviour[np.arange(MINIBATCH), actions] - 0.15 * z).astype(np.float32)
    advantages = advantages.astype(np.float32)
    returns = rng.standard_normal(MINIBATCH).astype(np.float32)
    return obs, actions, logprobs, advantages, returns


def layer_init(layer, std=2.0 ** 0.5, bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.torso = nn.Sequential(
            layer_init(nn.Linear(OBS_DIM, HIDDEN)), nn.Tanh(),
            layer_init(nn.Linear(HIDDEN, HIDDEN)), nn.Tanh(),
        )
        self.critic = layer_init(nn.Linear(HIDDEN, 1), std=1.0)
        self.actor = layer_init(nn.Linear(HIDDEN, N_ACT), std=0.01)

    def forward(self, x):
        hidden = self.torso(x)
        return self.actor(hidden), self.critic(hidden).squeeze(-1)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = Agent()
    m.train()
    return m


def inputs(step=0):
    obs, actions, logprobs, advantages, returns = minibatch(step)
    _MB.update(actions=torch.from_numpy(actions), logprobs=torch.from_numpy(logprobs),
               advantages=torch.from_numpy(advantages), returns=torch.from_numpy(returns))
    return (torch.from_numpy(obs),), {}


def loss(output):
    logits, newvalue = output
    dt = logits.dtype
    probs = Categorical(logits=logits)
    newlogprob = probs.log_prob(_MB["actions"])
    entropy = probs.entropy()
    logratio = newlogprob - _MB["logprobs"].to(dt)
    ratio = logratio.exp()

    mb_advantages = _MB["advantages"].to(dt)
    mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

    pg_loss1 = -mb_advantages * ratio
    pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - CLIP_COEF, 1 + CLIP_COEF)
    pg_loss = torch.max(pg_loss1, pg_loss2).mean()
    v_loss = ((newvalue - _MB["returns"].to(dt)) ** 2).mean()
    return pg_loss - ENT_COEF * entropy.mean() + v_loss * VF_COEF


def optimizer(model):
    policy = list(model.torso.parameters()) + list(model.actor.parameters())
    groups = [{"params": policy}]
    if bug(BUGS) != "critic_not_optimized":
        groups.append({"params": list(model.critic.parameters())})
    return torch.optim.Adam(groups, lr=LR, eps=ADAM_EPS)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)
