"""Model pairs and framework helpers for the recorder contract tests (tests/test_recorder_contract.py).

``torch_models.py`` and ``paddle_models.py`` each define the same built-in-layer models and a
``Framework`` helper with the same methods: the contract suite is written once against that
interface. The ``*_paddle.py`` / ``*_torch.py`` files are spec files for ``padiff-trace record/run``.
"""
