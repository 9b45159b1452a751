"""Helpers shared by the training-mode pairs (tests/train_pairs). Framework imports are lazy.

The recorder puts a spec's folder on sys.path, so specs import this as `_train_common`.
Everything here is numpy or takes the framework module: each spec imports only its own side.

Shared hyperparameters: AdamW lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on
every tensor of two or more dimensions (matrices, embeddings), none on 1-D tensors (biases,
norm scales) -- one rule, by shape, that gives the same set on both sides whatever the names.
"""
import os

import numpy as np

BATCH, SEQ = 2, 8
LR, BETA1, BETA2, EPS, WD = 1e-3, 0.9, 0.999, 1e-8, 0.01
CLIP_NORM = 1.0


def bug(known):
    """PADIFF_BUG, checked against the family's bug names (both sides' bugs: a spec ignores the
    other side's)."""
    b = os.environ.get("PADIFF_BUG", "")
    if b and b not in known:
        raise ValueError(f"unknown PADIFF_BUG={b!r}; this family knows {sorted(known)}")
    return b


def token_ids(vocab, batch=BATCH, seq=SEQ, seed=0, low=4):
    """int64 [batch, seq] ids from numpy default_rng(seed); ids below `low` (pad/bos/eos) avoided."""
    return np.random.default_rng(seed).integers(low, vocab, (batch, seq)).astype("int64")


def randomize_paddle(model, std=0.2, seed=0):
    """Redraw every paddle parameter (matrices N(0, std), biases N(0, 0.1), other 1-D tensors
    1 + N(0, 0.1)) so that every tensor of the pair matters; tied parameters are drawn once."""
    import paddle

    paddle.seed(seed)
    for name, p in model.named_parameters():
        if p.ndim >= 2:
            v = paddle.normal(0.0, std, p.shape)
        elif name.endswith("bias"):
            v = paddle.normal(0.0, 0.1, p.shape)
        else:
            v = 1.0 + paddle.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype(p.dtype))
    return model


def paddle_adamw(model, *, beta2=BETA2, epsilon=EPS, clip=False, decay_all=False):
    """paddle AdamW with the shared settings; decay on tensors of ndim >= 2 only
    (`apply_decay_param_fun` receives the parameter's `.name`, e.g. "linear_0.w_0")."""
    import paddle

    params = [p for p in model.parameters() if not p.stop_gradient]
    decay = {p.name for p in params if p.ndim >= 2}
    return paddle.optimizer.AdamW(
        learning_rate=LR, beta1=BETA1, beta2=beta2, epsilon=epsilon, parameters=params, weight_decay=WD,
        apply_decay_param_fun=None if decay_all else (lambda name: name in decay),
        grad_clip=paddle.nn.ClipGradByGlobalNorm(CLIP_NORM) if clip else None,
    )


def torch_param_groups(model, wd=WD):
    """[decayed (ndim >= 2), not decayed (1-D)] parameter groups, the HF Trainer way."""
    params = [p for p in model.parameters() if p.requires_grad]
    return [{"params": [p for p in params if p.ndim >= 2], "weight_decay": wd},
            {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]


def torch_adamw(model, *, decay_all=False):
    import torch

    groups = [p for p in model.parameters() if p.requires_grad] if decay_all else torch_param_groups(model)
    return torch.optim.AdamW(groups, lr=LR, betas=(BETA1, BETA2), eps=EPS, weight_decay=WD)
