import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def friedman1(n, rng, noise=1.0, p=10):
    X = rng.random((n, p))
    y = (
        10 * np.sin(np.pi * X[:, 0] * X[:, 1])
        + 20 * (X[:, 2] - 0.5) ** 2
        + 10 * X[:, 3]
        + 5 * X[:, 4]
        + noise * rng.standard_normal(n)
    )
    return X, y
