"""The classification task of a model run by an engine: both APIs (River-style dicts, array
batches).

:class:`EngineClassifier` is the base of :class:`~streamforest.HoeffdingTreeClassifier`,
:class:`~streamforest.ACTSERClassifier` (engines of one tree) and
:class:`~streamforest.ACTSEREnsembleClassifier`: on :class:`~streamforest.engine.model.
EngineModel` (the feature space, the engine, inspection; features encoded as for the
regressors, strings nominal) it adds what a label per example needs.  The trees learn through
the engine's passes, as a regressor's do (the label's class index is the target of a
classification tree kind); their class probabilities are voted (``_core.engine.vote_rows``,
``src/core/engine/class_votes.hpp``).

Labels may be any hashable value but ``None`` and NaN (ints, strings, bools, tuples ...; numpy
scalars are stored as the Python value they equal).  ``classes_`` lists the labels learnt, in
order of first appearance; a label never seen before is learnt, not an error: the engine widens
every tree's class fields (:meth:`~streamforest.engine.core.Engine.sync`).  The columns of
:meth:`predict_proba` follow ``classes_``.  Trees work on class indices (positions in
``classes_``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np

import streamforest._core as _core

from .._labels import accuracy, label_array
from .._labels import check_label as _label
from .._labels import check_labels as _labels
from ..features import check_weights, n_rows, weight_of
from .model import EngineModel

PREDICT_BLOCK_BYTES = 2**24  # the most the trees' probabilities of a batch take at once


class EngineClassifier(EngineModel):
    """Base of the classifiers run by an :class:`~streamforest.engine.core.Engine`."""

    # --- state -----------------------------------------------------------------------------------
    def _new_task_state(self) -> None:
        self.classes_ = []
        self._class_index = {}

    @property
    def n_classes_(self) -> int:
        return len(self.__dict__.get("classes_", ()))

    def _index_of(self, label) -> int:
        """The index of ``label`` (registered when new; the engine widens at its next sync)."""
        i = self._class_index.get(label)
        if i is None:
            i = self._class_index[label] = len(self.classes_)
            self.classes_.append(label)
            self.engine_.n_classes = len(self.classes_)
        return i

    def _label_array(self, idx: np.ndarray) -> np.ndarray:
        """Labels of class indices, as an array of the labels' type where numpy has one."""
        arr = self.__dict__.get("_labels_cache")
        if arr is None or len(arr) != len(self.classes_):
            arr = self._labels_cache = label_array(self.classes_)
        return arr[idx]

    def __getstate__(self):
        d = dict(self.__dict__)
        for scratch in ("_labels_cache", "_pt", "_mean", "_votes"):
            d.pop(scratch, None)
        return d

    # --- learning --------------------------------------------------------------------------------
    def learn_one(self, x: Mapping[Hashable, object], y, w: float = 1.0) -> None:
        """Learn one example (``x`` a dict of feature values, ``y`` its label) with sample
        weight ``w``."""
        label = _label(y)
        wf = weight_of(w)
        if "features_" not in self.__dict__:
            return self._first_call(EngineClassifier._learn_one, x, label, wf)
        return self._learn_one(x, label, wf)

    def _learn_one(self, x, label, wf: float) -> None:
        e = self.engine_
        k = self._class_index.get(label)
        if e.fitted and k is not None:  # the hot path: one encoding, one compiled call
            fs = e.features
            row = fs.encode_dict_into(x, True, e.row_buffer)  # e.encode_one(x, True), inline
            if row is not e.row_buffer:
                row = e.row_buffer = row.reshape(-1)
            if fs.version != e.synced_version:  # a new feature or category
                e.sync()
            e.learn_row(float(k), wf)
            return
        if not isinstance(x, Mapping):
            raise TypeError(f"x must be a dict of feature values, got {type(x).__name__}")
        if not e.fitted and not x:
            raise ValueError("no feature has been seen yet: an example needs at least one feature")
        if k is None and hasattr(e, "check_new_classes"):  # a new class: refused past the
            e.check_new_classes(len(self.classes_), 1)  # budget's class cap, before anything
        row = e.encode_one(x, True)  # validates x before anything is recorded
        k = self._index_of(label)
        e.sync()
        if not e.fitted:
            raise ValueError("no feature has been seen yet: an example needs at least one feature")
        e.learn_one(row, float(k), wf)

    def learn_many(self, X, y, w=None):
        """Learn the rows of ``X`` (2-d array or DataFrame) with labels ``y`` in order, with
        optional sample weights."""
        if "features_" not in self.__dict__:
            return self._first_call(EngineClassifier.learn_many, X, y, w)
        fs = self.feature_space()
        n = n_rows(X)
        labels = self._checked_labels(y, n)
        wa = check_weights(w, n)
        self._check_class_room(labels)
        Xa = fs.encode_array(X, learn=True)
        if not n:
            return self
        if Xa.shape[1] == 0 and len(fs) == 0:
            raise ValueError("no feature has been seen yet: an example needs at least one feature")
        ya = self._indices_of(labels)
        e = self.engine_
        e.sync()
        Xa = self.pad(Xa)
        e.learn(Xa, ya, e.bagging_weights(wa), wa)
        return self

    @staticmethod
    def _checked_labels(y, n: int):
        """``y`` checked: a 1-d numpy array of numbers, bools or strings as it is (its labels are
        checked by :meth:`_indices_of`, a class each), anything else as the list of
        :func:`~streamforest._labels.check_labels`."""
        a = y.to_numpy() if hasattr(y, "to_numpy") else y
        if isinstance(a, np.ndarray) and a.ndim == 1 and a.dtype.kind in "iubfU":
            if a.shape[0] != n:
                raise ValueError(f"y has {a.shape[0]} labels for {n} rows of X")
            return a
        return _labels(y, n)

    def _check_class_room(self, labels) -> None:
        """Refuse ``labels`` (from :meth:`_checked_labels`) if their new classes would be more
        than the engine's budget holds (see
        :meth:`~streamforest.engine.classifier_engine.ClassifierEngine.check_new_classes`)."""
        e = self.engine_
        cap = e.max_classes() if hasattr(e, "max_classes") else None  # (files of format 3:
        if cap is None or len(self.classes_) + len(labels) <= cap:  # an engine of either task)
            return
        if isinstance(labels, np.ndarray):
            labels = [_label(v) for v in np.unique(labels).tolist()]
        index = self._class_index
        new = {v for v in labels if v not in index}
        e.check_new_classes(len(self.classes_), len(new))

    def _indices_of(self, labels) -> np.ndarray:
        """The class indices (float64) of ``labels`` (from :meth:`_checked_labels`), new
        labels registered in order of first appearance, as one :meth:`_index_of` per label
        would: for an array, once per distinct label (its first occurrence's value)."""
        if not isinstance(labels, np.ndarray):
            return np.array([self._index_of(v) for v in labels], dtype=np.float64)
        u, first, inv = np.unique(labels, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        values = [_label(labels[first[j]]) for j in order.tolist()]  # all checked first
        idx = np.empty(u.shape[0], dtype=np.float64)
        for j, v in zip(order.tolist(), values, strict=True):
            idx[j] = self._index_of(v)
        return idx[inv.reshape(-1)]

    # --- prediction ------------------------------------------------------------------------------
    def _answers(self, X):
        """``(mean probabilities (n, K), class indices (n,) or None before learning)``."""
        Xa = self.encode_predict(X)
        n, K = Xa.shape[0], len(self.classes_)
        mean = np.zeros((n, K))
        if not self.is_fitted or not K:
            return mean, None
        e = self.engine_
        cls = np.zeros(n, dtype=np.int64)
        votes = np.zeros(K)
        # the trees' probabilities, (n_trees, rows, K), a block of rows at a time: 500 classes
        # and 25 trees took 100 MB for a chunk of 1,000 rows
        step = max(1, PREDICT_BLOCK_BYTES // (8 * e.n_trees * K))
        for i in range(0, n, step):
            PT = e.predict_trees(Xa[i : i + step], n_classes=K)
            self._combine_trees(PT, mean[i : i + step], votes, cls[i : i + step])
        return mean, cls

    @staticmethod
    def _combine_trees(PT, mean, votes, cls) -> None:
        """The forest's answer from its trees' class probabilities ``PT`` (``(T, n, K)``, a block
        of rows): ``mean[i]`` the probabilities of row ``i``, ``cls[i]`` its class (``votes``:
        ``(K,)`` scratch).  Here the arena's vote (``_core.engine.vote_rows``); a subclass whose
        trees combine otherwise overrides only this (it must work row by row: :meth:`_answers`
        calls it a block of rows at a time)."""
        _core.engine.vote_rows(PT, mean, votes, cls)

    def predict_proba(self, X) -> np.ndarray:
        """``(n, len(classes_))`` class probabilities of the rows of ``X`` (columns in the
        order of ``classes_``; no column before anything was learnt)."""
        if "features_" not in self.__dict__:
            return self._first_call(EngineClassifier.predict_proba, X, keep=False)
        return self._answers(X)[0]

    def predict(self, X) -> np.ndarray:
        """The predicted label of each row of ``X`` (majority vote of the trees); ``None``
        before anything was learnt."""
        if "features_" not in self.__dict__:
            return self._first_call(EngineClassifier.predict, X, keep=False)
        mean, cls = self._answers(X)
        if cls is None:
            return np.full(mean.shape[0], None, dtype=object)
        return self._label_array(cls)

    def _one(self, x):
        """``(mean probabilities, class index)`` of one example, or None before learning."""
        e = self.__dict__.get("engine_")
        if e is None or not e.fitted or not self.classes_:
            self._check_params()
            if not isinstance(x, Mapping):
                raise TypeError(f"x must be a dict of feature values, got {type(x).__name__}")
            return None
        row = e.encode_one(x, False)
        K = len(self.classes_)
        pt = self.__dict__.get("_pt")
        if pt is None or pt.shape != (e.n_trees, 1, K):
            pt = self._pt = np.zeros((e.n_trees, 1, K))
            self._mean = np.zeros(K)
            self._votes = np.zeros(K)
        k = _core.engine.predict_proba_one(e.arena, row, pt, self._mean, self._votes, e.leaf_memo)
        # the trees' leaves and votes of this row, for a learn_one of the same dict next
        e.remember(row)
        return self._mean, k

    def predict_proba_one(self, x: Mapping[Hashable, object]) -> dict:
        """``{label: probability}`` for one example (empty before anything was learnt)."""
        out = self._one(x)
        if out is None:
            return {}
        mean, _ = out
        return dict(zip(self.classes_, mean.tolist(), strict=True))

    def predict_one(self, x: Mapping[Hashable, object]):
        """The predicted label of one example (``None`` before anything was learnt)."""
        out = self._one(x)
        if out is None:
            return None
        return self.classes_[out[1]]

    # --- scikit-learn ----------------------------------------------------------------------------
    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)`` (weighted by ``sample_weight``)."""
        return accuracy(self.predict(X), y, sample_weight)

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(),
            input_tags=InputTags(allow_nan=True),
            requires_fit=False,
            non_deterministic=self._random_without_seed(),
        )
