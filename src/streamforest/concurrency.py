"""Sharing a model between threads: every model is thread-safe.

**Every public call of a streamforest model holds the model's lock** (a re-entrant lock of its
own), so calls never overlap: each sees the model between two whole calls, results are exactly
those of some sequential order of the calls, and a thread that learns a sequence leaves the
model it would leave alone, whatever other threads predict meanwhile.  The lock serialises
predictions too (a per-example call reuses scratch buffers the model owns: the encoded row, the
trees' predictions, the interval's bounds), which is what makes them safe.  Batch calls release
the GIL in compiled code, but on one model they still run one at a time; their ``n_jobs``
threads are the way to use several cores, and two models run in parallel.

The calls that hold the lock are those named in :data:`LOCKED_CALLS` (learning, predicting,
``fit``, ``set_params``, ...), wherever a model class defines them (see
:class:`streamforest.base.Estimator`).  Attribute reads (``trees_``, ``state_``, ``n_seen``,
...) do not take it: views of live state are only safe to read while no other thread calls the
model, i.e. holding its lock: ``with streamforest.concurrency.lock_of(model): ...``, which is
also how a thread makes several calls one whole (e.g. a prediction and the learning of the same
row) or saves a model other threads use (``streamforest.save`` reads the model unlocked).  The
inner model of a wrapper (``forest_``, ``model_``) is a model of its own, with its own lock: a
call of the wrapper does not hold it for a call of the inner model made by another thread.

The lock's cost per call is measured by ``benchmarks/thread_lock.py`` (per-example calls with
and without it, alternating; the figures are in the docs: user guide, persistence and threads).
It is not saved, pickled or copied: a loaded or copied model has a lock of its own.

:class:`ThreadSafe` (the wrapper that made models thread-safe before they were) still works: it
runs every call of the model under the model's own lock, the lock its ``lock`` attribute
names, so it adds nothing but an indirection and can be dropped.
"""

from __future__ import annotations

import functools
import inspect
import threading

__all__ = ["LOCKED_CALLS", "PicklableLock", "ThreadSafe", "lock_of", "locked"]

#: The methods whose calls hold the model's lock (when a model class defines them).
LOCKED_CALLS = frozenset({
    "learn_one", "learn_many", "learn", "predict_one", "predict", "predict_learn_many",
    "predict_interval_one", "predict_interval", "predict_quantiles_one", "predict_quantiles",
    "predict_proba_one", "predict_proba", "predict_set_one", "predict_sets", "predict_trees",
    "tree_predictions", "apply", "fit", "partial_fit", "score", "set_params", "reset",
})  # fmt: skip

_CREATING = threading.Lock()  # held while a model's lock is made (once per model)


class PicklableLock:
    """A re-entrant lock (a context manager) that pickles as a new one: an engine holds one, and
    models pickle with their engine."""

    def __init__(self):
        self._lock = threading.RLock()

    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        self.__init__()

    def __enter__(self):
        self._lock.acquire()

    def __exit__(self, *exc):
        self._lock.release()


def lock_of(model) -> threading.RLock:
    """The re-entrant lock every public call of ``model`` holds (made on first use)."""
    try:
        return model._call_lock
    except AttributeError:
        with _CREATING:  # two threads calling a new model at once make one lock
            try:
                return model._call_lock
            except AttributeError:
                lock = model._call_lock = threading.RLock()
                return lock


def forwarding(method, body: str, names: dict, extra_keyword: str | None = None):
    """A function with ``method``'s own signature (plus a keyword-only ``extra_keyword=None``
    when given) whose body is ``body``, generated: ``body`` is Python source indented by four
    spaces, where ``{self}`` is the first parameter's name, ``{args}`` the call's arguments
    forwarded as they came, ``{rest}`` the same without the first one (each followed by a
    comma) and ``{extra}`` the extra keyword's name; ``names`` are the globals
    it uses.  Forwarding ``*args, **kwargs`` instead cost more than a lock
    (``benchmarks/thread_lock.py``)."""
    params = list(inspect.signature(method).parameters.values())
    defaults = {}
    head, forward = [], []
    star = False
    for p in params:
        text = p.name
        if p.default is not p.empty:
            defaults[f"_default_{p.name}"] = p.default
            text += f"=_default_{p.name}"
        if p.kind is p.VAR_POSITIONAL:
            head.append("*" + p.name)
            forward.append("*" + p.name)
            star = True
        elif p.kind is p.VAR_KEYWORD:
            head.append("**" + p.name)
            forward.append("**" + p.name)
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                head.append("*")
                star = True
            head.append(text)
            forward.append(f"{p.name}={p.name}")
        else:
            head.append(text)
            forward.append(p.name)
        if p.kind is p.POSITIONAL_ONLY and (
            params.index(p) == len(params) - 1 or params[params.index(p) + 1].kind is not p.kind
        ):
            head.append("/")  # fmt: skip
    if extra_keyword is not None:
        if params and params[-1].kind is p.VAR_KEYWORD:
            raise TypeError(f"{method.__qualname__} takes **kwargs: no keyword can be added")
        if not star:
            head.append("*")
        head.append(f"{extra_keyword}=None")
    source = f"def call({', '.join(head)}):\n" + body.format(
        self=params[0].name,
        args=", ".join(forward),
        rest="".join(f"{a}, " for a in forward[1:]),
        extra=extra_keyword,
    )
    namespace = {**names, **defaults}
    exec(source, namespace)  # noqa: S102 - source built above from the method's signature
    call = namespace["call"]
    signature = inspect.signature(call)  # its own (before update_wrapper points at method)
    call = functools.update_wrapper(call, method)
    if extra_keyword is not None:
        call.__signature__ = signature
    return call


def locked(method):
    """``method`` (of a class whose instances have a ``_call_lock`` slot) made to run holding
    the instance's lock, :func:`lock_of`.

    The wrapper has ``method``'s own signature (:func:`forwarding`), so a call forwards its
    arguments as they came."""
    if getattr(method, "_holds_lock", False):
        return method
    body = (
        "    try:\n"
        "        lock = {self}._call_lock\n"
        "    except AttributeError:\n"
        "        lock = lock_of({self})\n"
        "    lock.acquire()\n"
        "    try:\n"
        "        return method({args})\n"
        "    finally:\n"
        "        lock.release()\n"
    )
    call = forwarding(method, body, {"method": method, "lock_of": lock_of})
    call._holds_lock = True
    return call


class ThreadSafe:
    """A model whose every method call (and attribute read) runs under one re-entrant lock:
    the model's own lock for a streamforest model (whose calls hold it anyway, see the module
    docstring), a new one for any other object.

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
        The ``threading.RLock`` every call holds (:func:`lock_of` the model).

    Pickling (and ``copy.deepcopy``) copies the model under the lock; the copy has its own lock.
    """

    __slots__ = ("model", "lock", "_acquire", "_release")

    def __init__(self, model):
        if isinstance(model, ThreadSafe):
            model = model.model
        # a streamforest model's own lock (its calls hold it anyway); any other object's new one
        lock = lock_of(model) if hasattr(type(model), "_call_lock") else threading.RLock()
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
