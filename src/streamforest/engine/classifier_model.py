"""Both APIs (River-style dicts, array batches) of a classifier whose trees run in an engine.

:class:`EngineClassifier` is the base of :class:`~streamforest.HoeffdingTreeClassifier`,
:class:`~streamforest.ACTSERClassifier` (engines of one tree) and
:class:`~streamforest.ACTSEREnsembleClassifier`; a subclass says how its engine is made
(:meth:`EngineClassifier._make_engine`).  Features are encoded as for the regressors
(:class:`~streamforest.features.FeatureSpace`: strings are nominal).

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

from .._labels import accuracy, label_array
from .._labels import check_label as _label
from .._labels import check_labels as _labels
from ..base import Estimator
from ..features import FeatureSpace, check_weights, n_rows, weight_of
from . import class_kernels

_NO_MEMO = np.zeros((4, 0))  # no per-tree memo (see engine.class_kernels.learn_one)


class EngineClassifier(Estimator):
    """Base of the classifiers run by an :class:`~streamforest.engine.core.Engine`."""

    # --- hooks -----------------------------------------------------------------------------------
    def _check_params(self) -> None:
        pass

    def _nominal(self):
        return None

    def _make_engine(self, features: FeatureSpace):
        raise NotImplementedError

    # --- state -----------------------------------------------------------------------------------
    @property
    def is_fitted(self) -> bool:
        e = self.__dict__.get("engine_")
        return e is not None and e.fitted

    def feature_space(self) -> FeatureSpace:
        fs = self.__dict__.get("features_")
        if fs is None:
            self._check_params()
            fs = FeatureSpace(self._nominal())
            self.engine_ = self._make_engine(fs)
            self.features_ = fs
            self.classes_ = []
            self._class_index = {}
        return fs

    _create_state = feature_space  # see Estimator._first_call

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
        d.pop("_labels_cache", None)
        d.pop("_pt", None)
        d.pop("_mean", None)
        d.pop("_votes", None)
        d.pop("_cmemo", None)
        d.pop("_hint", None)
        return d

    def pad(self, Xa: np.ndarray) -> np.ndarray:
        p = len(self.features_)
        if Xa.shape[1] < p:
            Xa = np.hstack([Xa, np.full((Xa.shape[0], p - Xa.shape[1]), np.nan)])
        return np.ascontiguousarray(Xa, dtype=np.float64)

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
        fs = self.features_
        h = self.__dict__.get("_hint")  # the memo of predict_one(x) just before (see _one)
        self._hint = None
        if e.fitted and label in self._class_index:  # the hot path
            row = e.encode_one(x, True)
            if fs.version != e.synced_version:
                e.sync()
            M = self._cmemo if h is not None and h is fs._memo and row is e.row_buffer else _NO_MEMO
            e.learn_one(
                row, float(self._class_index[label]), wf, kernel=class_kernels.learn_one, extra=(M,)
            )
            return
        if not isinstance(x, Mapping):
            raise TypeError(f"x must be a dict of feature values, got {type(x).__name__}")
        if not e.fitted and not x:
            raise ValueError("no feature has been seen yet: an example needs at least one feature")
        row = e.encode_one(x, True)  # validates x before anything is recorded
        k = self._index_of(label)
        e.sync()
        if not e.fitted:
            raise ValueError("no feature has been seen yet: an example needs at least one feature")
        e.learn_one(row, float(k), wf, kernel=class_kernels.learn_one, extra=(_NO_MEMO,))

    def learn_many(self, X, y, w=None):
        """Learn the rows of ``X`` (2-d array or DataFrame) with labels ``y`` in order, with
        optional sample weights."""
        if "features_" not in self.__dict__:
            return self._first_call(EngineClassifier.learn_many, X, y, w)
        fs = self.feature_space()
        self._hint = None
        n = n_rows(X)
        labels = self._checked_labels(y, n)
        wa = check_weights(w, n)
        Xa = fs.encode_array(X, learn=True)
        if not n:
            return self
        if Xa.shape[1] == 0 and len(fs) == 0:
            raise ValueError("no feature has been seen yet: an example needs at least one feature")
        ya = self._indices_of(labels)
        e = self.engine_
        e.sync()
        Xa = self.pad(Xa)
        W = e.bagging_weights(wa)
        e.run(lambda A, t, i: class_kernels.learn_rows(A, t, Xa, ya, W, i), n, rows=(Xa, ya, wa))
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
    def _tree_probas(self, Xa: np.ndarray) -> np.ndarray:
        """``(n_trees, n, K)`` class probabilities of each tree."""
        e = self.engine_
        K = len(self.classes_)
        PT = np.zeros((e.n_trees, Xa.shape[0], K))
        if Xa.shape[0]:
            e.each_tree(lambda t: class_kernels.predict_proba_rows(e.arena, t, Xa, PT), Xa.shape[0])
        return PT

    def _answers(self, X):
        """``(mean probabilities (n, K), class indices (n,) or None before learning)``."""
        Xa = self.pad(self.feature_space().encode_array(X, learn=False))
        n, K = Xa.shape[0], len(self.classes_)
        mean = np.zeros((n, K))
        if not self.is_fitted or not K:
            return mean, None
        PT = self._tree_probas(Xa)
        cls = np.zeros(n, dtype=np.int64)
        class_kernels.vote_rows(PT, mean, np.zeros(K), cls)
        return mean, cls

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
            self._cmemo = np.zeros((4, e.n_trees))
        k = e.call(
            class_kernels.predict_proba_one,
            (e.arena, row, pt, self._mean, self._votes, self._cmemo),
        )
        # the trees' leaves and votes of this row, for a learn_one of the same dict next (its
        # encoding then returns this very buffer, the FeatureSpace's memo unchanged)
        m = self.features_._memo
        self._hint = m if row is e.row_buffer and m[1] is row else None
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

    # --- inspection ------------------------------------------------------------------------------
    @property
    def n_features_in_(self) -> int:
        fs = self.__dict__.get("features_")
        return len(fs) if fs is not None else 0

    @property
    def memory_bytes(self) -> int:
        """Bytes of the trees' compiled state (allocated capacity)."""
        return self.engine_.memory_bytes if self.is_fitted else 0

    def _alternate_counts(self) -> dict:
        """Alternate subtrees started, adopted and discarded, summed over the trees."""
        from ..tree_kinds import state

        out = {"started": 0, "adopted": 0, "discarded": 0, "live": 0}
        if self.is_fitted:
            e = self.engine_
            for t in range(e.n_trees):
                out["started"] += e.int_of(t, state.I_ALT_STARTED)
                out["adopted"] += e.int_of(t, state.I_ALT_SWAPPED)
                out["discarded"] += e.int_of(t, state.I_ALT_DISCARDED)
                out["live"] += e.int_of(t, state.I_NALTS)
        return out

    @property
    def alternate_stats(self) -> dict:
        """Counts of the trees' change adaptation: alternate subtrees ``started`` (a node's
        detector fired), ``adopted``, ``discarded`` and ``live`` now."""
        return self._alternate_counts()
