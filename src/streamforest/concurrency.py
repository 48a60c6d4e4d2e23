"""Sharing a model between threads: :class:`ThreadSafe`.

The contract: **a streamforest model is not thread-safe**, not even for predictions alone.  A
per-example call reuses scratch buffers the model owns (the encoded row, the trees' predictions,
the interval's bounds), so two threads predicting at once can read each other's half-written
values, and a prediction that runs while another thread learns can see trees in the middle of an
update (or arrays being reallocated), or even overwrite the encoded row being learnt, which
corrupts the model.  Keeping the per-example calls lock-free keeps them fast;
a model served by several threads (a web endpoint answering ``predict_*`` while a thread learns)
is wrapped instead:

>>> import streamforest as sf
>>> model = sf.ThreadSafe(sf.OnlineQRF(seed=0))
>>> model.learn_one({"x": 1.0}, 2.0)          # any method of the model, one call at a time
>>> model.predict_interval_one({"x": 1.0}, alpha=0.1)
(2.0, 2.0)

Every call through the wrapper holds one lock for its whole duration, so calls never overlap and
each sees the model between two whole calls: results are exactly those of some sequential order
of the calls (a thread that learns a sequence leaves the model it would leave alone).  The lock
serialises predictions too, which is what makes them safe; it costs little next to the model's
own work (measured in the docs: user guide, persistence and threads).  Batch calls
release the GIL in compiled code, but under the wrapper they still run one at a time; their
``n_jobs`` threads are the way to use several cores.

To use the model directly (inspection, :func:`streamforest.save`), hold the lock:
``with model.lock: streamforest.save(model.model, path)``.  Objects a call returns are the
caller's, except views of live state (``trees_``, ``state_``), which are only safe to read under
the lock.
"""

from __future__ import annotations

import functools
import threading

__all__ = ["ThreadSafe"]


class ThreadSafe:
    """A model whose every method call (and attribute read) runs under one re-entrant lock.

    Parameters
    ----------
    model
        Any streamforest estimator (or any object): ``ThreadSafe(model).f(...)`` is
        ``model.f(...)`` holding :attr:`lock`.  A method that returns the model itself
        (``learn_many``, ``fit``, ...) returns the wrapper, so chained calls stay locked.

    Attributes
    ----------
    model
        The wrapped model: use it only while holding :attr:`lock`.
    lock
        The ``threading.RLock`` every call holds.

    Pickling (and ``copy.deepcopy``) copies the model under the lock; the copy has its own lock.
    """

    __slots__ = ("model", "lock", "_acquire", "_release")

    def __init__(self, model):
        if isinstance(model, ThreadSafe):
            model = model.model
        lock = threading.RLock()
        for k, v in (("model", model), ("lock", lock), ("_acquire", lock.acquire),
                     ("_release", lock.release)):  # fmt: skip
            object.__setattr__(self, k, v)

    # the public API of the estimators, spelt out: the common calls skip __getattr__, and the
    # per-example ones skip the ``with`` statement (bound acquire/release are cheaper)
    def learn_one(self, x, y, w=1.0):
        self._acquire()
        try:
            return self.model.learn_one(x, y, w)
        finally:
            self._release()

    def predict_one(self, x):
        self._acquire()
        try:
            return self.model.predict_one(x)
        finally:
            self._release()

    def predict_interval_one(self, x, alpha=0.1):
        self._acquire()
        try:
            return self.model.predict_interval_one(x, alpha)
        finally:
            self._release()

    def predict_quantiles_one(self, x, q):
        self._acquire()
        try:
            return self.model.predict_quantiles_one(x, q)
        finally:
            self._release()

    def learn_many(self, X, y, w=None):
        with self.lock:
            return self._own(self.model.learn_many(X, y, w))

    def predict(self, X):
        with self.lock:
            return self.model.predict(X)

    def predict_learn_many(self, X, y, *args, **kwargs):
        with self.lock:
            return self.model.predict_learn_many(X, y, *args, **kwargs)

    def predict_interval(self, X, alpha=0.1):
        with self.lock:
            return self.model.predict_interval(X, alpha)

    def predict_quantiles(self, X, q):
        with self.lock:
            return self.model.predict_quantiles(X, q)

    def _own(self, out):
        return self if out is self.model else out

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        with self.lock:
            value = getattr(self.model, name)
        if not callable(value) or isinstance(value, type):
            return value
        lock, own = self.lock, self._own

        @functools.wraps(value)
        def locked(*args, **kwargs):
            with lock:
                return own(value(*args, **kwargs))

        return locked

    def __setattr__(self, name, value):
        with self.lock:
            setattr(self.model, name, value)

    def __getstate__(self):
        with self.lock:
            return {"model": self.model}

    def __setstate__(self, state):
        self.__init__(state["model"])

    def __repr__(self) -> str:
        with self.lock:
            return f"ThreadSafe({self.model!r})"
