"""padiff_trace.matching._match: type equivalence table and global alignment."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from padiff_trace.matching._match import align, canonical_type, is_known_type, types_equivalent


@pytest.mark.parametrize(
    "a,b",
    [
        ("Conv2D", "Conv2d"),
        ("MultiHeadAttention", "MultiheadAttention"),
        ("BatchNorm2D", "BatchNorm2d"),
        ("BatchNorm", "BatchNorm2d"),
        ("SimpleRNN", "RNN"),
        ("Swish", "SiLU"),
        ("Conv2DTranspose", "ConvTranspose2d"),
        ("TransformerEncoderLayer", "TransformerEncoderLayer"),
    ],
)
def test_equivalent_types(a: str, b: str) -> None:
    assert canonical_type(a) == canonical_type(b) or a.startswith("BatchNorm")
    assert types_equivalent(a, b) is True
    assert types_equivalent(b, a) is True


def test_not_equivalent_and_unknown() -> None:
    assert types_equivalent("Conv2D", "Conv1d") is False
    assert types_equivalent("BatchNorm2D", "LayerNorm") is False
    assert types_equivalent("Linear", "MyBlock") is None
    assert types_equivalent("MyBlock", "MyBlock") is None
    assert canonical_type("MyBlock") == "myblock"
    assert not is_known_type("MyBlock") and is_known_type("conv2d")


def _brute(score: np.ndarray) -> float:
    n, m = score.shape
    best = 0.0
    # every monotone matching of a tiny matrix
    cells = [(i, j) for i in range(n) for j in range(m) if score[i, j] > 0]
    for k in range(1, min(n, m) + 1):
        for combo in itertools.combinations(cells, k):
            if all(a[0] < b[0] and a[1] < b[1] for a, b in zip(combo, combo[1:])):
                best = max(best, sum(score[c] for c in combo))
    return best


def test_align_is_optimal_on_random_small_matrices() -> None:
    rng = np.random.default_rng(0)
    for _ in range(60):
        n, m = rng.integers(1, 5, size=2)
        s = rng.normal(size=(n, m)).round(1)
        pairs = align(s)
        assert all(s[p] > 0 for p in pairs)
        assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(pairs, pairs[1:]))
        assert sum(s[p] for p in pairs) == pytest.approx(_brute(s))


def test_align_skips_insertions_not_zipping() -> None:
    a = ["linear", "relu", "linear", "linear"]
    b = ["linear", "dropout", "relu", "linear", "identity", "linear"]
    s = np.array([[1.0 if x == y else 0.0 for y in b] for x in a])
    assert align(s) == [(0, 0), (1, 2), (2, 3), (3, 5)]
    assert align(np.zeros((0, 3))) == []
    assert align(np.full((2, 2), np.nan)) == []


def test_align_5k_is_fast() -> None:
    rng = np.random.default_rng(1)
    n = 5000
    s = np.where(rng.random((n, n)) < 0.001, 1.0, 0.0)
    s[np.arange(n), np.arange(n)] = 2.0
    t0 = time.perf_counter()
    pairs = align(s)
    dt = time.perf_counter() - t0
    assert len(pairs) == n
    assert dt < 10, dt
