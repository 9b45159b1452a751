"""Import torchvision for the vision pairs without putting it in the venv.

torchvision 0.28.0 (the only build matching torch 2.13.0) is a CUDA build: its C++ ops
do not register against CPU torch, and the Python fake-op registrations that refer to
them (``torch.library.register_fake("torchvision::nms")`` ...) raise at import time.
With torchvision in the venv ``transformers`` refuses to import, so it lives in
``<repo>/.vision-site`` instead. This module puts that directory on sys.path and imports
torchvision while ignoring registrations of ``torchvision::*`` fake ops (the model
definitions only need plain torch ops). Torch specs do ``from _tv import torchvision``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import torch

SITE = Path(__file__).resolve().parents[2] / ".vision-site"
INSTALL = f".venv/bin/pip install --no-deps --target {SITE} torchvision==0.28.0"


def _import():
    if "torchvision" in sys.modules:
        return sys.modules["torchvision"]
    if not (SITE / "torchvision" / "__init__.py").exists():
        raise ImportError(f"torchvision for the vision pairs is missing: {SITE} has no torchvision; "
                          f"install it (outside the venv) with: {INSTALL}")
    if str(SITE) not in sys.path:
        sys.path.append(str(SITE))  # after the venv: nothing there may shadow it
    real = torch.library.register_fake

    def register_fake(op, *args, **kwargs):
        name = op if isinstance(op, str) else str(getattr(op, "_name", getattr(op, "__name__", "")))
        if name.startswith("torchvision::"):
            def ignore(fn=None, /, *a, **k):
                return fn
            return ignore if not args or not callable(args[0]) else args[0]
        return real(op, *args, **kwargs)

    torch.library.register_fake = register_fake
    try:
        import torchvision
    finally:
        torch.library.register_fake = real
    return torchvision


torchvision = _import()
