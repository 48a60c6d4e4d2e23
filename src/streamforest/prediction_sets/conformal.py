"""ConformalClassifier: calibrated prediction sets for any online classifier, by online
(prequential) split conformal classification."""

from __future__ import annotations

import copy
import math
import numbers
from collections.abc import Hashable, Mapping
from typing import NamedTuple

import numpy as np

import streamforest._core as _core

from .._labels import accuracy, check_label, check_labels, label_array
from ..base import Estimator
from ..features import n_rows
from ..intervals import groups as grouping
from ..intervals.base import check_alphas, memory_budget

#: The conformity scores, by name (see :class:`ConformalClassifier`).
SCORES = {"lac": _core.sets.LAC, "aps": _core.sets.APS, "raps": _core.sets.RAPS}
#: What a model's probabilities that cannot be used raise (one example or many)
_BAD_PROBA = "the model gave probabilities that are negative or not finite"


def _py(v):
    return v.item() if isinstance(v, np.generic) else v


def _is_int(v, lo: int, hi: int | None = None) -> bool:
    return (
        isinstance(v, numbers.Integral)
        and not isinstance(v, bool)
        and v >= lo
        and (hi is None or v <= hi)
    )


def _clone(model):
    return model.clone() if hasattr(model, "clone") else copy.deepcopy(model)


def _rows(X) -> list[dict]:
    """The rows of ``X`` as dicts (DataFrame: by column name; array: by column index)."""
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        names = list(X.columns)
        return [dict(zip(names, r, strict=True)) for r in X.itertuples(index=False)]
    A = np.asarray(X)
    if A.ndim != 2:
        raise ValueError(f"X must be 2-d (n_samples, n_features), got shape {A.shape}")
    return [dict(enumerate(r)) for r in A.tolist()]


class ClassifierMixin:
    """scikit-learn classifier conventions for a streamforest classifier wrapper: accuracy as
    ``score``, classifier tags."""

    _estimator_type = "classifier"

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
        )


class Pass(NamedTuple):
    """What one pass over rows computed (see :meth:`ConformalClassifier._pass`)."""

    proba: np.ndarray  # (n, K) over the classes after the pass
    scores: np.ndarray  # (n, K + 1): every class's score; column K: an unseen label's
    thresholds: np.ndarray  # (n, L): each row's threshold at each level, before the row
    true_scores: np.ndarray | None  # (n,): the score of each row's label (None: no labels)
    known: np.ndarray  # (n,): columns that existed for each row


