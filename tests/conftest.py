import os
import sys
import time

import numpy as np
import pytest


def pytest_configure(config):
    """With parallel workers (``-n N``, pytest-xdist), compile the kernels first, in N
    processes sharing numba's on-disk cache (:func:`streamforest.warmup` with ``processes``),
    so the workers load them instead of each compiling the same kernels (a cold run of the
    suite is mostly compiling).  Only in the controlling process; ``STREAMFOREST_TEST_WARMUP=0``
    skips it.  With a warm cache it costs the warm-up's workloads (about a minute)."""
    n = getattr(config.option, "numprocesses", None)
    if (
        os.environ.get("PYTEST_XDIST_WORKER")
        or os.environ.get("STREAMFOREST_TEST_WARMUP", "1") == "0"
        or not isinstance(n, int)
        or n < 2
    ):
        return
    import streamforest

    t0 = time.perf_counter()
    report = streamforest.warmup(processes=n)
    print(
        f"streamforest warm-up before the tests, {n} processes: {time.perf_counter() - t0:.0f} s, "
        f"{report.compiled} kernel signatures compiled, {report.loaded} loaded",
        file=sys.stderr,
        flush=True,
    )


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
