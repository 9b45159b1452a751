"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a PPO actor-critic
update (the clipped-surrogate step of PPO, without the environment), 3 steps, one minibatch per
step.

    ActorCritic: registers policy_head (Linear 32 -> 4), value_head (ValueHead: create_parameter
        weight [32, 1] and bias [1]), fc1 (Linear 8 -> 32), fc2 (Linear 32 -> 32); calls fc1, tanh,
        fc2, tanh, then policy_head and value_head on the shared features (paddle.tanh, functional)
    forward(obs) -> (logits [B, 4], value [B])

Data: inputs(step): a minibatch of 16 rollout samples from default_rng(4900 + step): observations
[16, 8] (the model's input), actions in 0..3, old log-probabilities (log_softmax of a behaviour
policy's logits N(0, 0.2), taken at the actions, minus 0.15 x the standardised advantage: the
policy has already moved towards the good actions), advantages and returns (kept by the spec for
loss()).
Loss (PPO): advantages normalised per minibatch, (A - mean) / (std + 1e-8) with the UNBIASED std
(paddle.std's default, as torch.std's); ratio = exp(new_logp - old_logp);
loss = -min(r A, clip(r, 0.8, 1.2) A).mean() + 0.5 * mse(value, returns) - 0.01 * entropy.mean().
Optimizer: Adam(learning_rate 3e-4, epsilon 1e-5), grad_clip=ClipGradByGlobalNorm(0.5).
Init (person A, cleanrl's layer_init): paddle.seed(0); orthogonal weights, gain sqrt(2) for fc1/fc2,
0.01 for the policy head, 1.0 for the value head; biases 0.

PADIFF_BUG (this side only):
  paddle_ratio_flip -> ratio = exp(old_logp - new_logp) (the log-ratio subtracted the wrong way)
  paddle_adv_biased -> advantages normalised with the BIASED std (sqrt of the mean squared
              deviation, as the numpy code of openai/baselines does), torch.std is unbiased
"""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_ratio_flip", "paddle_adv_biased"} | {"critic_not_optimized"}  # the torch side's, ignored here
OBS_DIM, HIDDEN, N_ACT, MINIBATCH = 8, 32, 4, 16
LR, ADAM_EPS, MAX_GRAD_NORM = 3e-4, 1e-5, 0.5
CLIP_COEF, VF_COEF, ENT_COEF = 0.2, 0.5, 0.01

_BATCH = {}


def rollout(step):
    """One minibatch (numpy): the same numbers on both sides."""
    rng = np.random.default_rng(4900 + step)
    obs = rng.standard_normal((MINIBATCH, OBS_DIM)).astype("float32")
    actions = rng.integers(0, N_ACT, MINIBATCH).astype("int64")
    beh = rng.normal(0.0, 0.2, (MINIBATCH, N_ACT))
    beh = beh - np.log(np.exp(beh).sum(-1, keepdims=True))
    adv = rng.standard_normal(MINIBATCH) * 2.0 + 0.3
    # an epoch or two into the update: the policy has already moved towards the good actions
    old_logp = (beh[np.arange(MINIBATCH), actions] - 0.15 * (adv - adv.mean()) / adv.std()).astype("float32")
    adv = adv.astype("float32")
    returns = rng.standard_normal(MINIBATCH).astype("float32")
    return obs, actions, old_logp, adv, returns


def _orth(gain):
    return paddle.ParamAttr(initializer=nn.initializer.Orthogonal(gain=gain))


_ZERO = paddle.ParamAttr(initializer=nn.initializer.Constant(0.0))


class ValueHead(nn.Layer):
    def __init__(self, hidden):
        super().__init__()
        self.weight = self.create_parameter([hidden, 1], attr=_orth(1.0))
        self.bias = self.create_parameter([1], attr=_ZERO, is_bias=True)

    def forward(self, h):
        return (paddle.matmul(h, self.weight) + self.bias).squeeze(-1)


class ActorCritic(nn.Layer):
    def __init__(self):
        super().__init__()
        self.policy_head = nn.Linear(HIDDEN, N_ACT, weight_attr=_orth(0.01), bias_attr=_ZERO)
        self.value_head = ValueHead(HIDDEN)
        self.fc1 = nn.Linear(OBS_DIM, HIDDEN, weight_attr=_orth(math.sqrt(2)), bias_attr=_ZERO)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN, weight_attr=_orth(math.sqrt(2)), bias_attr=_ZERO)

    def forward(self, obs):
        h = paddle.tanh(self.fc1(obs))
        h = paddle.tanh(self.fc2(h))
        return self.policy_head(h), self.value_head(h)


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = ActorCritic()
    m.train()
    return m


def inputs(step=0):
    obs, actions, old_logp, adv, returns = rollout(step)
    _BATCH.update(actions=actions, old_logp=old_logp, adv=adv, returns=returns)
    return (paddle.to_tensor(obs),), {}


def loss(output):
    logits, value = output
    dt = logits.dtype
    act = paddle.to_tensor(_BATCH["actions"])
    old_logp = paddle.to_tensor(_BATCH["old_logp"]).astype(dt)
    adv = paddle.to_tensor(_BATCH["adv"]).astype(dt)
    returns = paddle.to_tensor(_BATCH["returns"]).astype(dt)

    logp_all = F.log_softmax(logits, axis=-1)
    new_logp = paddle.take_along_axis(logp_all, act.unsqueeze(-1), axis=-1).squeeze(-1)
    entropy = -(paddle.exp(logp_all) * logp_all).sum(axis=-1)

    b = bug(BUGS)
    if b == "paddle_adv_biased":
        std = paddle.sqrt(paddle.mean((adv - adv.mean()) ** 2))
    else:
        std = paddle.std(adv)
    adv = (adv - adv.mean()) / (std + 1e-8)
    ratio = paddle.exp(old_logp - new_logp) if b == "paddle_ratio_flip" else paddle.exp(new_logp - old_logp)
    surr = paddle.minimum(ratio * adv, paddle.clip(ratio, 1.0 - CLIP_COEF, 1.0 + CLIP_COEF) * adv)
    policy_loss = -surr.mean()
    value_loss = F.mse_loss(value, returns)
    return policy_loss + VF_COEF * value_loss - ENT_COEF * entropy.mean()


def optimizer(model):
    return paddle.optimizer.Adam(learning_rate=LR, epsilon=ADAM_EPS, parameters=model.parameters(),
                                 grad_clip=paddle.nn.ClipGradByGlobalNorm(MAX_GRAD_NORM))