class ConformalClassifier(ClassifierMixin, Estimator):
    """Calibrated prediction sets for any online classifier: online (prequential) split conformal
    classification over a bounded FIFO calibration set.

    **Protocol.**  ``learn_one(x, y)`` computes the conformity score of ``y`` from the wrapped
    model's class probabilities for ``x`` *before* the model learns ``x``, adds it to the
    calibration set (the oldest score leaves once ``calibration_size`` are held), then lets the
    model learn ``(x, y)``.  The prediction set for ``x`` at significance ``alpha`` is every
    class whose score for ``x`` is at most the ``ceil((m + 1)(1 - alpha))``-th smallest of the
    ``m`` calibration scores (all classes while that rank exceeds ``m``).  Each score was computed
    by a model that had not seen its example, so on an exchangeable stream (and a model that has
    settled) the set holds the true label with probability at least ``1 - alpha`` (split
    conformal prediction, Vovk et al. 2005; Angelopoulos & Bates 2021).

    A row the model gives no probability to (it knows no class yet) adds no score: its score
    would say nothing about the model's errors.

    ``learn_many(X, y)`` asks the model for the probabilities of the whole chunk first, then adds
    the rows' scores to the calibration set one by one and lets the model learn the chunk; the
    calibration set is exactly the row-by-row one when the model's probabilities do not change
    within the chunk (a fixed model), otherwise the chunk's scores come from the model as it was
    before the chunk.  :meth:`predict_learn_many` gives each row's set from the calibration set
    as it was just before that row.

    **Conformity scores** (``conformity_score``; ``p`` the model's probabilities; classes ranked
    by decreasing probability, ties by column):

    - ``"lac"`` (least ambiguous set-valued classifier, Sadinle et al. 2019): ``1 - p_y``; the
      smallest sets on average, coverage not adaptive to how hard ``x`` is.
    - ``"aps"`` (adaptive prediction sets, Romano et al. 2020): the mass of the classes ranked
      above ``y``, plus ``U p_y`` with ``U`` uniform on [0, 1) when ``randomized`` (exact
      coverage, and a set may be empty) or ``U = 1`` (the mass down to and including ``y``;
      conservative, never empty once a class has probability).
    - ``"raps"`` (regularised APS, Angelopoulos et al. 2021): APS plus
      ``penalty * max(0, rank_y - k_reg)`` (rank from 1), which keeps sets small when the
      model's tail probabilities are noisy.

    The uniforms depend only on ``seed`` and the row's position in the stream, so chunking does
    not change them and a row predicted and then learnt uses the same one.

    **Classes** are the labels learnt so far in order of first appearance (:attr:`classes_`); a
    label never seen is learnt, not an error.  The score of a label that is not a class yet is
    that of an extra class of probability 0 ranked last (1 for LAC).  Sets and probabilities
    have one column per class (``classes_``).  The model's probabilities are normalised to sum
    to 1 over the classes (uniform when the model gives none).

    **Coverage per group.**  With ``groups``, each group keeps its own FIFO window of the last
    ``calibration_size`` scores of its rows (and the pool those of every row: the marginal
    calibration set), and a row's set uses its group's threshold, the
    ``ceil((m + 1)(1 - alpha))``-th smallest of the group's ``m`` scores; a young group (too
    few scores for that rank) borrows the pool's, a row of a missing or unseen group takes the
    pool's, and with several families a row takes the largest of its groups' thresholds.  The
    windows are the interval methods' (``src/core/intervals/groups.hpp``), on the conformity
    scores themselves; a row the model gives no probability adds no score, as in the marginal
    set.  With :class:`~streamforest.Multivalid` the thresholds are MVP's (the levels fixed by
    it; a row the model gives no probability gets every class and teaches nothing).
    :attr:`thresholds` and :attr:`calibration_scores_` stay the marginal ones.

    Parameters
    ----------
    model
        Any online classifier: ``learn_one(x, y)`` and ``predict_proba_one(x)`` (a dict of class
        to probability, River style), and for the array API ``learn_many(X, y)``,
        ``predict_proba(X)`` and ``classes_`` (the probability columns).  It is cloned when
        learning starts.  Default ``streamforest.HoeffdingTreeClassifier()``.
    conformity_score
        ``"lac"``, ``"aps"`` or ``"raps"`` (not ``score``: that is scikit-learn's accuracy
        method).
    randomized
        Randomised APS/RAPS scores (LAC ignores it).
    penalty, k_reg
        RAPS's ``lambda`` and ``k_reg``.
    calibration_size
        Scores kept (the most recent ones).
    seed
        Seed of the APS/RAPS uniforms (``None``: drawn once when learning starts).
    groups
        Sets calibrated per group (online Mondrian conformal, as the interval methods'
        ``groups``): a column name or index, a function of the row, a list of them (several
        families), or :class:`~streamforest.Multivalid` (overlapping families); the calls also
        take a ``groups=`` array.  See "Coverage per group" above.

    Examples
    --------
    >>> from river import naive_bayes  # doctest: +SKIP
    >>> cc = ConformalClassifier(model, conformity_score="lac")  # doctest: +SKIP
    >>> cc.learn_one({"a": 1.0}, "spam")  # doctest: +SKIP
    >>> cc.predict_set_one({"a": 0.9}, alpha=[0.1, 0.05])  # doctest: +SKIP
    [['spam'], ['spam', 'ham']]
    """

    def __init__(
        self,
        model=None,
        conformity_score: str = "aps",
        randomized: bool = True,
        penalty: float = 0.01,
        k_reg: int = 1,
        calibration_size: int = 1000,
        seed: int | None = None,
        groups=None,
    ):
        self.model = model
        self.conformity_score = conformity_score
        self.randomized = randomized
        self.penalty = penalty
        self.k_reg = k_reg
        self.calibration_size = calibration_size
        self.seed = seed
        self.groups = groups

    groups = None  # (models saved before groups existed)

    # --- parameters and state ----------------------------------------------------------------
    def _check_params(self) -> None:
        m = self.model
        if m is not None:
            if isinstance(m, type):
                raise TypeError(f"model must be a classifier instance, got the class {m!r}")
            if isinstance(m, ConformalClassifier):
                raise TypeError("model must be a classifier, not another ConformalClassifier")
            if not (hasattr(m, "learn_one") and hasattr(m, "predict_proba_one")):
                raise TypeError(
                    f"model must be an online classifier with learn_one and predict_proba_one, "
                    f"got {type(m).__name__}"
                )
        if self.conformity_score not in SCORES:
            raise ValueError(
                f"conformity_score must be one of {tuple(SCORES)}, got {self.conformity_score!r}"
            )
        if not isinstance(self.randomized, (bool, np.bool_)):
            raise ValueError(f"randomized must be True or False, got {self.randomized!r}")
        p = self.penalty
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p < math.inf:
            raise ValueError(f"penalty must be a finite number >= 0, got {p!r}")
        if not _is_int(self.k_reg, 0):
            raise ValueError(f"k_reg must be an integer >= 0, got {self.k_reg!r}")
        if not _is_int(self.calibration_size, 1, 10**8):
            raise ValueError(
                f"calibration_size must be an integer >= 1, got {self.calibration_size!r}"
            )
        if self.seed is not None and not _is_int(self.seed, 0, 2**63 - 1):
            raise ValueError(f"seed must be None or an integer >= 0, got {self.seed!r}")
        grouping.check_groups(self.groups)

    @staticmethod
    def _default_model():
        from ..trees import HoeffdingTreeClassifier

        return HoeffdingTreeClassifier()

    @property
    def model_(self):
        """The wrapped classifier (a clone of ``model``, made when first used)."""
        m = self.__dict__.get("_model")
        if m is None:
            self._check_params()
            m = _clone(self.model if self.model is not None else self._default_model())
            C = int(self.calibration_size)
            self._classes = []
            self._index = {}
            self._ring = np.zeros(C)
            self._sorted = np.zeros(C)
            self._cal = np.zeros(2, np.int64)  # [scores held, next ring slot]
            self._n_seen = 0
            seed = self.seed
            if seed is None:
                seed = int(np.random.SeedSequence().entropy % (2**63))
            self._seed = int(seed)
            self._model = m
        return m

    def _create_state(self) -> None:  # see Estimator._first_call
        _ = self.model_

    @property
    def classes_(self) -> list:
        """The labels learnt so far, in order of first appearance: the columns of
        :meth:`predict_proba` and :meth:`predict_sets`."""
        return list(self.__dict__.get("_classes", ()))

    @property
    def n_seen(self) -> int:
        return self.__dict__.get("_n_seen", 0)

    @property
    def calibration_scores_(self) -> np.ndarray:
        """The calibration scores held, oldest first."""
        if "_model" not in self.__dict__:
            return np.zeros(0)
        m, pos = int(self._cal[0]), int(self._cal[1])
        if m < self._ring.shape[0]:
            return self._ring[:m].copy()
        return np.concatenate([self._ring[pos:], self._ring[:pos]])

    def thresholds(self, alpha=0.1):
        """The current score threshold(s) at ``alpha`` (``inf``: every class is in the set)."""
        levels, scalar = check_alphas(alpha)
        if "_model" not in self.__dict__:
            return math.inf if scalar else [math.inf] * levels.shape[0]
        out = np.empty(levels.shape[0])
        _core.sets.thresholds(self._sorted, self._cal, levels, out)
        return float(out[0]) if scalar else out.tolist()

    # --- probabilities -------------------------------------------------------------------------
    def _array_api(self) -> bool:
        m = self._model
        return hasattr(m, "predict_proba") and hasattr(m, "learn_many")

    @staticmethod
    def _values(d, K: int, index: dict) -> list:
        """The model's ``{class: p}`` as a list over the ``K`` known classes (0 for a class it
        does not name; a class it names that is not known yet is left out)."""
        out = [0.0] * K
        if d:
            for k, p in d.items():
                j = index.get(_py(k))
                if j is not None:
                    out[j] = float(p)
        return out

    def _model_proba(self, X, n: int, one: bool, informed: bool = False):
        """The model's probabilities over the classes, ``(n, K)``, normalised; raises
        ``ValueError`` for non-finite or negative ones (the model's ``X`` checks raise first).
        With ``informed``, also whether the model gave each row any probability."""
        m = self._model
        classes, index = self._classes, self._index
        if one:
            values = self._values(m.predict_proba_one(X), len(classes), index)
            return self._one_proba(values, informed)
        if self._array_api():
            raw = np.asarray(m.predict_proba(X), dtype=np.float64)
            cols = list(getattr(m, "classes_", ()))
            if raw.ndim != 2 or raw.shape != (n, len(cols)):
                raise ValueError(
                    f"the model's predict_proba gave shape {raw.shape}, expected {(n, len(cols))} "
                    f"(rows, len(classes_))"
                )
            P = np.zeros((n, len(classes)))
            for j, c in enumerate(cols):
                k = index.get(_py(c))
                if k is not None:
                    P[:, k] = raw[:, j]
        else:
            P = np.array(
                [self._values(m.predict_proba_one(x), len(classes), index) for x in _rows(X)],
                dtype=np.float64,
            ).reshape(n, len(classes))
        if not np.all(np.isfinite(P)) or np.any(P < 0):
            raise ValueError(_BAD_PROBA)
        total = P.sum(axis=1, keepdims=True)
        if P.shape[1]:
            P = np.where(total > 0, P / np.where(total > 0, total, 1.0), 1.0 / P.shape[1])
        P = np.ascontiguousarray(P)
        return (P, total[:, 0] > 0) if informed else P

    @staticmethod
    def _one_proba(values: list, informed: bool):
        """:meth:`_model_proba` of one example whose model gave ``values`` (:meth:`_values`):
        the same numbers with three numpy calls instead of a dozen (a prequential step calls it
        twice)."""
        K = len(values)
        if not all(math.isfinite(v) and v >= 0.0 for v in values):
            raise ValueError(_BAD_PROBA)
        row = np.array(values, dtype=np.float64)
        total = float(row.sum())  # (numpy's summation, as the batch path's P.sum(axis=1))
        if K:
            if total > 0:
                row /= total
            else:
                row[:] = 1.0 / K
        P = row[None, :]
        return (P, np.array([total > 0])) if informed else P

    def _uniforms(self, start: int, n: int) -> np.ndarray:
        U = np.ones(n)
        if self.randomized and self.conformity_score != "lac":
            _core.sets.row_uniforms(self._seed, start, U)
        return U

    def _scores(self, P, known, start):
        n, k = P.shape
        S = np.empty((n, k + 1))
        _core.sets.class_scores(P, self._uniforms(start, n), known,
                                SCORES[self.conformity_score], float(self.penalty),
                                int(self.k_reg), S)  # fmt: skip
        return S

    # --- the pass ------------------------------------------------------------------------------
    def _pass(self, X, y, levels: np.ndarray, one: bool, w=None, groups=None) -> Pass:
        """Scores and thresholds (at ``levels``) of the rows of ``X`` (one example ``x`` when
        ``one``) and, given labels ``y``, add the labels' scores to the calibration set row by row
        (each row's thresholds are those before it) and let the model learn the rows.  Nothing
        changes if it raises (but a damaged group state, refused after the model learnt).
        ``groups``: the rows' group values (else read from ``X`` by the ``groups``
        parameter)."""
        m = self.model_
        n = 1 if one else n_rows(X)
        labels = None if y is None else ([check_label(y)] if one else check_labels(y, n))
        cells = self._group_cells(X, n, one, groups, learn=labels is not None)
        P, informed = self._model_proba(X, n, one, informed=True)
        classes, index = self._classes, self._index
        known = np.full(n, len(classes), np.int64)
        if labels is not None:
            classes, index = list(classes), dict(index)
            codes = np.empty(n, np.int64)
            for i, lab in enumerate(labels):
                known[i] = len(classes)
                c = index.get(lab)
                if c is None:
                    c = index[lab] = len(classes)
                    classes.append(lab)
                codes[i] = c
            if len(classes) > P.shape[1]:
                P = np.ascontiguousarray(np.pad(P, ((0, 0), (0, len(classes) - P.shape[1]))))
        S = self._scores(P, known, self.n_seen)
        L = levels.shape[0]
        if labels is None:
            if cells is not None:
                thr = self._group_thresholds(cells, np.zeros(n), informed, False, levels)
                return Pass(P, S, thr, None, known)
            thr = np.empty(L)
            _core.sets.thresholds(self._sorted, self._cal, levels, thr)
            return Pass(P, S, np.broadcast_to(thr, (n, L)), None, known)
        rows = np.arange(n)
        true = np.where(codes < known, S[rows, np.minimum(codes, S.shape[1] - 2)], S[:, -1])
        true = np.ascontiguousarray(true)
        ring, srt, cal = self._ring.copy(), self._sorted.copy(), self._cal.copy()
        thr = np.empty((n, L))
        _core.sets.calibration_pass(true, informed, levels, ring, srt, cal, thr)
        kw = {} if w is None else {"w": w}
        if one:
            m.learn_one(X, labels[0], **kw)
        else:
            m.learn_many(X, y, **kw)
        self._ring, self._sorted, self._cal = ring, srt, cal
        self._classes, self._index = classes, index
        self._n_seen += n
        if cells is not None:
            thr = self._group_thresholds(cells, true, informed, True, levels)
        return Pass(P, S, thr, true, known)

    # --- groups --------------------------------------------------------------------------------
    def _group_cells(self, X, n: int, one: bool, groups, learn: bool):
        """``(state, ids, new)``: the group state (made when the model first learns with groups)
        and the rows' cells (:meth:`GroupCalibration.lookup`; nothing changes here); None
        without groups, or while predicting before any grouped learning (marginal sets)."""
        state = self.__dict__.get("_groups")
        if groups is None and self.groups is None and state is None:
            return None
        if state is None and not learn:
            return None
        families = grouping.check_groups(self.groups)
        rule = grouping.multivalid_of(self.groups)
        names = list(getattr(self._model, "feature_names_in_", None) or [])
        cols = grouping.call_values(groups, families, X, names, n, one,
                                    None if state is None else state.n_families)  # fmt: skip
        if state is None:
            state = grouping.GroupCalibration(int(self.calibration_size), len(cols), rule)
        elif (rule is None) != (state.__dict__.get("mvp_v") is None):
            raise ValueError("the groups' calibration (Mondrian windows or Multivalid) changed "
                             "after learning started: clone the model")  # fmt: skip
        elif rule is not None and state.mvp_v.shape[:2] != (len(rule.levels()), rule.buckets):
            raise ValueError("Multivalid alphas or buckets changed after learning started")
        ids, new = state.lookup(cols, learn)
        return state, ids, new

    def _group_thresholds(self, cells, scores, use, learn: bool, levels) -> np.ndarray:
        """The rows' thresholds ``(n, L)`` from the group state (learning: the new groups
        added first, the rows' scores entering the windows)."""
        state, ids, new = cells
        rule = grouping.multivalid_of(self.groups)
        columns = rule.columns(levels) if rule is not None else None
        if learn:
            self.__dict__["_groups"] = state
            state.commit(new)
        thr = state.run_sets(ids, scores, use, learn, levels, rule, self._seed)
        return np.ascontiguousarray(thr[:, columns]) if rule is not None else thr

    @property
    def group_state_(self):
        """The group windows (``GroupCalibration``), or None."""
        return self.__dict__.get("_groups")

    @staticmethod
    def _sets(r: Pass, thr: np.ndarray) -> np.ndarray:
        """Boolean sets ``(n, L, K)``: the classes whose score is at most the threshold."""
        S = r.scores[:, :-1]
        with np.errstate(invalid="ignore"):
            return S[:, None, :] <= thr[:, :, None]

    @staticmethod
    def _argmax_labels(P, known, classes) -> np.ndarray:
        out = np.empty(P.shape[0], dtype=object)
        for i in range(P.shape[0]):
            k = int(known[i])
            out[i] = classes[int(np.argmax(P[i, :k]))] if k else None
        return out

    # --- array API -------------------------------------------------------------------------------
    def learn_many(self, X, y, w=None, groups=None) -> ConformalClassifier:
        """Learn the rows of ``X`` with labels ``y`` (see the class docstring); ``groups``: the
        rows' group values (one per row, or ``(rows, families)``)."""
        check_labels(y, n_rows(X))
        if "_model" not in self.__dict__:
            return self._first_call(ConformalClassifier.learn_many, X, y, w, groups)
        self._pass(X, y, np.zeros(0), one=False, w=w, groups=groups)
        return self

    def predict_learn_many(self, X, y, alpha=0.1, w=None, groups=None):
        """Prequential pass: for each row, the predicted label, the probabilities and the set the
        wrapper gives *before* learning it; then it learns the rows.

        Returns ``(labels, proba, sets)``: ``labels`` an object array ``(n,)`` (``None`` before
        any class), ``proba`` ``(n, K)`` and ``sets`` boolean ``(n, K)`` for one ``alpha`` or
        ``(n, len(alpha), K)`` for a list, the ``K`` columns being :attr:`classes_` after the
        call (a class first seen at row ``i`` is in no set of rows up to ``i``)."""
        levels, scalar = check_alphas(alpha)
        check_labels(y, n_rows(X))
        if "_model" not in self.__dict__:
            return self._first_call(ConformalClassifier.predict_learn_many, X, y, alpha, w,
                                    groups)  # fmt: skip
        r = self._pass(X, y, levels, one=False, w=w, groups=groups)
        sets = self._sets(r, r.thresholds)
        labels = self._argmax_labels(r.proba, r.known, self._classes)
        return labels, r.proba, (sets[:, 0, :] if scalar else sets)

    def predict_sets(self, X, alpha=0.1, groups=None) -> np.ndarray:
        """Prediction sets of the rows of ``X`` at significance ``alpha``: a boolean array
        ``(n, n_classes)`` for one level, ``(n, len(alpha), n_classes)`` for a list; column ``k``
        is ``classes_[k]``.  A smaller ``alpha`` gives a superset.  Changes nothing."""
        levels, scalar = check_alphas(alpha)
        if "_model" not in self.__dict__:
            return self._first_call(ConformalClassifier.predict_sets, X, alpha, groups,
                                    keep=False)  # fmt: skip
        r = self._pass(X, None, levels, one=False, groups=groups)
        sets = self._sets(r, np.ascontiguousarray(r.thresholds))
        return sets[:, 0, :] if scalar else sets

    def predict_proba(self, X) -> np.ndarray:
        """The model's class probabilities ``(n, n_classes)``, columns :attr:`classes_`
        (normalised)."""
        if "_model" not in self.__dict__:
            return self._first_call(ConformalClassifier.predict_proba, X, keep=False)
        return self._model_proba(X, n_rows(X), one=False)

    def predict(self, X) -> np.ndarray:
        """The most probable class of each row (``None`` before any class)."""
        P = self.predict_proba(X)
        if not P.shape[1]:
            return np.full(P.shape[0], None, dtype=object)
        return label_array(self.classes_)[np.argmax(P, axis=1)]  # the models' dtype

    # --- River-style API -------------------------------------------------------------------------
    def learn_one(self, x: Mapping[Hashable, object], y, w=None, groups=None) -> None:
        """Learn one example (see the class docstring); ``groups``: its group value (a tuple of
        one per family)."""
        check_label(y)
        if "_model" not in self.__dict__:
            return self._first_call(ConformalClassifier.learn_one, x, y, w, groups)
        self._pass(x, y, np.zeros(0), one=True, w=w, groups=groups)

    def predict_set_one(self, x: Mapping[Hashable, object], alpha=0.1, groups=None) -> list:
        """The prediction set of ``x``: a list of labels, most probable first; a list of such
        lists for a list of ``alpha``."""
        levels, scalar = check_alphas(alpha)
        if "_model" not in self.__dict__:
            return self._first_call(ConformalClassifier.predict_set_one, x, alpha, groups,
                                    keep=False)  # fmt: skip
        r = self._pass(x, None, levels, one=True, groups=groups)
        sets = self._sets(r, np.ascontiguousarray(r.thresholds))[0]
        out = [self._labels_of(r.proba[0], s) for s in sets]
        return out[0] if scalar else out

    def _labels_of(self, p, mask) -> list:
        idx = np.flatnonzero(mask)
        idx = idx[np.argsort(-p[idx], kind="stable")]
        return [self._classes[int(k)] for k in idx]

    def predict_proba_one(self, x: Mapping[Hashable, object]) -> dict:
        """``{class: probability}`` (the model's, normalised over :attr:`classes_`)."""
        if "_model" not in self.__dict__:
            return self._first_call(ConformalClassifier.predict_proba_one, x, keep=False)
        p = self._model_proba(x, 1, one=True)[0]
        return {c: float(v) for c, v in zip(self._classes, p, strict=True)}

    def predict_one(self, x: Mapping[Hashable, object]):
        """The most probable class (``None`` before any class)."""
        p = self.predict_proba_one(x)
        return max(p, key=p.get) if p else None

    # --- delegation ----------------------------------------------------------------------------
    @property
    def memory_budget_bytes(self) -> int | None:
        """The wrapped classifier's budget (its ``max_memory_mb``) in bytes; 0 before learning.
        The score ring and group windows come on top (``memory_bytes`` counts them)."""
        m = self.__dict__.get("_model")
        return 0 if m is None else memory_budget([m])

    @property
    def memory_bytes(self) -> int:
        if "_model" not in self.__dict__:
            return 0
        own = self._ring.nbytes + self._sorted.nbytes + self._cal.nbytes
        g = self.__dict__.get("_groups")
        own += g.nbytes() if g is not None else 0
        return own + int(getattr(self._model, "memory_bytes", 0) or 0)
