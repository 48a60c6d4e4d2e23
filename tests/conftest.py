import numpy as np
import pytest

#: Test files that take longest on a cold run (Ray actors, compiling, long streams), longest
#: first: with parallel workers they are handed out before the rest, so that no worker is left
#: with several of them at the end (longest first, then the others in pytest-xdist's order;
#: measured with ``--durations``, issue 29).
SLOW_FILES = (
    "test_core_extension.py",
    "test_distributed.py",
    "test_docs.py",
    "test_persistence.py",
    "test_online_conformal.py",
    "test_aborf.py",
    "test_atser.py",
    "test_engine.py",
    "test_fuzz.py",
    "test_file_safety.py",
    "test_file_hostile.py",
    "test_concurrency.py",
)


def pytest_collection_modifyitems(config, items):
    """The :data:`SLOW_FILES` first (a stable sort: each file's tests keep their order)."""
    rank = {name: i for i, name in enumerate(SLOW_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOW_FILES)))


def pytest_configure(config):
    """Keep the test order of :func:`pytest_collection_modifyitems` with pytest-xdist (no
    warm-up before the workers: docs/development.md says why)."""
    if hasattr(config.option, "loadscopereorder"):  # (else xdist orders files by test count)
        config.option.loadscopereorder = False


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


def ids_stream(n, n_ids, n_classes, seed=0):
    """A nominal user id per row (its preferred class 70% of the time, else the class of
    ``x0``'s interval among ``n_classes``): ``(ids, X (n, 2), labels "c<k>")``."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n_ids, n)
    X = rng.random((n, 2))
    preferred = np.random.default_rng(seed + 1).integers(0, n_classes, n_ids)
    y = np.where(rng.random(n) < 0.7, preferred[ids], np.floor(n_classes * X[:, 0]).astype(int))
    return ids, X, np.array([f"c{v}" for v in y.tolist()], dtype=object)


def id_rows(ids, X, a, b):
    """Rows ``a:b`` of an :func:`ids_stream` as an object array: the id ``"u<id>"``, x0, x1."""
    out = np.empty((b - a, 3), dtype=object)
    out[:, 0] = [f"u{v}" for v in ids[a:b].tolist()]
    out[:, 1] = X[a:b, 0].tolist()
    out[:, 2] = X[a:b, 1].tolist()
    return out


def check_normalized_conformal_over(forest, X, y, strict_centre=False):
    """NormalizedConformal over ``forest`` (a forest of the forest interface): prequential
    coverage at alpha 0.1 within (0.8, 0.97) after 500 rows of the first 2000, then rows
    2000-2099 one at a time, each interval holding the point prediction (strictly inside if
    ``strict_centre``), then intervals of the next 100 rows.  Returns the first 2000 rows'
    predictions and the model."""
    import streamforest as sf

    model = sf.NormalizedConformal(forest, seed=1)
    pred, iv = model.predict_learn_many(X[:2000], y[:2000], alpha=0.1)
    inside = (y[:2000] >= iv[:, 0]) & (y[:2000] <= iv[:, 1])
    assert 0.8 < inside[500:].mean() < 0.97
    names = [f"x{j + 1}" for j in range(X.shape[1])]
    for i in range(2000, 2100):  # the per-example path
        x = dict(zip(names, X[i], strict=True))
        lo, hi = model.predict_interval_one(x, 0.1)
        centre = model.predict_one(x)
        assert (lo < centre < hi) if strict_centre else (lo <= centre <= hi)
        model.learn_one(x, float(y[i]))
    assert model.predict_interval(X[2100:2200], 0.1).shape == (100, 2)
    return pred, model


def resident_pages(a: np.ndarray) -> np.ndarray:
    """Addresses of the pages of ``a`` that this process holds: present and mapped by it alone
    (Linux ``/proc/self/pagemap``, bits 63 and 56), so a page of zeros only ever read (mapped
    to the kernel's shared zero page, not in the RSS) is not one; where pagemap cannot be
    read, every page in memory (``mincore``)."""
    import ctypes
    import ctypes.util
    import os

    page = os.sysconf("SC_PAGE_SIZE")
    lo = a.ctypes.data // page * page
    hi = -(-(a.ctypes.data + a.nbytes) // page) * page
    try:
        with open("/proc/self/pagemap", "rb") as f:
            f.seek(lo // page * 8)
            v = np.frombuffer(f.read((hi - lo) // page * 8), np.uint64)
        held = ((v >> np.uint64(63)) & (v >> np.uint64(56)) & np.uint64(1)).astype(bool)
        return lo + page * np.flatnonzero(held)
    except OSError:
        pass
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    vec = (ctypes.c_ubyte * ((hi - lo) // page))()
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    assert libc.mincore(ctypes.c_void_p(lo), hi - lo, vec) == 0
    return lo + page * np.flatnonzero(np.frombuffer(vec, np.uint8) & 1)


def trees_bytes(model) -> int:
    """The bytes of the trees' fields of ``model`` (a forest, a tree, or a wrapper of one): what
    its ``max_memory_mb`` bounds.  Its ``memory_bytes`` adds the feature space, the pages at
    the trees' rows' ends (what the process holds for them) and a wrapper's own buffers."""
    inner = model
    while "engine_" not in inner.__dict__:
        inner = inner.forest_ if hasattr(inner, "forest_") else inner.model_
    return inner.engine_.memory_bytes
